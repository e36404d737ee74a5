"""mini as one ONNX graph, ``(input_ids, attention_mask) -> logits``: what ONNX Runtime runs on CPUs.

The graph is traced from the same code that scores with torch (``FastMiniEncoder`` with plain products,
then ``head_outputs``), so the two paths compute the same function; ``onnx_graph.py`` builds it once per
machine and caches it. This is the only module of the ONNX path that imports torch.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import onnx
import torch

from .fast_encoder import FastMiniEncoder, layers_read, read_mini
from .heads import head_outputs, token_terms
from .onnx_signature import ATTENTION_MASK, INPUT_IDS, LOGITS, PER_TOKEN, TERMS_BIAS

#: ONNX opset of the export (ONNX Runtime >= 1.14 runs it).
OPSET = 17


class MiniLogits(torch.nn.Module):
    """mini's calibrated logit per row of right-padded ``input_ids``, as a traceable module."""

    def __init__(self, heads_path: Path, base_path: Path) -> None:
        super().__init__()
        self.heads, tensors, config = read_mini(heads_path, base_path)
        self.encoder = FastMiniEncoder(tensors, config["encoder"], config["num_layers"], prepacked=False)
        self.layers = layers_read(config)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        states = self.encoder(input_ids, attention_mask, self.layers)
        return head_outputs(self.heads, *states, input_ids, attention_mask, add_up=ordered_sum).logits


class MiniTerms(MiniLogits):
    """mini's explanation as a traceable module: each token's share of the logit (``token_terms``), what the
    tokens leave (the heads' bias and float32 rounding) and the logit, as ``explain`` computes them on torch."""

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
        states = self.encoder(input_ids, attention_mask, self.layers)
        terms = token_terms(self.heads, *states, input_ids, attention_mask)
        return terms.per_token, terms.bias + terms.rounding, terms.output.logits


#: What each graph computes: its module and its outputs (``"logits"``: scoring; ``"terms"``: explanations).
GRAPHS = {"logits": (MiniLogits, (LOGITS,)), "terms": (MiniTerms, (PER_TOKEN, TERMS_BIAS, LOGITS))}


def ordered_sum(values: torch.Tensor, dim: int) -> torch.Tensor:
    """``values.sum(dim)`` added up element after element (the last of a running sum). ONNX Runtime's
    ReduceSum (and a product with ones) add a row up in an order that follows its memory alignment, so a
    caption's score would depend on its place in the batch; a running sum's order does not."""
    return torch.cumsum(values, dim=dim).select(dim, -1)


def export_graph(heads_path: Path, base_path: Path, kind: str = "logits") -> bytes:
    """mini's graph of ``kind`` (see :data:`GRAPHS`; base weights and heads inside it) as ONNX bytes; batch and
    width stay dynamic."""
    module, outputs = GRAPHS[kind]
    input_ids = torch.tensor([[101, 2000, 2001, 102, 0], [101, 2003, 2004, 2005, 102]])
    dynamic = {name: {0: "batch", 1: "tokens"} for name in (INPUT_IDS, ATTENTION_MASK)}
    dynamic_outputs = {name: {0: "batch", 1: "tokens"} if name == PER_TOKEN else {0: "batch"} for name in outputs}
    graph = io.BytesIO()
    with warnings.catch_warnings():  # the TorchScript exporter's deprecation notices: nothing a user can act on
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            module(heads_path, base_path).eval(),
            (input_ids, (input_ids != 0).long()),
            graph,
            input_names=[INPUT_IDS, ATTENTION_MASK],
            output_names=list(outputs),
            dynamic_axes={**dynamic, **dynamic_outputs},
            opset_version=OPSET,
            dynamo=False,  # the TorchScript exporter: no onnxscript dependency, and this graph has no control flow
        )
    return graph.getvalue()


def save_graph(heads_path: Path, base_path: Path, graph: Path, weights_name: str) -> None:
    """Write mini's graph to ``graph`` with its weights in the file ``weights_name`` beside it (ONNX external
    data, which ONNX Runtime maps into memory; ``onnx_graph.py`` says why)."""
    onnx.save_model(
        onnx.load_from_string(export_graph(heads_path, base_path)),
        graph,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=weights_name,
        convert_attribute=True,  # the TorchScript exporter writes the weights as Constant nodes, not initializers
    )
