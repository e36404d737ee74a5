"""How fast can this host feed a student? The scorer's CPU-side work with the model taken out.

``NeuralScorer`` tokenizes, sorts by length, plans batches, pads and copies
each batch before the model runs, with the next chunk tokenized in a helper
thread. On a GPU that host work, not the model, can set the pace: the H100
goal of 150,000 captions/s end to end needs the host to prepare captions at
least that fast. This runs the scorer's real pipeline with a model that returns
zeros, for the CPU batch limits and for the GPU ones (width rounded to 8), and
times the fast tokenizer alone for comparison. Run it on the machine that will
host the GPU; the tokenizer uses every core (``RAYON_NUM_THREADS`` caps it).

    python benchmarks/host_pipeline.py --n 100000 --repeats 3
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path

import torch

from modeling_icc import NeuralScorer
from modeling_icc.models.icc.modeling_icc import ICCForConcreteness
from modeling_icc.scoring.neural import default_batch_limits, pad_multiple
from modeling_icc.testing import distilroberta_config
from modeling_icc.utils.provenance import (
    environment,
    median_seconds,
    stand_in_tokenizer,
    synthetic_captions,
    write_json,
)

RESULTS = Path(__file__).resolve().parent / "results"


class HostOnlyScorer(NeuralScorer):
    """The scorer's host pipeline with a model that costs nothing."""

    def _forward(self) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
        return lambda input_ids, attention_mask: torch.zeros(input_ids.shape[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000, help="captions per timed run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "host_pipeline.json")
    args = parser.parse_args()

    tokenizer = stand_in_tokenizer()
    config = distilroberta_config()
    config.pad_token_id = tokenizer.pad_token_id
    model = ICCForConcreteness(config).eval()
    captions = synthetic_captions(args.n, seed=0)

    results = {}
    for device in ("cpu", "cuda"):
        rows, tokens = default_batch_limits(torch.device(device))
        scorer = HostOnlyScorer(
            model, tokenizer, model_id="none", progress=False, batch_size=rows, max_batch_tokens=tokens
        )
        scorer.pad_multiple = pad_multiple(torch.device(device))
        seconds, runs = median_seconds(lambda scorer=scorer: scorer.score(captions, raw=True), args.repeats)
        results[f"pipeline_{device}_batches"] = {
            "captions_per_s": args.n / seconds,
            "runs_s": runs,
            "batch_rows": rows,
            "batch_tokens": tokens,
            "pad_multiple": scorer.pad_multiple,
        }

    def tokenize() -> None:
        tokenizer(captions, truncation=True, return_attention_mask=False, return_token_type_ids=False)

    seconds, runs = median_seconds(tokenize, args.repeats)
    results["tokenizer_alone"] = {"captions_per_s": args.n / seconds, "runs_s": runs}

    payload = {
        "benchmark": "host_pipeline",
        "what": "NeuralScorer's host work (tokenize, sort, batch, pad, copy) with a zero-cost model",
        "tokenizer": "all-MiniLM-L6-v2 WordPiece (stand-in for RoBERTa BPE)",
        "n_captions": args.n,
        "repeats": args.repeats,
        "rayon_num_threads": os.environ.get("RAYON_NUM_THREADS", "all cores"),
        "environment": environment("cpu"),
        "results": results,
    }
    write_json(args.out, payload)
    for name, row in results.items():
        print(f"{name:24s} {row['captions_per_s']:10,.0f} captions/s")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
