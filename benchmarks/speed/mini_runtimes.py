"""mini's two CPU runtimes in one run: ONNX Runtime (the default where mini runs in fp32) against torch.

Issue 37's measures, each run a fresh process, the two runtimes alternating (``ICC_MINI_RUNTIME``), medians
of ``--repeats``:

- start-up: ``icc score --model mini "a dog"`` wall time;
- throughput: ``load_scorer("mini").score(captions)`` on ``--n`` CC3M validation captions (the shipped
  ones, repeated in order up to ``--n``; repeats within one call are scored once), timed in the child
  after loading;
- peak memory: ``icc filter --model mini --input N.txt --output kept.jsonl --threshold 0.5`` on
  ``--filter-n`` CC3M captions (peak RSS of the child, ``os.wait4``);
- scores: the largest difference between the runtimes (torch in fp32) on the first ``--compare-n``
  distinct CC3M captions, and how many fall on different sides of 0.5.

The graph is built (``onnx_graph.py``) before anything is timed, so no run pays for it. The children run
as a user's Python does, writing and reading bytecode caches (``PYTHONDONTWRITEBYTECODE`` is dropped from
their environment), after one untimed start-up of each runtime that writes them.

    python benchmarks/speed/mini_runtimes.py --repeats 5
"""

from __future__ import annotations

import argparse
import json
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

from modeling_icc.models.mini.files import shipped_heads_path
from modeling_icc.models.mini.onnx_graph import RUNTIME_ENV, mini_graph
from modeling_icc.scoring.mini import MiniScorer
from modeling_icc.scoring.mini_onnx import MiniOnnxScorer
from modeling_icc.utils.shipped_data import cc3m_captions, cc3m_distinct_captions

RESULTS = Path(__file__).resolve().parent / "results"
RUNTIMES = ("torch", "onnxruntime")
#: What the child runs to time scoring alone: load, then score the captions file, print the seconds.
SCORE_CHILD = """
import json, sys, time
from modeling_icc import load_scorer
captions = open(sys.argv[1], encoding="utf-8").read().splitlines()
scorer = load_scorer("mini", progress=False)
start = time.perf_counter()
scorer.score(captions)
print(json.dumps({"score_s": time.perf_counter() - start, "scorer": type(scorer).__name__}))
"""


def repeated_captions(n: int) -> list[str]:
    pool = [caption.replace("\n", " ") for caption in cc3m_captions()]
    return [pool[index % len(pool)] for index in range(n)]


def runtime_env(runtime: str) -> dict[str, str]:
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    return {**environment, RUNTIME_ENV: runtime}


def timed_scoring(captions_file: Path, runtime: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", SCORE_CHILD, str(captions_file)],
        capture_output=True,
        text=True,
        env=runtime_env(runtime),
        check=True,
    )
    return json.loads(result.stdout.splitlines()[-1])


def score_difference(n: int) -> dict:
    captions = list(cc3m_distinct_captions())[:n]
    onnx_scores = MiniOnnxScorer(progress=False).score(captions)
    torch_scores = MiniScorer(dtype="float32", progress=False).score(captions)
    difference = abs_differences(onnx_scores.astype(np.float64), torch_scores)
    return {
        "captions": len(captions),
        "max_abs_difference": float(difference.max()),
        "median_abs_difference": float(np.median(difference)),
        "verdicts_flipped_at_0_5": int(((onnx_scores > 0.5) != (torch_scores > 0.5)).sum()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n", type=int, default=20_000, help="captions scored for throughput")
    parser.add_argument("--filter-n", type=int, default=50_000, help="captions of the icc filter job")
    parser.add_argument("--compare-n", type=int, default=2_000, help="captions whose scores are compared")
    parser.add_argument("--out", type=Path, default=RESULTS / "mini_runtimes.json")
    args = parser.parse_args()
    mini_graph(shipped_heads_path())  # built (or verified) once, before any timing
    startup: dict[str, list[float]] = {runtime: [] for runtime in RUNTIMES}
    scoring: dict[str, list[float]] = {runtime: [] for runtime in RUNTIMES}
    peaks: dict[str, list[float]] = {runtime: [] for runtime in RUNTIMES}
    scorers: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="icc-runtimes-") as directory:
        work = Path(directory)
        scored, filtered = work / "score.txt", work / "filter.txt"
        scored.write_text("\n".join(repeated_captions(args.n)) + "\n", encoding="utf-8")
        filtered.write_text("\n".join(repeated_captions(args.filter_n)) + "\n", encoding="utf-8")
        one = [sys.executable, "-m", "modeling_icc", "score", "--model", "mini", "a dog"]
        job = [sys.executable, "-m", "modeling_icc", "filter", "--model", "mini", "--input", str(filtered)]
        job += ["--output", str(work / "kept.jsonl"), "--threshold", "0.5"]
        for runtime in RUNTIMES:  # untimed: writes the bytecode caches
            run_child(one, env=runtime_env(runtime))
        for _ in range(args.repeats):  # alternating, so both runtimes see the same load
            for runtime in RUNTIMES:
                startup[runtime].append(run_child(one, env=runtime_env(runtime)).wall_s)
                timing = timed_scoring(scored, runtime)
                scorers[runtime] = timing["scorer"]
                scoring[runtime].append(timing["score_s"])
                peaks[runtime].append(run_child(job, env=runtime_env(runtime)).peak_rss_mb)
    results = {}
    for runtime in RUNTIMES:
        results[runtime] = {
            "scorer": scorers[runtime],
            "startup_s": round(statistics.median(startup[runtime]), 3),
            "captions_per_s": round(args.n / statistics.median(scoring[runtime]), 1),
            "filter_peak_rss_mb": round(statistics.median(peaks[runtime]), 1),
            "runs": {
                "startup_s": [round(value, 3) for value in startup[runtime]],
                "score_s": [round(value, 3) for value in scoring[runtime]],
                "filter_peak_rss_mb": [round(value, 1) for value in peaks[runtime]],
            },
        }
    torch_result, onnx_result = results["torch"], results["onnxruntime"]
    results["onnxruntime_vs_torch"] = {
        "startup_speedup": round(torch_result["startup_s"] / onnx_result["startup_s"], 2),
        "throughput_ratio": round(onnx_result["captions_per_s"] / torch_result["captions_per_s"], 2),
        "filter_peak_rss_ratio": round(onnx_result["filter_peak_rss_mb"] / torch_result["filter_peak_rss_mb"], 2),
    }
    results["scores"] = score_difference(args.compare_n)
    print(json.dumps(results["onnxruntime_vs_torch"] | {"scores": results["scores"]}, indent=1))
    write_result(
        "mini_runtimes",
        args.out,
        results,
        repeats=args.repeats,
        n=args.n,
        filter_n=args.filter_n,
        cpu_count=os.cpu_count(),
    )


if __name__ == "__main__":
    main()
