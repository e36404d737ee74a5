"""mini's CPU throughput with this checkout's batch plan against an earlier checkout's, in one process.

The plan decides how many batches a job runs and of which shapes (``modeling_icc/scoring/batching.py``). Both
plans drive the same loaded scorer, alternating, so the ratio is not moved by start-up or by other jobs on a
shared machine as much as separate processes would be. ``--before DIR``: a folder holding the earlier
``modeling_icc`` (``git archive COMMIT modeling_icc | tar -x -C DIR``); only its ``scoring/batching.py`` is read.
``ICC_FORCE_FP32=1`` measures the fp32 path (ONNX Runtime) of CPUs without native bf16.

    python benchmarks/speed/batch_plan.py --before DIR --n 20000 --repeats 7
"""

from __future__ import annotations

import importlib.util
import statistics
import time
from pathlib import Path

import numpy as np
from arguments import timing_parser
from result_file import write_result

import modeling_icc.scoring.chunks as chunks
from modeling_icc import load_scorer
from modeling_icc.utils.provenance import synthetic_captions

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    parser = timing_parser(__doc__, RESULTS / "batch_plan.json", n=20_000, repeats=7)
    parser.add_argument("--before", type=Path, required=True, help="a folder holding the earlier modeling_icc")
    args = parser.parse_args()
    spec = importlib.util.spec_from_file_location("before_batching", args.before / "modeling_icc/scoring/batching.py")
    before = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(before)
    plans = {"before": before.plan_batches, "after": chunks.plan_batches}
    captions = synthetic_captions(args.n, seed=0)
    scorer = load_scorer("mini", progress=False)
    scorer.score(captions[:2_000])  # warm
    rates: dict[str, list[float]] = {name: [] for name in plans}
    scores = {}
    for _ in range(args.repeats):
        for name, plan in plans.items():
            chunks.plan_batches = plan
            start = time.perf_counter()
            scores[name] = scorer.score(captions)
            rates[name].append(args.n / (time.perf_counter() - start))
    ratios = [after / before for after, before in zip(rates["after"], rates["before"], strict=True)]
    results = {
        "scorer": type(scorer).__name__,
        "captions_per_s": {name: statistics.median(values) for name, values in rates.items()},
        "runs": rates,
        "after_over_before": {"median": statistics.median(ratios), "runs": ratios},
        # NaN where a caption is not read (another language): equal when both are NaN
        "scores_identical": bool(np.array_equal(scores["after"], scores["before"], equal_nan=True)),
    }
    write_result(
        "batch_plan",
        args.out,
        results,
        captions=f"{args.n} synthetic LAION-like captions (seed 0)",
        before=str(args.before),
        repeats=args.repeats,
    )
    print(f"{results['scorer']}: after/before {results['after_over_before']['median']:.3f} (median of {args.repeats})")


if __name__ == "__main__":
    main()
