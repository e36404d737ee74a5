"""What bounds a neural scorer on a CPU: the matrix-unit throughput of its four linear shapes.

The DistilRoBERTa student (``--model student``) spends most of its time in four products per layer
(fused QKV 768->2304, attention output 768->768, FFN 768->3072 and 3072->768); mini (``--model mini``)
in the same four of all-MiniLM-L6-v2 (384 wide, FFN 1536) in each of the 4 layers it reads. This
times each at the scorer's batch size (rows = tokens per batch), in fp32 (torch's ``linear``), in bf16
with weights pre-packed by oneDNN (what ``FastICCEncoder`` and ``FastMiniEncoder`` run), and in int8
through oneDNN's quantized linear, plus the eager cost of quantizing the activations per batch (dynamic
quantization), which int8 would add. From the fp32 and bf16 rates it derives the most captions/s any
implementation in that precision could reach here if the products were the only work. On a CPU without
native bf16 (or with ``ICC_FORCE_FP32=1``) the bf16 timings and their ceiling are skipped, since emulated
bf16 says nothing about the hardware; the JSON's ``skipped`` entry says why.

The student's products are timed with torch's threads over all cores; mini's with one thread, as its
scorer runs one batch per core side by side (``scoring/runner.py``), and its ceiling counts every core.

    python benchmarks/speed/cpu_matmul_ceiling.py --repeats 20   # medians over 3 interleaved rounds
    python benchmarks/speed/cpu_matmul_ceiling.py --model mini --repeats 20
    # mini on CC3M captions (12.59 tokens each), at ONNX Runtime's CPU batch, into its own JSON:
    python benchmarks/speed/cpu_matmul_ceiling.py --model mini --rows 1024 --tokens-per-caption 12.59 \
        --out benchmarks/speed/results/cpu_matmul_ceiling_mini_fp32_avx2.json
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from result_file import command_line, save

from modeling_icc.scoring.devices import bf16_unavailable_reason
from modeling_icc.utils.provenance import environment

RESULTS = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class EncoderShape:
    """The encoder's products and how the scorer runs them on a CPU."""

    hidden: int
    ffn: int
    layers: int
    #: Mean tokens per caption with the special tokens, on the model's own speed benchmark captions.
    tokens_per_caption: float
    #: Tokens per product: the CPU scorer's batch.
    rows: int
    #: True: the last layer runs QKV's key/value part on every token and the rest on one token per
    #: caption (the student reads the first token only). False: every layer runs whole (mini pools all tokens).
    last_layer_first_token_only: bool
    #: True: one torch thread per product, one product per core at once (mini); False: all threads on one product.
    side_by_side: bool

    def shapes(self) -> dict[str, tuple[int, int]]:
        """(in, out) of each product in one layer."""
        return {
            "qkv": (self.hidden, 3 * self.hidden),
            "attention_out": (self.hidden, self.hidden),
            "ffn_in": (self.hidden, self.ffn),
            "ffn_out": (self.ffn, self.hidden),
        }


MODELS = {
    # benchmarks/speed/student_throughput.py's captions with the RoBERTa-style tokenizer.
    "student": EncoderShape(768, 3072, 6, 15.9, 2048, last_layer_first_token_only=True, side_by_side=False),
    # benchmarks/speed/mini_cpu.py's 8,000 captions (synthetic_captions, seed 0) as mini tokenizes them.
    "mini": EncoderShape(384, 1536, 4, 16.0, 4096, last_layer_first_token_only=False, side_by_side=True),
}


def median_ms(run: Callable[[], object], repeats: int) -> float:
    with torch.inference_mode():
        for _ in range(3):
            run()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def time_shape(rows: int, fan_in: int, fan_out: int, repeats: int, bf16: bool) -> dict:
    """Milliseconds per product (bf16 only when ``bf16``) and per activation quantization."""
    x = torch.randn(rows, fan_in)
    weight, bias = torch.randn(fan_out, fan_in), torch.randn(fan_out)
    flops = 2 * rows * fan_in * fan_out
    out: dict[str, float] = {"fp32_ms": median_ms(lambda: torch.nn.functional.linear(x, weight, bias), repeats)}
    out["fp32_tflops"] = flops / out["fp32_ms"] / 1e9
    if bf16:
        x_bf16, packed = x.bfloat16(), torch.ops.mkldnn._reorder_linear_weight(weight.bfloat16(), rows)
        out["bf16_ms"] = median_ms(
            lambda: torch.ops.mkldnn._linear_pointwise(x_bf16, packed, bias.bfloat16(), "none", [], ""), repeats
        )
        out["bf16_tflops"] = flops / out["bf16_ms"] / 1e9
    scales = weight.abs().amax(1) / 127
    packed_int8 = torch.ops.onednn.qlinear_prepack(
        torch.round(weight / scales[:, None]).clamp(-127, 127).to(torch.int8), [rows, fan_in]
    )
    x_uint8 = torch.randint(0, 255, (rows, fan_in), dtype=torch.uint8)
    zero_points = torch.zeros(fan_out, dtype=torch.long)

    def int8_product():
        output_dtype = torch.bfloat16 if bf16 else torch.float32
        return torch.ops.onednn.qlinear_pointwise(
            x_uint8, 0.05, 128, packed_int8, scales, zero_points, bias, 1.0, 0, output_dtype, "none", [], ""
        )

    out["int8_ms"] = median_ms(int8_product, repeats)
    out["int8_tops"] = flops / out["int8_ms"] / 1e9
    with warnings.catch_warnings():  # quantized tensor types are deprecated; this is only a timing
        warnings.simplefilter("ignore", UserWarning)
        out["dynamic_activation_quantization_ms"] = median_ms(
            lambda: torch.quantize_per_tensor_dynamic(x, torch.quint8, False).int_repr(), repeats
        )
    return out


