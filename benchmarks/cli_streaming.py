"""Single-file ``icc score`` / ``icc filter`` jobs on many captions: peak memory and throughput.

Writes ``--n`` synthetic LAION-like captions (``synthetic_captions``) to a ``.txt`` file and
runs the CLI on them with the embedded lite model, each run a fresh process:

- ``score``: ``icc score --model lite --input N.txt --output scored.jsonl``
- ``score stdin``: ``icc score --model lite --input - < N.txt > /dev/null`` (also: seconds
  until the first scored row reaches stdout)
- ``filter threshold``: ``icc filter ... --output kept.jsonl --threshold 0.5``
- ``filter top-fraction``: ``icc filter ... --output kept.jsonl --top-fraction 0.3`` (two passes)

Peak RSS is the child's high-water mark (``os.wait4``). "Above baseline" subtracts the
peak of the same command on a one-caption file: the interpreter, imports and the lite
model. Medians of ``--repeats`` runs.

    python benchmarks/cli_streaming.py --n 1000000 --repeats 3
    python benchmarks/cli_streaming.py --n 4000000 --repeats 1 --cases "filter top-fraction" \
        --out benchmarks/results/cli_streaming_4m.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from child_process import run_child
from result_file import write_result

from modeling_icc.utils.provenance import synthetic_captions

RESULTS = Path(__file__).resolve().parent / "results"
GOAL_MB_ABOVE_BASELINE = 300
CASES = {
    "score": (["score"], False),
    "score stdin": (["score"], True),
    "filter threshold": (["filter", "--threshold", "0.5"], False),
    "filter top-fraction": (["filter", "--top-fraction", "0.3"], False),
}


def command(args: list[str], source: Path, output: Path, stdin: bool) -> list[str]:
    io = ["--input", "-"] if stdin else ["--input", str(source), "--output", str(output)]
    return [sys.executable, "-m", "modeling_icc", args[0], "--model", "lite", *io, *args[1:]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--cases", nargs="+", choices=list(CASES), default=list(CASES), help="jobs to run (default: all)"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "cli_streaming.json")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="icc-bench-") as directory:
        work = Path(directory)
        big, tiny = work / "captions.txt", work / "one.txt"
        big.write_text("\n".join(synthetic_captions(args.n, seed=0)) + "\n", encoding="utf-8")
        tiny.write_text("a dog on a beach\n", encoding="utf-8")
        for name in args.cases:
            cli_args, stdin = CASES[name]
            output = work / "out.jsonl"
            baseline = run_child(command(cli_args, tiny, output, stdin), stdin=tiny if stdin else None)
            runs = [
                run_child(command(cli_args, big, output, stdin), stdin=big if stdin else None, first_output=stdin)
                for _ in range(args.repeats)
            ]
            peak = statistics.median(run.peak_rss_mb for run in runs)
            wall = statistics.median(run.wall_s for run in runs)
            results[name] = {
                "command": " ".join(["icc", *command(cli_args, Path("N.txt"), Path("out.jsonl"), stdin)[3:]])
                + (" < N.txt > /dev/null" if stdin else ""),
                "peak_rss_mb": round(peak, 1),
                "baseline_peak_rss_mb": round(baseline.peak_rss_mb, 1),
                "peak_above_baseline_mb": round(peak - baseline.peak_rss_mb, 1),
                "wall_s": round(wall, 2),
                "rows_per_s": round(args.n / wall),
                "runs": [{"wall_s": round(r.wall_s, 2), "peak_rss_mb": round(r.peak_rss_mb, 1)} for r in runs],
            }
            if stdin:
                results[name]["first_output_s"] = round(statistics.median(run.first_output_s for run in runs), 2)
            print(
                f"{name}: peak {peak:.0f} MB ({peak - baseline.peak_rss_mb:.0f} MB above a one-caption run), "
                f"{wall:.1f} s, {args.n / wall:,.0f} rows/s"
            )
    write_result(
        "cli_streaming",
        args.out,
        results,
        captions={"n": args.n, "source": "synthetic LAION-like (modeling_icc.utils.provenance.synthetic_captions)"},
        model="lite",
        repeats=args.repeats,
        goal_mb_above_baseline=GOAL_MB_ABOVE_BASELINE,
    )


if __name__ == "__main__":
    main()
