"""Would int8 keep a neural scorer within 0.01 of fp32? Simulated int8 error on trained weights.

Int8 products run about twice as fast as bf16 on CPUs with AMX (see
``cpu_matmul_ceiling.py``), so int8 is the obvious route past the bf16 ceiling.
The speed question only matters if the scores survive it. This measures that
first, without any int8 kernel: every chosen linear layer rounds its weights to
int8 (symmetric, one scale per output channel) and, for W8A8, its input
activations too, then multiplies in fp32. That gives the same numbers an int8
kernel with int32 accumulation would. The activation scale comes either from
each token's own maximum ("per_token", the most accurate dynamic scheme) or from
the whole batch ("per_tensor").

The model is the student's trained stand-in (``benchmarks.speed.proxy_student``; a random
encoder's outputs barely vary, so its error would mean nothing) or, with ``--model mini``,
mini itself (its real base weights and shipped heads; captions normalized and cut at 128
tokens, as its first window reads them). Scores are compared with the fp32 module on the
shipped dev captions plus synthetic LAION-like ones, and ``bf16`` (the shipped fast default)
is listed for scale where the CPU multiplies bf16 natively (elsewhere it is skipped, and the
JSON says why).

    python benchmarks/speed/int8_deviation.py
    python benchmarks/speed/int8_deviation.py --model mini
"""

from __future__ import annotations

import argparse
import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from proxy_student import trained_proxy_student
from result_file import command_line
from score_differences import abs_differences
from torch import nn

from modeling_icc import NeuralScorer
from modeling_icc.models.mini.files import base_model_path, prepare_text
from modeling_icc.models.mini.modeling_mini import MiniICCModel
from modeling_icc.scoring.devices import bf16_unavailable_reason
from modeling_icc.utils.provenance import environment, synthetic_captions, write_json
from modeling_icc.utils.shipped_data import dev_split

RESULTS = Path(__file__).resolve().parent / "results"
ACCURACY_RULE = 0.01


def int8_round(tensor: torch.Tensor, dims: tuple[int, ...] | None) -> torch.Tensor:
    """Symmetric int8 rounding with one scale per slice over ``dims`` (None: one scale in all)."""
    peak = tensor.abs().amax() if dims is None else tensor.abs().amax(dim=dims, keepdim=True)
    scale = peak.clamp_min(1e-12) / 127
    return (tensor / scale).round().clamp(-127, 127) * scale


class SimulatedInt8Linear(nn.Module):
    """A linear layer computed as an int8 kernel would: int8 weights and optionally int8 inputs."""

    def __init__(self, linear: nn.Linear, activations: str | None) -> None:
        super().__init__()
        self.weight = nn.Parameter(int8_round(linear.weight.detach(), dims=(1,)), requires_grad=False)
        self.bias = linear.bias
        self.activations = activations

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.activations == "per_token":
            x = int8_round(x, dims=(-1,))
        elif self.activations == "per_tensor":
            x = int8_round(x, dims=None)
        return F.linear(x, self.weight, self.bias)


def layer_groups(encoder: str, layers: int) -> dict[str, list[str]]:
    """Module names of the encoder's linear layers: attention (Q, K, V, output) and feed-forward."""
    attention, feed_forward = [], []
    for index in range(layers):
        prefix = f"{encoder}.encoder.layer.{index}"
        attention += [f"{prefix}.attention.self.{name}" for name in ("query", "key", "value")]
        attention.append(f"{prefix}.attention.output.dense")
        feed_forward += [f"{prefix}.intermediate.dense", f"{prefix}.output.dense"]
    return {"attention": attention, "feed_forward": feed_forward, "all": attention + feed_forward}


def simulated(model: nn.Module, names: list[str], activations: str | None) -> nn.Module:
    quantized = copy.deepcopy(model)
    for name in names:
        parent, _, child = name.rpartition(".")
        owner = quantized.get_submodule(parent)
        setattr(owner, child, SimulatedInt8Linear(getattr(owner, child), activations))
    return quantized


def deviation(scores: np.ndarray, reference: np.ndarray) -> dict[str, float | bool]:
    error = abs_differences(scores, reference)
    return {
        "max_abs_deviation": float(error.max()),
        "p99_abs_deviation": float(np.percentile(error, 99)),
        "mean_abs_deviation": float(error.mean()),
        "within_rule": bool(error.max() <= ACCURACY_RULE),
    }


