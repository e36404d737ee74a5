"""Single-file ``icc score`` / ``icc filter`` jobs on many captions: peak memory and throughput.

Writes ``--n`` synthetic LAION-like captions (``synthetic_captions``; ``--captions cc3m``: the shipped CC3M
validation captions, repeated) to a ``.txt`` file and
runs the CLI on them with the embedded lite model (``--models``: also ``mini``, and ``tiny-student``, a tiny
random student saved for the run, to time the neural path's reading and writing), each run a
fresh process:

- ``score``: ``icc score --model lite --input N.txt --output scored.jsonl``
- ``score parquet``: ``icc score --model lite --input N.txt --output scored.parquet``
- ``score stdin``: ``icc score --model lite --input - < N.txt > /dev/null`` (also: seconds
  until the first scored row reaches stdout)
- ``filter threshold``: ``icc filter ... --output kept.jsonl --threshold 0.5``
- ``filter top-fraction``: ``icc filter ... --output kept.jsonl --top-fraction 0.3`` (two passes)

Peak RSS is the child's high-water mark (``os.wait4``). "Above baseline" subtracts the
peak of the same command on a one-caption file: the interpreter, imports and the lite
model. Medians of ``--repeats`` runs. Rows per CPU-second (the child's user + system time, start-up
included) compare runs on a shared machine, where wall time depends on the other jobs.

``--compare-with DIR`` also runs every command with ``DIR`` (another checkout's source tree, e.g.
``git archive BASE modeling_icc | tar -x -C DIR``) first on ``PYTHONPATH``, alternating with this
tree's runs, so before and after are measured in one run under the same load.

    python benchmarks/speed/cli_streaming.py --n 1000000 --repeats 3
    python benchmarks/speed/cli_streaming.py --n 4000000 --repeats 1 --cases "filter top-fraction" \
        --out benchmarks/speed/results/cli_streaming_4m.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from child_process import run_child
from result_file import write_result

from modeling_icc.testing import save_tiny_student
from modeling_icc.utils.provenance import synthetic_captions
from modeling_icc.utils.shipped_data import cc3m_captions

RESULTS = Path(__file__).resolve().parent / "results"
GOAL_MB_ABOVE_BASELINE = 300
CASES = {
    "score": (["score"], False),
    "score parquet": (["score"], False),
    "score stdin": (["score"], True),
    "filter threshold": (["filter", "--threshold", "0.5"], False),
    "filter top-fraction": (["filter", "--top-fraction", "0.3"], False),
}


CAPTION_SOURCES = {
    "synthetic": "synthetic LAION-like (modeling_icc.utils.provenance.synthetic_captions)",
    "cc3m": "the 15,833 CC3M validation captions shipped with the package, repeated in order to n",
}


def captions(source: str, n: int) -> list[str]:
    if source == "synthetic":
        return synthetic_captions(n, seed=0)
    pool = [caption.replace("\n", " ") for caption in cc3m_captions()]
    return [pool[index % len(pool)] for index in range(n)]


def command(args: list[str], model: str, source: Path, output: Path, stdin: bool) -> list[str]:
    io = ["--input", "-"] if stdin else ["--input", str(source), "--output", str(output)]
    return [sys.executable, "-m", "modeling_icc", args[0], "--model", model, *io, *args[1:]]


def environment_for(tree: Path | None) -> dict[str, str]:
    """This environment, with ``tree`` first on ``PYTHONPATH`` (its ``modeling_icc`` is the one imported)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [env.get("PYTHONPATH")])])
    return env


