"""The first run of mini on a machine: building its ONNX graph, once, against a run that finds it built.

mini runs on ONNX Runtime on CPUs without native bf16, from a graph built at its first use into
``ICC_CACHE_DIR`` (``models/mini/onnx_graph.py``). This times ``icc score --model mini "a dog on a beach"`` in a
fresh process with ``ICC_MINI_RUNTIME=onnxruntime`` (so that any CPU takes that path), each of ``--repeats`` runs
into a new empty cache folder (the build), then once more into the last one (the graph found): wall seconds,
CPU seconds and peak RSS of the whole command, as ``child_process.py`` measures them. The build's notice line
(``icc: notice: building mini's ONNX graph ...``) quotes this range; docs/usage.md quotes the figures.

    python benchmarks/speed/mini_graph_build.py --repeats 3
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

from modeling_icc.models.mini.onnx_graph import CACHE_DIR_ENV, RUNTIME_ENV

RESULTS = Path(__file__).resolve().parent / "results"
COMMAND = [sys.executable, "-m", "modeling_icc", "score", "--model", "mini", "a dog on a beach"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "mini_graph_build.json")
    args = parser.parse_args()
    builds = []
    with tempfile.TemporaryDirectory() as scratch:
        for repeat in range(args.repeats):
            cache = Path(scratch) / f"cache-{repeat}"
            env = {**os.environ, CACHE_DIR_ENV: str(cache), RUNTIME_ENV: "onnxruntime"}
            builds.append(run_child(COMMAND, env=env))
            print(f"build {repeat}: {builds[-1]}")
        warm = run_child(COMMAND, env=env)
        print(f"graph found: {warm}")
    walls = [run.wall_s for run in builds]
    results = {
        "first run (graph built)": {
            "median_wall_s": round(statistics.median(walls), 2),
            "min_wall_s": round(min(walls), 2),
            "max_wall_s": round(max(walls), 2),
            "median_cpu_s": round(statistics.median(run.cpu_s for run in builds), 2),
            "max_peak_rss_mb": round(max(run.peak_rss_mb for run in builds), 1),
        },
        "later run (graph found)": {
            "wall_s": round(warm.wall_s, 2),
            "cpu_s": round(warm.cpu_s, 2),
            "peak_rss_mb": round(warm.peak_rss_mb, 1),
        },
    }
    write_result("mini_graph_build", args.out, results, repeats=args.repeats)


if __name__ == "__main__":
    main()