@dataclass
class Subject:
    """The fp32 model, its scores of the texts, its bf16 scores, and its linear layers by group."""

    model: nn.Module
    scores: Callable[[nn.Module], np.ndarray]
    bf16_scores: Callable[[], np.ndarray]
    groups: dict[str, list[str]]


def proxy_student(texts: list[str]) -> Subject:
    """The student's trained stand-in; bf16 through the shipped fast encoder."""
    model, tokenizer = trained_proxy_student()

    def scores(candidate: nn.Module, fast: bool = False) -> np.ndarray:
        return NeuralScorer(candidate, tokenizer, model_id="proxy", progress=False, fast=fast).score(texts, raw=True)

    return Subject(
        model,
        scores,
        lambda: scores(copy.deepcopy(model).to(torch.bfloat16), fast=True),
        layer_groups("roberta", model.config.num_hidden_layers),
    )


def mini(texts: list[str]) -> Subject:
    """mini with its shipped heads, scored by the module's forward; bf16: its encoder in bf16, heads in fp32."""
    from transformers import AutoTokenizer

    model = MiniICCModel.from_base_and_heads().float().eval()
    tokenizer = AutoTokenizer.from_pretrained(str(base_model_path()))
    prepared = [prepare_text(text, model.config.lowercase) for text in texts]

    @torch.inference_mode()
    def scores(candidate: nn.Module) -> np.ndarray:
        out = []
        for start in range(0, len(prepared), 64):
            batch = tokenizer(
                prepared[start : start + 64],
                padding=True,
                truncation=True,
                max_length=model.config.max_length,
                return_tensors="pt",
            )
            out.append(candidate(batch["input_ids"], batch["attention_mask"]).scores.float())
        return torch.cat(out).numpy()

    def bf16_scores() -> np.ndarray:
        candidate = copy.deepcopy(model)
        candidate.bert.to(torch.bfloat16)
        return scores(candidate)

    return Subject(model, scores, bf16_scores, layer_groups("bert", model.config.num_layers))


MODELS = {
    "proxy_student": (proxy_student, "trained proxy student (all-MiniLM-L6-v2 encoder in ICCForConcreteness)"),
    "mini": (mini, "mini: all-MiniLM-L6-v2's first 4 layers with the shipped heads"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=sorted(MODELS), default="proxy_student")
    parser.add_argument("--synthetic", type=int, default=2048, help="synthetic captions added to the dev split")
    parser.add_argument("--out", type=Path, default=None, help="default: results/int8_deviation[_mini].json")
    args = parser.parse_args()
    out = args.out or RESULTS / ("int8_deviation.json" if args.model == "proxy_student" else "int8_deviation_mini.json")

    texts = [row["caption"] for row in dev_split()] + synthetic_captions(args.synthetic, seed=1)
    build, description = MODELS[args.model]
    subject = build(texts)
    reference = subject.scores(subject.model)
    no_bf16 = bf16_unavailable_reason(torch.device("cpu"))
    results = {}
    if no_bf16 is None:
        results["bf16 (shipped default)"] = deviation(subject.bf16_scores(), reference)
    for scheme, activations in (
        ("W8 weights only", None),
        ("W8A8 per_token", "per_token"),
        ("W8A8 per_tensor", "per_tensor"),
    ):
        for group, names in subject.groups.items():
            candidate = simulated(subject.model, names, activations)
            results[f"{scheme}, {group}"] = deviation(subject.scores(candidate), reference)

    payload = {
        "benchmark": "int8_deviation",
        "command": command_line("int8_deviation"),
        "model": description,
        "reference": "the transformers module in fp32",
        "accuracy_rule": ACCURACY_RULE,
        "n_captions": len(texts),
        "fp32_score_sd": float(reference.std()),
        "environment": environment("cpu"),
        "results": results,
        "skipped": {} if no_bf16 is None else {"bf16 (shipped default)": no_bf16},
    }
    write_json(out, payload)
    for name, row in results.items():
        verdict = "ok" if row["within_rule"] else "over the rule"
        print(f"{name:34s} max {row['max_abs_deviation']:.4f}  p99 {row['p99_abs_deviation']:.4f}  {verdict}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
