"""Would ONNX Runtime make mini faster on this CPU? Today's torch path against ONNX Runtime, in one run.

mini's encoder (the 4 MiniLM layers its heads read) is exported with ``torch.onnx.export`` and run by ONNX
Runtime's CPU provider in three forms: fp32 as exported, fp32 with ONNX Runtime's BERT fusions (attention,
GELU, skip-LayerNorm), and int8 (``quantize_dynamic``, weights int8). Everything else is today's code: the
same normalization, Rust tokenizer, length-sorted batches and heads (fp32, in torch); only the encoder's
forward is swapped. Throughput: ``--n`` CC3M validation captions, the variants alternating in each repeat,
medians of ``--repeats``. Scores: each variant's against today's fp32 scores on the first 2,000 of them.
Import time of ``torch`` and of ``onnxruntime``, each in a fresh interpreter (median of ``--repeats``):
what a torch-free CPU path could save at start-up.

This is the experiment that chose the graph mini now runs on ONNX Runtime (fp32 as exported; the fused
and int8 forms lost); ``mini_runtimes.py`` measures the shipped runtime against torch.

    python benchmarks/speed/mini_onnx_runtime.py --n 20000 --repeats 3
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from arguments import timing_parser
from result_file import write_result
from score_differences import abs_differences

from modeling_icc import load_scorer
from modeling_icc.models.mini.heads import head_outputs
from modeling_icc.utils.shipped_data import cc3m_distinct_captions

RESULTS = Path(__file__).resolve().parent / "results"
#: Captions whose scores are compared with today's fp32 scores.
SCORED = 2000


class EncoderStates(torch.nn.Module):
    """The token states mini's heads read (layer ``layer`` of the encoder), as an exportable module."""

    def __init__(self, model: torch.nn.Module, layer: int) -> None:
        super().__init__()
        self.model, self.layer = model, layer

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model.hidden_layers(input_ids, attention_mask)[self.layer]


def export_variants(scorer, folder: Path) -> dict[str, Path]:
    """The encoder as ONNX files: fp32, fp32 with BERT fusions, int8 weights."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer

    (layer,) = set(scorer.layers)
    ids = torch.tensor([[101, 2000, 2001, 102, 0, 0]])
    plain = folder / "mini_fp32.onnx"
    torch.onnx.export(
        EncoderStates(scorer.model.eval(), layer),
        (ids, (ids != 0).long()),
        plain,
        input_names=["input_ids", "attention_mask"],
        output_names=["states"],
        dynamic_axes={name: {0: "batch", 1: "tokens"} for name in ("input_ids", "attention_mask", "states")},
        opset_version=17,
        dynamo=False,
    )
    encoder = scorer.config["encoder"]
    fused = optimizer.optimize_model(
        str(plain), model_type="bert", num_heads=encoder["num_attention_heads"], hidden_size=encoder["hidden_size"]
    )
    fused.save_model_to_file(str(folder / "mini_fp32_fused.onnx"))
    quantize_dynamic(plain, folder / "mini_int8.onnx", weight_type=QuantType.QInt8)
    return {
        "onnxruntime_fp32": plain,
        "onnxruntime_fp32_fused": folder / "mini_fp32_fused.onnx",
        "onnxruntime_int8": folder / "mini_int8.onnx",
    }


def ort_forward(scorer, path: Path, threads: int):
    """``(input_ids, attention_mask) -> scores`` with the encoder run by ONNX Runtime, the heads as today."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def forward(input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        feed = {"input_ids": input_ids.numpy(), "attention_mask": attention_mask.numpy()}
        states = torch.from_numpy(session.run(["states"], feed)[0])
        return head_outputs(scorer._heads, states, states, input_ids, attention_mask).scores

    return forward


def score_with(scorer, texts: list[str], forward) -> tuple[np.ndarray, float]:
    """Scores of ``texts`` through mini's tokenizer and batches with ``forward`` (None: today's encoder)."""
    prepared = [scorer._prepare(text) for text in texts]
    if forward is not None:
        scorer._forward = lambda output="scores": forward
    try:
        start = time.perf_counter()
        scores = scorer._run(prepared, scorer._token_spec, "scores")
        return scores, time.perf_counter() - start
    finally:
        scorer.__dict__.pop("_forward", None)


def import_seconds(module: str, repeats: int) -> float:
    """Median wall time of ``python -c 'import MODULE'`` in a fresh interpreter."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    n_help = "CC3M validation captions scored per run"
    args = timing_parser(__doc__, RESULTS / "mini_onnx_runtime.json", n=20_000, repeats=3, n_help=n_help).parse_args()
    import onnxruntime

    scorer = load_scorer("mini", device="cpu", dtype="float32")
    texts = cc3m_distinct_captions()[: args.n]
    threads = torch.get_num_threads()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as scratch:
        forwards = {"torch (today)": None}
        forwards |= {
            name: ort_forward(scorer, path, threads) for name, path in export_variants(scorer, Path(scratch)).items()
        }
        reference = score_with(scorer, texts[:SCORED], None)[0]
        seconds: dict[str, list[float]] = {name: [] for name in forwards}
        deviation = {}
        for repeat in range(args.repeats):
            for name, forward in forwards.items():
                scores, elapsed = score_with(scorer, texts, forward)
                seconds[name].append(elapsed)
                if repeat == 0:
                    deviation[name] = float(abs_differences(scores[:SCORED], reference).max())
                print(f"{name:24s} {len(texts) / elapsed:8.0f} captions/s", flush=True)
    base = statistics.median(seconds["torch (today)"])
    results = {
        name: {
            "captions_per_s": len(texts) / statistics.median(times),
            "throughput_vs_torch": base / statistics.median(times),
            "runs_s": times,
            "max_abs_score_difference_vs_torch_fp32": deviation[name],
        }
        for name, times in seconds.items()
    }
    imports = {module: import_seconds(module, args.repeats) for module in ("torch", "onnxruntime")}
    write_result(
        "mini_onnx_runtime",
        args.out,
        {"throughput": results, "import_s": imports},
        n=len(texts),
        repeats=args.repeats,
        scored_for_deviation=SCORED,
        torch_threads=threads,
        onnxruntime=onnxruntime.__version__,
        load_average_1min={"before": load_before, "after": os.getloadavg()[0]},
    )


if __name__ == "__main__":
    main()
