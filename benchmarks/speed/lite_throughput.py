"""Lite model throughput on one CPU core: captions per second, end to end (``scorer.score``).

The scorer is pure Python per caption and single-threaded, so this is the
per-core rate; scale out with processes. Two clocks are reported: wall time,
and this process's CPU time (``time.process_time``), which is what one core
delivers even while other jobs share the machine.

    python benchmarks/speed/lite_throughput.py --n 100000 --repeats 5
"""

from __future__ import annotations

import time
from pathlib import Path

from arguments import timing_parser

from modeling_icc import LiteScorer
from modeling_icc.utils.provenance import environment, median_seconds, synthetic_captions, write_json

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    args = timing_parser(__doc__, RESULTS / "lite_throughput.json", n=100_000, repeats=5).parse_args()
    captions = synthetic_captions(args.n, seed=0)
    scorer = LiteScorer()
    seconds, runs = median_seconds(lambda: scorer.score(captions), args.repeats)
    cpu_seconds, cpu_runs = median_seconds(lambda: scorer.score(captions), args.repeats, clock=time.process_time)
    rate = args.n / cpu_seconds
    payload = {
        "benchmark": "lite_throughput",
        "captions": {"n": args.n, "source": "synthetic LAION-like (modeling_icc.utils.provenance.synthetic_captions)"},
        "repeats": args.repeats,
        "environment": environment("cpu"),
        "results": {
            "captions_per_cpu_second": rate,
            "captions_per_wall_second": args.n / seconds,
            "cpu_runs_s": cpu_runs,
            "wall_runs_s": runs,
            "goal_captions_per_s_per_core": 20_000,
        },
    }
    write_json(args.out, payload)
    print(
        f"lite: {rate:,.0f} captions per CPU-second on one core, {args.n / seconds:,.0f} per wall-second "
        f"(medians of {args.repeats}); wrote {args.out}"
    )


if __name__ == "__main__":
    main()
