"""The ONNX graphs of the shipped mini, and the verified files they run with: no torch, no build, no cache.

The package ships mini's graphs without the base encoder's weights (``data/mini_graph.onnx`` scores,
``data/mini_terms.onnx`` explains; built at release time by ``graph_release.py``) and a manifest
(``data/mini_graph.json``) with the sha256 of both graphs, of the shipped heads and of the base
``model.safetensors`` they were built on. Each load reads the graph and the base
weights once into memory, checks those bytes against the manifest (and the heads file too), and makes the
session from the same bytes: what runs is what was hashed, so an edited graph, heads file or base weights
file never runs. The check costs about 0.1 s (sha256 of the 90 MB base weights) on a 2-core CPU.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from ...utils.errors import CheckpointError
from .files import BASE_PACKAGE, BASE_WEIGHTS_FILE, base_model_path, shipped_heads_path

GRAPH_FILE = "mini_graph.onnx"
#: The explanation graph (``explain``: each token's share of the logit), built and checked with the other.
TERMS_FILE = "mini_terms.onnx"
MANIFEST_FILE = "mini_graph.json"
#: Where the graph says its base tensors are: nowhere on disk (supplied when the session is made).
EXTERNAL_LOCATION = "supplied-at-session-creation"
#: Bumped whenever the release build changes what the graph computes or how it takes its weights.
GRAPH_VERSION = 3
#: What a user runs when a shipped file does not match the manifest.
REINSTALL = "pip install --force-reinstall --no-deps"


def shipped_graph_folder() -> Path:
    """The folder of the shipped graph, its manifest and the heads (``models/mini/data``)."""
    return Path(os.fspath(resources.files("modeling_icc.models.mini") / "data"))


@dataclass(frozen=True)
class VerifiedGraph:
    """The shipped graphs' bytes (scoring, explanations) and the base tensors they take (by name), all checked
    against the manifest."""

    graph: bytes
    terms: bytes
    initializers: dict[str, np.ndarray]


def read_manifest(folder: Path | None = None) -> dict:
    """The shipped manifest (see the module docstring)."""
    path = (folder or shipped_graph_folder()) / MANIFEST_FILE
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        [manifest["sha256"][name] for name in ("graph", "terms_graph", "heads", "base_weights")]
        manifest["base_keys"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise CheckpointError(
            f"mini's graph manifest {path} is missing or unreadable ({error}): {REINSTALL} icc-concreteness"
        ) from None
    return manifest


def _checked_bytes(path: Path, expected: str, what: str, fix: str) -> bytes:
    """The bytes of ``path`` when their sha256 is ``expected``; else one line saying what to reinstall."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CheckpointError(f"{what} {path} cannot be read ({error.strerror or error}): {fix}") from None
    found = hashlib.sha256(data).hexdigest()
    if found != expected:
        raise CheckpointError(
            f"{what} {path} does not match the sha256 the package ships ({found[:16]}..., expected "
            f"{expected[:16]}...): it is never run; {fix}"
        )
    return data


def verified_graph(base_path: Path | None = None, folder: Path | None = None) -> VerifiedGraph:
    """The shipped graph and its base tensors, each file checked against the manifest (``folder``: where the
    graph, manifest and heads are; default: the package's)."""
    from safetensors import SafetensorError
    from safetensors.numpy import load

    folder = folder or shipped_graph_folder()
    manifest = read_manifest(folder)
    hashes = manifest["sha256"]
    ours = f"{REINSTALL} icc-concreteness"
    heads = folder / shipped_heads_path().name
    _checked_bytes(heads, hashes["heads"], "mini's heads file", ours)
    graph = _checked_bytes(folder / GRAPH_FILE, hashes["graph"], "mini's ONNX graph", ours)
    terms = _checked_bytes(folder / TERMS_FILE, hashes["terms_graph"], "mini's ONNX explanation graph", ours)
    weights = (base_path or base_model_path()) / BASE_WEIGHTS_FILE
    data = _checked_bytes(weights, hashes["base_weights"], "mini's base weights", f"{REINSTALL} {BASE_PACKAGE}")
    try:
        tensors = load(data)
    except SafetensorError as error:  # only if the manifest vouched for a file safetensors cannot read
        raise CheckpointError(f"mini's base weights {weights} could not be read: {error}") from None
    del data
    return VerifiedGraph(graph, terms, {key: tensors[key] for key in manifest["base_keys"]})
