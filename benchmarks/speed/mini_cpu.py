"""mini on the CPU, before and after, in one run: start-up, ``icc filter`` throughput, ``score()`` throughput.

"Before" is a checkout of the old code given with ``--before`` (a folder holding its ``modeling_icc``;
e.g. ``git worktree add /tmp/icc-before 4428b4e``: ``transformers``' ``BertModel``, ``AutoTokenizer``, one
batch at a time), run in child processes with ``PYTHONPATH`` pointing at it. "After" is this checkout
(``FastMiniEncoder``, the Rust tokenizer, batches side by side, no ``transformers`` import). Before and
after alternate in each repeat, so both see the same machine; medians of ``--repeats``. The JSON records
the CPU kind and the 1-minute load average: on a shared 2-core machine absolute rates move with other
jobs, ratios much less.

Scores: the new default path against the old default path and against the old fp32 path, max and mean
absolute difference over the same captions.

    python benchmarks/speed/mini_cpu.py --before /tmp/icc-before --n 20000 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from child_process import run_child
from result_file import write_result
from score_differences import abs_differences
from startup import icc_command

from modeling_icc.utils.provenance import synthetic_captions

RESULTS = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parents[2]


def command_rates(icc: list[str], before: Path | None, captions_file: Path, repeats: int, n: int) -> dict:
    """Start-up and ``icc filter`` wall times, before (``--before`` on ``PYTHONPATH``) and after."""
    files = ["--input", str(captions_file), "--output", str(captions_file.with_suffix(".kept.jsonl"))]
    commands = {
        "startup": [*icc, "score", "--model", "mini", "a dog"],
        "filter": [*icc, "filter", "--model", "mini", "--threshold", "0.5", *files],
    }
    trees = {"after": REPO} | ({"before": before} if before else {})
    runs: dict[str, dict[str, list[float]]] = {name: {tree: [] for tree in trees} for name in commands}
    saved = os.environ.get("PYTHONPATH")
    try:
        for repeat in range(repeats + 1):  # the first round warms the file cache and is not timed
            for tree, path in trees.items():
                os.environ["PYTHONPATH"] = str(path)
                for name, argv in commands.items():
                    wall = run_child(argv).wall_s
                    if repeat:
                        runs[name][tree].append(wall)
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved
    results = {}
    for name, per_tree in runs.items():
        row = {tree: {"median_s": statistics.median(values), "runs_s": values} for tree, values in per_tree.items()}
        if name == "filter":
            for tree in per_tree:
                row[tree]["rows_per_s"] = n / row[tree]["median_s"]
        if "before" in row:
            row["speedup"] = row["before"]["median_s"] / row["after"]["median_s"]
        results[name] = row
    return results


#: Run in a child process with either tree first on ``PYTHONPATH``: prints captions/s, saves the scores.
SCORE_CHILD = """
import sys, time, numpy as np
from modeling_icc import load_scorer
captions = open(sys.argv[1], encoding="utf-8").read().splitlines()
scorer = load_scorer("mini", dtype=sys.argv[3] or None)
scorer.score(captions[:500])
start = time.perf_counter()
scores = scorer.score(captions)
print(len(captions) / (time.perf_counter() - start))
np.save(sys.argv[2], scores)
"""


def score_rates(trees: dict[str, Path], captions_file: Path, repeats: int) -> dict:
    """``load_scorer("mini").score()`` captions/s in a fresh process per tree and repeat, alternating; the new
    default path's scores against the old default and the old fp32 path."""
    runs: dict[str, list[float]] = {tree: [] for tree in trees}
    scores: dict[str, np.ndarray] = {}

    def child(tree: str, dtype: str = "") -> float:
        saved = captions_file.with_suffix(f".{tree}{dtype}.npy")
        argv = [sys.executable, "-c", SCORE_CHILD, str(captions_file), str(saved), dtype]
        env = {**os.environ, "PYTHONPATH": str(trees[tree])}
        # Run from the temporary folder: ``python -c`` puts the working directory first on ``sys.path``.
        result = subprocess.run(argv, env=env, cwd=captions_file.parent, capture_output=True, text=True, check=True)
        rate = float(result.stdout.split()[-1])
        scores[f"{tree}{dtype}"] = np.load(saved)
        return rate

    for _ in range(repeats):
        for tree in trees:
            runs[tree].append(child(tree))
    results = {tree: {"captions_per_s": statistics.median(values), "runs": values} for tree, values in runs.items()}
    if "before" in trees:
        child("before", "float32")
        results["speedup"] = results["after"]["captions_per_s"] / results["before"]["captions_per_s"]
        for reference in ("before", "beforefloat32"):
            difference = abs_differences(scores["after"], scores[reference])
            results[f"after_vs_{reference}"] = {
                "max_abs": float(difference.max()),
                "mean_abs": float(difference.mean()),
            }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, help="a checkout of the code before (the folder holding modeling_icc)")
    parser.add_argument("--n", type=int, default=20_000, help="captions for icc filter and score()")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "mini_cpu.json")
    args = parser.parse_args()
    if args.before is not None and not (args.before / "modeling_icc").is_dir():
        sys.exit(f"--before {args.before}: no modeling_icc folder there")
    captions = synthetic_captions(args.n, seed=0)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        captions_file = Path(folder) / "captions.txt"
        captions_file.write_text("\n".join(captions) + "\n", encoding="utf-8")
        commands = command_rates(icc_command(), args.before, captions_file, args.repeats, args.n)
        trees = {"after": REPO} | ({"before": args.before} if args.before else {})
        results = {"commands": commands, "score": score_rates(trees, captions_file, args.repeats)}
    load = {"before": load_before, "after": os.getloadavg()[0]}
    write_result(
        "mini_cpu",
        args.out,
        results,
        captions=f"{args.n} synthetic LAION-like captions (modeling_icc.utils.provenance.synthetic_captions, seed 0)",
        before=str(args.before) if args.before else None,
        repeats=args.repeats,
        load_average_1min=load,
    )
    for name, row in commands.items():
        timing = ", ".join(f"{tree} {row[tree]['median_s']:.2f} s" for tree in ("before", "after") if tree in row)
        print(f"{name}: {timing}" + (f" ({row['speedup']:.2f}x)" if "speedup" in row else ""))
    score = results["score"]
    print(", ".join(f"score() {tree}: {score[tree]['captions_per_s']:,.0f}/s" for tree in trees))
    if "speedup" in score:
        print(
            f"score() speedup {score['speedup']:.2f}x; max |after - before| {score['after_vs_before']['max_abs']:.2e}"
        )


if __name__ == "__main__":
    main()