def summarize(runs: list, baseline, n: int, stdin: bool) -> dict:
    """Medians of the runs of one command, and its peak memory above the one-caption baseline."""
    peak = statistics.median(run.peak_rss_mb for run in runs)
    wall = statistics.median(run.wall_s for run in runs)
    out = {
        "peak_rss_mb": round(peak, 1),
        "baseline_peak_rss_mb": round(baseline.peak_rss_mb, 1),
        "peak_above_baseline_mb": round(peak - baseline.peak_rss_mb, 1),
        "wall_s": round(wall, 2),
        "rows_per_s": round(n / wall),
        "cpu_s": round(statistics.median(run.cpu_s for run in runs), 2),
        "rows_per_cpu_s": round(n / statistics.median(run.cpu_s for run in runs)),
        "runs": [{"wall_s": round(r.wall_s, 2), "peak_rss_mb": round(r.peak_rss_mb, 1)} for r in runs],
    }
    if stdin:
        out["first_output_s"] = round(statistics.median(run.first_output_s for run in runs), 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--cases", nargs="+", choices=list(CASES), default=list(CASES), help="jobs to run (default: all)"
    )
    parser.add_argument("--models", nargs="+", choices=("lite", "mini", "tiny-student"), default=["lite"])
    parser.add_argument(
        "--captions", choices=CAPTION_SOURCES, default="synthetic", help="synthetic LAION-like, or CC3M repeated"
    )
    parser.add_argument("--compare-with", type=Path, default=None, metavar="DIR", help="a 'before' source tree")
    parser.add_argument("--out", type=Path, default=RESULTS / "cli_streaming.json")
    args = parser.parse_args()
    trees = {"now": None, **({"before": args.compare_with.resolve()} if args.compare_with else {})}
    results = {}
    with tempfile.TemporaryDirectory(prefix="icc-bench-") as directory:
        work = Path(directory)
        big, tiny = work / "captions.txt", work / "one.txt"
        big.write_text("\n".join(captions(args.captions, args.n)) + "\n", encoding="utf-8")
        tiny.write_text("a dog on a beach\n", encoding="utf-8")
        models = {"lite": "lite", "mini": "mini", "tiny-student": str(save_tiny_student(work / "tiny-student"))}
        for model_name in args.models:
            for name in args.cases:
                cli_args, stdin = CASES[name]
                output = work / ("out.parquet" if name.endswith("parquet") else "out.jsonl")
                argv = command(cli_args, models[model_name], big, output, stdin)
                envs = {tree: environment_for(path) for tree, path in trees.items()}
                baseline = {
                    tree: run_child(
                        command(cli_args, models[model_name], tiny, output, stdin),
                        stdin=tiny if stdin else None,
                        env=env,
                    )
                    for tree, env in envs.items()
                }
                runs: dict[str, list] = {tree: [] for tree in trees}
                for _ in range(args.repeats):  # alternating, so both trees see the same load
                    for tree, env in envs.items():
                        runs[tree].append(run_child(argv, stdin=big if stdin else None, first_output=stdin, env=env))
                shown = " ".join(["icc", *argv[3:]]).replace(str(big), "N.txt").replace(str(output), output.name)
                shown = shown.replace(models[model_name], model_name)
                for tree in trees:
                    key = f"{model_name}: {name}" + ("" if tree == "now" else " (before)")
                    results[key] = summarize(runs[tree], baseline[tree], args.n, stdin)
                    results[key]["command"] = shown + (" < N.txt > /dev/null" if stdin else "")
                    print(
                        f"{key}: peak {results[key]['peak_rss_mb']:.0f} MB "
                        f"({results[key]['peak_above_baseline_mb']:.0f} MB above a one-caption run), "
                        f"{results[key]['wall_s']:.1f} s, {results[key]['rows_per_s']:,} rows/s, "
                        f"{results[key]['rows_per_cpu_s']:,} rows per CPU-second"
                    )
    write_result(
        "cli_streaming",
        args.out,
        results,
        captions={"n": args.n, "source": CAPTION_SOURCES[args.captions]},
        models={
            "lite": "lite",
            "mini": "mini",
            "tiny-student": "a tiny random student (modeling_icc.testing.save_tiny_student)",
        },
        before=str(args.compare_with) if args.compare_with else None,
        repeats=args.repeats,
        goal_mb_above_baseline=GOAL_MB_ABOVE_BASELINE,
    )


if __name__ == "__main__":
    main()