def products_ms_per_batch(model: EncoderShape, shapes: dict[str, dict[str, float]], key: str) -> float:
    """Milliseconds of one batch's products, from each shape's ``key`` timing."""
    layer_ms = sum(row[key] for row in shapes.values())
    if model.last_layer_first_token_only:
        return (model.layers - 1) * layer_ms + shapes["qkv"][key] * 2 / 3
    return model.layers * layer_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=sorted(MODELS), default="student")
    parser.add_argument("--rows", type=int, default=None, help="tokens per batch (default: the model's CPU batch)")
    parser.add_argument(
        "--tokens-per-caption",
        type=float,
        default=None,
        help="mean tokens with the special tokens (default: the model's speed benchmark captions)",
    )
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--out", type=Path, default=None, help="default: results/cpu_matmul_ceiling[_mini].json")
    args = parser.parse_args()
    model = MODELS[args.model]
    rows = args.rows or model.rows
    tokens_per_caption = args.tokens_per_caption or model.tokens_per_caption
    out = args.out or RESULTS / (
        "cpu_matmul_ceiling.json" if args.model == "student" else "cpu_matmul_ceiling_mini.json"
    )
    cores = torch.get_num_threads()
    if model.side_by_side:
        torch.set_num_threads(1)
    # Rounds interleave the shapes so that a slow spell of the shared machine hits all of them.
    no_bf16 = bf16_unavailable_reason(torch.device("cpu"))
    rounds = [
        {name: time_shape(rows, *shape, args.repeats, bf16=no_bf16 is None) for name, shape in model.shapes().items()}
        for _ in range(3)
    ]
    shapes = {
        name: {key: statistics.median(run[name][key] for run in rounds) for key in rounds[0][name]}
        for name in model.shapes()
    }
    payload = {
        "benchmark": "cpu_matmul_ceiling",
        "command": command_line("cpu_matmul_ceiling"),
        "model": args.model,
        "rows_per_product": rows,
        "threads_per_product": torch.get_num_threads(),
        "products_side_by_side": cores if model.side_by_side else 1,
        "repeats": args.repeats,
        "rounds": len(rounds),
        "environment": environment("cpu"),
        "shapes": shapes,
        "skipped": {} if no_bf16 is None else {"bf16 products and ceiling": no_bf16},
    }
    batches_at_once = payload["products_side_by_side"]
    for precision in ("fp32", "bf16") if no_bf16 is None else ("fp32",):
        products_ms = products_ms_per_batch(model, shapes, f"{precision}_ms")
        payload[f"{precision}_products_ms_per_batch"] = products_ms
        payload[f"{precision}_ceiling_captions_per_s"] = batches_at_once * rows / tokens_per_caption / products_ms * 1e3
    payload["ceiling_assumes"] = (
        f"{tokens_per_caption} tokens per caption, no padding, products only, "
        f"{batches_at_once} batch(es) at once with perfect scaling"
    )
    for name, row in shapes.items():
        bf16 = f"bf16 {row['bf16_tflops']:.2f} TFLOP/s ({row['bf16_ms']:.2f} ms)   " if "bf16_ms" in row else ""
        print(
            f"{name:14s} fp32 {row['fp32_tflops']:.3f} TFLOP/s ({row['fp32_ms']:.2f} ms)   "
            f"{bf16}int8 {row['int8_tops']:.2f} TOP/s"
            f"   quantizing the input {row['dynamic_activation_quantization_ms']:.2f} ms"
        )
    for precision in ("fp32", "bf16"):
        if f"{precision}_ceiling_captions_per_s" in payload:
            ceiling = payload[f"{precision}_ceiling_captions_per_s"]
            print(f"{precision} ceiling (products only): {ceiling:.0f} captions/s")
    save(out, payload)


if __name__ == "__main__":
    main()
