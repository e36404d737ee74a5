"""Teacher throughput: captions/s per stage and device-hours per 1M captions.

Full size (the default, for a GPU): random weights of the paper's architectures
in the device's default dtype (bf16; fp16 on GPUs without bf16; fp32 with
``ICC_FORCE_FP32=1``) — SBA = CLIP ViT-L/14 text + Llama-2-7B with 5 beams / 5 returned
sequences; VBA = Stable Diffusion 2 (768 px, OpenCLIP-H text encoder, 20
DPM-Solver steps, classifier-free guidance 9), BLIP-2 OPT-2.7B (5 beams, 5
captions) and BERTScore with RoBERTa-large (layer 17). Random weights never emit
a stop token, so generation lengths are fixed (--sba-tokens, --blip2-tokens) at
typical caption lengths. Every stage runs the library's own code path
(``SBAPipeline.reconstruct``, ``VBAPipeline``).

--tiny runs the same stages with the tiny random models on CPU: it checks that
every stage works end to end, not how fast the real models are.

    python benchmarks/speed/teacher_throughput.py                      # full size, on CUDA
    python benchmarks/speed/teacher_throughput.py --tiny --n-batches 3 # tiny, on CPU
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import paper_shapes
import torch

from modeling_icc.scoring.devices import resolve_dtype
from modeling_icc.teachers import BERTScoreSimilarity, VBAPipeline
from modeling_icc.testing.teachers import (
    TINY_IMAGE_SIZE,
    save_tiny_bertscore_model,
    tiny_blip2,
    tiny_sba,
    tiny_text_to_image,
    use_one_cpu_thread,
)
from modeling_icc.utils.provenance import environment, median_seconds, package_versions, synthetic_captions, write_json

RESULTS = Path(__file__).resolve().parent / "results"
#: Batch sizes per stage (captions per call) at full size on one GPU, and for --tiny.
FULL_BATCH = {"sba": 64, "text_to_image": 8, "captioner": 32, "bertscore": 64}
TINY_BATCH = {"sba": 8, "text_to_image": 8, "captioner": 8, "bertscore": 8}


def bertscore_candidates(captions: list[str], per_caption: int) -> list[list[str]]:
    """Real captions as each caption's candidates (the next ``per_caption`` ones).

    Not the captioner's output: random BLIP-2 weights decode to empty strings, and
    :meth:`BERTScoreSimilarity.best` answers empty candidates without the model, which made
    this stage look 1,900x faster than it is (417,707 captions/s against 220, measured on an H200).
    """
    return [[captions[(i + k) % len(captions)] for k in range(1, per_caption + 1)] for i in range(len(captions))]


def build(tiny: bool, device: str, dtype: torch.dtype, workdir: Path, blip2_tokens: int, compile: bool = False):
    if tiny:
        sba = tiny_sba()
        captioner, processor = tiny_blip2()
        text_to_image, size = tiny_text_to_image(), TINY_IMAGE_SIZE
        bertscore_dir, layers = save_tiny_bertscore_model(workdir / "bertscore"), 2
    else:
        sba = paper_shapes.paper_sba(device, dtype)
        captioner, processor = paper_shapes.paper_blip2(device, dtype)
        text_to_image, size = paper_shapes.paper_text_to_image(device, dtype), 768
        bertscore_dir = save_tiny_bertscore_model(workdir / "bertscore", config=paper_shapes.roberta_large_config())
        layers = 17
    vba = VBAPipeline(
        text_to_image,
        captioner,
        processor,
        BERTScoreSimilarity(str(bertscore_dir), layers, device=device),
        size=size,
        max_new_tokens=blip2_tokens,
        min_new_tokens=blip2_tokens,
        compile=compile,
    )
    sba.model.to(device)
    return sba, vba


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tiny", action="store_true", help="tiny random models on CPU (a functional run)")
    parser.add_argument("--device", default=None, help="default: cuda at full size, cpu with --tiny")
    parser.add_argument("--n-batches", type=int, default=3, help="timed calls per stage (median reported)")
    parser.add_argument("--sba-tokens", type=int, default=24, help="fixed SBA reconstruction length (tokens)")
    parser.add_argument("--blip2-tokens", type=int, default=20, help="fixed BLIP-2 caption length (tokens)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the diffusion UNet (VBAConfig.compile)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    device = args.device or ("cpu" if args.tiny else "cuda")
    dtype = torch.float32 if args.tiny else resolve_dtype(None, torch.device(device))
    batch = TINY_BATCH if args.tiny else FULL_BATCH
    if args.tiny:
        use_one_cpu_thread()

    with tempfile.TemporaryDirectory() as workdir:
        sba, vba = build(args.tiny, device, dtype, Path(workdir), args.blip2_tokens, args.compile)
        captions = synthetic_captions(max(batch.values()), seed=0)
        ids = [str(i) for i in range(len(captions))]
        images = vba.generate_images(captions[: batch["captioner"]], ids[: batch["captioner"]], seed=0)
        candidates = bertscore_candidates(captions[: batch["bertscore"]], vba.config.num_return_sequences)
        runs = {
            "sba": lambda: sba.reconstruct(
                captions[: batch["sba"]], max_new_tokens=args.sba_tokens, min_new_tokens=args.sba_tokens
            ),
            "text_to_image": lambda: vba.generate_images(
                captions[: batch["text_to_image"]], ids[: batch["text_to_image"]], seed=0
            ),
            "captioner": lambda: vba.caption_images(images[: batch["captioner"]]),
            "bertscore": lambda: vba.similarity.best(captions[: batch["bertscore"]], candidates),
        }
        stages = {}
        for name, run in runs.items():
            if device.startswith("cuda"):
                torch.cuda.reset_peak_memory_stats()
            seconds, times = median_seconds(run, repeats=args.n_batches, warmup=1)
            rate = batch[name] / seconds
            stages[name] = {
                "batch_size": batch[name],
                "captions_per_s": rate,
                "runs_s": times,
                "device_hours_per_1m_captions": 1e6 / rate / 3600,
            }
            if device.startswith("cuda"):
                stages[name]["peak_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
            print(f"{name:14s} {rate:10.2f} captions/s (batch {batch[name]})")

    total = sum(stage["device_hours_per_1m_captions"] for stage in stages.values())
    payload = {
        "benchmark": "teacher_throughput",
        "mode": "tiny random models (functional check, not real cost)" if args.tiny else "full size, random weights",
        "dtype": str(dtype).removeprefix("torch."),
        "settings": {
            "sba": {"num_beams": 5, "num_return_sequences": 5, "new_tokens": args.sba_tokens},
            "text_to_image": {
                key: getattr(vba.config, key) for key in ("scheduler", "num_inference_steps", "guidance_scale", "size")
            },
            "captioner": {"num_beams": 5, "num_return_sequences": 5, "new_tokens": args.blip2_tokens},
            "text_to_image_compiled": args.compile,
            "bertscore": {
                "candidates_per_caption": 5,
                "candidates": "real captions (random BLIP-2 output is empty, which skips the model)",
                "model": "tiny RoBERTa" if args.tiny else "RoBERTa-large L17",
            },
        },
        "tokenizers": "offline byte-level BPEs trained on the shipped captions (ids fit every vocabulary)",
        "environment": {**environment(device), "teacher_versions": package_versions("diffusers", "bert-score")},
        "stages": stages,
        "device_hours_per_1m_captions": total,
    }
    mode = ("tiny" if args.tiny else "full") + ("_compiled" if args.compile else "")
    out = args.out or RESULTS / f"teacher_throughput_{mode}_{device.split(':')[0]}.json"
    write_json(out, payload)
    print(f"total: {total:.2f} device-hours per 1M captions; wrote {out}")


if __name__ == "__main__":
    main()
