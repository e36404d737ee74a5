"""mini throughput on the CPU, fp32 and bf16, with lite timed in the same run for the ratio.

Both scorers run end to end (``scorer.score(captions)``: tokenization, length-sorted batches, input
order) on the same captions: real CC3M validation captions (their first ``--n``), and the synthetic
LAION-like captions of ``benchmarks/speed/student_throughput.py`` (``--n`` of them), so that mini sits beside
the student's figures. Wall-clock medians of ``--repeats`` timed runs after one warm-up; torch uses
its default threads (all cores), lite one core (pure Python). The 1-minute load average before and after
is recorded: on a shared machine, torch's rates fall sharply when another job takes a core.

bf16 runs only where the CPU multiplies bf16 natively: elsewhere (an AVX2-only CPU, or with
``ICC_FORCE_FP32=1``) it would run in software emulation, many times slower, so it is skipped and the
JSON's ``skipped`` entry says why.

    python benchmarks/speed/mini_throughput.py --n 2000 --repeats 7
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch
from arguments import timing_parser
from result_file import command_line, save
from score_differences import abs_differences

from modeling_icc import load_scorer
from modeling_icc.scoring.devices import bf16_unavailable_reason
from modeling_icc.utils.provenance import environment, median_seconds, synthetic_captions
from modeling_icc.utils.shipped_data import cc3m_captions

RESULTS = Path(__file__).resolve().parent / "results"


def caption_sets(n: int) -> dict[str, list[str]]:
    return {"cc3m": cc3m_captions()[:n], "synthetic": synthetic_captions(n, seed=0)}


def main() -> None:
    n_help = "captions per timed run (per caption set)"
    args = timing_parser(__doc__, RESULTS / "mini_throughput_cpu.json", n=2000, repeats=7, n_help=n_help).parse_args()
    no_bf16 = bf16_unavailable_reason(torch.device("cpu"))
    dtypes = ["float32"] + ([] if no_bf16 else ["bfloat16"])
    scorers = {"lite": load_scorer("lite")} | {f"mini_{dtype}": load_scorer("mini", dtype=dtype) for dtype in dtypes}
    load_before = os.getloadavg()[0]
    results = {}
    for source, captions in caption_sets(args.n).items():
        tokens = scorers[f"mini_{dtypes[0]}"].tokenizer(captions)["input_ids"]
        row = {"n": len(captions), "mean_tokens": float(np.mean([len(ids) for ids in tokens]))}
        scores = {}
        for name, scorer in scorers.items():
            seconds, runs = median_seconds(lambda s=scorer, c=captions: s.score(c), args.repeats)
            row[name] = {"captions_per_s": len(captions) / seconds, "runs_s": runs}
            scores[name] = scorer.score(captions)
        for dtype in dtypes:
            row[f"lite_over_mini_{dtype}"] = row["lite"]["captions_per_s"] / row[f"mini_{dtype}"]["captions_per_s"]
        if "bfloat16" in dtypes:
            moved = abs_differences(scores["mini_bfloat16"], scores["mini_float32"])
            row["bf16_vs_fp32"] = {"max_abs": float(moved.max()), "mean_abs": float(moved.mean()), "scored": moved.size}
        results[source] = row
    payload = {
        "benchmark": "mini_throughput",
        "command": command_line("mini_throughput"),
        "captions": {
            "cc3m": "first N of modeling_icc/data/cc3m_validation_captions.tsv",
            "synthetic": "synthetic LAION-like (modeling_icc.utils.provenance.synthetic_captions), as the student's",
        },
        "repeats": args.repeats,
        "environment": environment("cpu"),
        "load_average_1min": {"before": load_before, "after": os.getloadavg()[0]},
        "results": results,
        "skipped": {} if no_bf16 is None else {"bfloat16": no_bf16},
    }
    for source, row in results.items():
        rates = ", ".join(f"{name} {row[name]['captions_per_s']:,.0f}/s" for name in scorers)
        print(f"{source} ({row['n']} captions, {row['mean_tokens']:.1f} tokens): {rates}")
    save(args.out, payload)


if __name__ == "__main__":
    main()
