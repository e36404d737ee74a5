"""Sharded top-k / top-fraction: memory of fitting the cuts over every shard's saved ranking values.

A sharded ``icc filter --output-dir`` with a ranking rule saves each shard's ranking values
to ``.icc-work/`` (phase one), then fits the cuts over all of them in the main process. This
measures that fit on ``--rows`` values in ``--shards`` files laid out as the job writes them
(the ICC raw score as float32, a two-decimal CLIPScore column as float64: many ties), for

- ``in passes`` (what the job does): ``FilterPlan.fit_in_passes`` over
  each shard's :class:`~modeling_icc.curation.engines.unit_scores.SavedScores`, one shard read at a time;
- ``in memory`` (before): every shard's values loaded, then ``FilterPlan.fit``.

Both must give the same cuts (checked). Peak is ``tracemalloc``'s (numpy's buffers are
traced), so it counts what the fit allocates and not the interpreter. Medians of ``--repeats``.

    python benchmarks/speed/shard_ranking_memory.py --rows 10000000 --shards 20 --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np
from result_file import write_result

from modeling_icc.curation.engines.unit_scores import ChainedRanking, SavedScores
from modeling_icc.curation.filter_plan import ColumnRule, Cuts, FilterPlan
from modeling_icc.curation.selection import KeepRule

RESULTS = Path(__file__).resolve().parent / "results"
PLAN = FilterPlan(rule=KeepRule(top_fraction=0.3), other=ColumnRule("clip_score", KeepRule(top_fraction=0.5)))


def write_shards(directory: Path, rows: int, n_shards: int) -> list[SavedScores]:
    rng = np.random.default_rng(0)
    shards = []
    for index, size in enumerate(np.diff(np.linspace(0, rows, n_shards + 1).astype(int))):
        raw = rng.normal(0.5, 0.2, size).astype(np.float32)
        path = directory / f"{index:05d}.raw.npz"
        np.savez(path, icc_raw=raw, rank_icc=raw, rank_other=rng.random(size).round(2))
        shards.append(SavedScores(path))
    return shards


def in_passes(shards: list[SavedScores]) -> list[Cuts]:
    return PLAN.fit_in_passes({name: ChainedRanking(shards, name) for name in PLAN.ranked()})


def in_memory(shards: list[SavedScores]) -> list[Cuts]:
    saved = []
    for shard in shards:
        with np.load(shard.path, allow_pickle=False) as arrays:
            saved.append({name: arrays[f"rank_{name}"] for name in PLAN.ranked()})
    return PLAN.fit(saved)


def measure(
    fit: Callable[[list[SavedScores]], list[Cuts]], shards: list[SavedScores]
) -> tuple[list[Cuts], float, float]:
    """The cuts, the peak MB traced while fitting them, and the seconds it took."""
    tracemalloc.start()
    start = time.perf_counter()
    cuts = fit(shards)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return cuts, peak, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--shards", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "shard_ranking_memory.json")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="icc-bench-") as directory:
        shards = write_shards(Path(directory), args.rows, args.shards)
        reference = None
        for name, fit in (("in passes", in_passes), ("in memory", in_memory)):
            runs = [measure(fit, shards) for _ in range(args.repeats)]
            cuts = runs[0][0]
            if reference is not None and cuts != reference:
                raise RuntimeError("fitting in passes and in memory gave different cuts")
            reference = cuts
            results[name] = {
                "peak_mb": round(statistics.median(run[1] for run in runs), 1),
                "seconds": round(statistics.median(run[2] for run in runs), 2),
                "runs": [{"peak_mb": round(run[1], 1), "seconds": round(run[2], 2)} for run in runs],
            }
            print(f"{name}: peak {results[name]['peak_mb']} MB, {results[name]['seconds']} s")
    write_result(
        "shard_ranking_memory",
        args.out,
        results,
        rows=args.rows,
        shards=args.shards,
        plan=PLAN.describe(),
        repeats=args.repeats,
        same_cuts=True,
    )


if __name__ == "__main__":
    main()
