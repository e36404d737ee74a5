"""Build the ONNX graphs that ship with the package (scoring and explanations): mini's operators and heads,
without the base weights.

Run at release time (``python training_scripts/build_mini_graph.py``), never on a user's machine, so that no
user traces mini from torch. The graph is the one :func:`~.onnx_export.export_graph` traces, rewritten so
that each base-encoder tensor it holds becomes an initializer named by its key in the base
``model.safetensors`` and left empty (declared as external data): ``shipped_graph.py`` supplies it at session
creation from the installed base weights, read with ``safetensors.numpy``. A tensor the encoder derives
from base tensors (Q, K and V fused into one product; the token-type row) becomes the exact operator that
derives it (``Concat``, ``Gather``), which ONNX Runtime folds into a constant as the session is made, so the
session computes what the traced graph computes, bit for bit (``tests/test_shipped_graph.py``). The heads
(a few KB) stay inside the graph. This module imports torch and onnx (the ``torch`` extra).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

from .fast_encoder import encoder_keys
from .files import BASE_WEIGHTS_FILE, file_sha256, read_heads_payload
from .onnx_export import export_graph
from .shipped_graph import (
    EXTERNAL_LOCATION,
    GRAPH_FILE,
    GRAPH_VERSION,
    MANIFEST_FILE,
    TERMS_FILE,
    shipped_graph_folder,
)

#: Tensors smaller than this stay inside the graph when no base tensor matches them (the heads).
MAX_EMBEDDED_ELEMENTS = 65_536


def _base_tensors(base_path: Path, num_layers: int) -> dict[str, np.ndarray]:
    """The base tensors the encoder reads, by their key in the base ``model.safetensors``."""
    tensors = load_file(str(base_path / BASE_WEIGHTS_FILE))
    keys = {key.removeprefix("bert."): key for key in tensors}
    return {keys[name]: tensors[keys[name]] for name in encoder_keys(num_layers)}


def _derivations(base: dict[str, np.ndarray]) -> dict[bytes, tuple[str, list[str]]]:
    """Bytes of every tensor the traced graph may hold -> ``(operator, base keys)`` that make it exactly."""
    made: dict[bytes, tuple[str, list[str]]] = {}
    for key, value in base.items():
        made.setdefault(value.tobytes(), ("Identity", [key]))
        if key.endswith("token_type_embeddings.weight"):
            made[value[0].tobytes()] = ("Gather", [key])
    for key in base:
        if ".attention.self.query." in key:
            parts = [key.replace(".query.", f".{name}.") for name in ("query", "key", "value")]
            made[np.concatenate([base[part] for part in parts]).tobytes()] = ("Concat", parts)
    return made


def _placeholder(key: str, value: np.ndarray) -> TensorProto:
    """An initializer of ``value``'s type and shape whose data is supplied when the session is made."""
    tensor = TensorProto(name=key, data_type=helper.np_dtype_to_tensor_dtype(value.dtype), dims=list(value.shape))
    tensor.data_location = TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", EXTERNAL_LOCATION
    return tensor


def weights_free_graph(graph_bytes: bytes, base: dict[str, np.ndarray]) -> onnx.ModelProto:
    """The traced graph with its base tensors replaced as the module docstring says; refuses a large constant
    that no base tensor makes (it would ship weights, or run without them)."""
    model = onnx.load_from_string(graph_bytes)
    made = _derivations(base)
    nodes, used = [], {}
    for node in model.graph.node:
        value = next((attribute.t for attribute in node.attribute if attribute.name == "value"), None)
        array = numpy_helper.to_array(value) if node.op_type == "Constant" and value is not None else None
        derivation = made.get(array.tobytes()) if array is not None and array.dtype == np.float32 else None
        if derivation is None:
            if array is not None and array.size > MAX_EMBEDDED_ELEMENTS:
                raise ValueError(f"the traced graph holds a {list(array.shape)} constant that no base tensor makes")
            nodes.append(node)
            continue
        operator, keys = derivation
        used.update((key, base[key]) for key in keys)
        output = node.output[0]
        if operator == "Concat":
            nodes.append(helper.make_node("Concat", keys, [output], name=node.name, axis=0))
        elif operator == "Gather":
            row = f"{output}_row"
            nodes.append(helper.make_node("Constant", [], [row], value=numpy_helper.from_array(np.array(0), row)))
            nodes.append(helper.make_node("Gather", [keys[0], row], [output], name=node.name, axis=0))
        else:
            nodes.append(helper.make_node("Identity", keys, [output], name=node.name))
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    model.graph.initializer.extend(_placeholder(key, value) for key, value in sorted(used.items()))
    return model


def build_shipped_graph(heads_path: Path, base_path: Path, folder: Path | None = None) -> dict:
    """Write the scoring graph, the explanation graph and their manifest (sha256 of both graphs, the heads and
    the base weights; the base keys the graphs take) into ``folder`` (default: the package's); returns the
    manifest."""
    folder = folder or shipped_graph_folder()
    num_layers = int(read_heads_payload(heads_path)["config"]["num_layers"])
    base = _base_tensors(base_path, num_layers)
    keys: set[str] = set()
    for kind, name in (("logits", GRAPH_FILE), ("terms", TERMS_FILE)):
        model = weights_free_graph(export_graph(heads_path, base_path, kind), base)
        (folder / name).write_bytes(model.SerializeToString())
        keys.update(initializer.name for initializer in model.graph.initializer)
    manifest = {
        "graph_version": GRAPH_VERSION,
        "sha256": {
            "graph": file_sha256(folder / GRAPH_FILE),
            "terms_graph": file_sha256(folder / TERMS_FILE),
            "heads": file_sha256(heads_path),
            "base_weights": file_sha256(base_path / BASE_WEIGHTS_FILE),
        },
        "base_keys": sorted(keys),
    }
    (folder / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest
