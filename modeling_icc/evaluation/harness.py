"""Run scorers over benchmark sets and collect correlations with human ratings.

Scores are taken raw (``score(..., raw=True)``): clipping the published
model's outputs at 1 would create ties that change rank correlations.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from tqdm.auto import tqdm

from ..scoring.base import ConcretenessScorer
from .bootstrap import DEFAULT_BOOTSTRAP, Bootstrap
from .data import IN_SAMPLE_NOTES, PUBLISHED, BenchmarkSet

if TYPE_CHECKING:  # scipy: loaded only when a benchmark runs (``icc bench --help`` imports this module)
    from .metrics import CorrelationReport

#: Row label of the scores that ship with a benchmark file (the published model's ``icc_score``).
PUBLISHED_LABEL = "published ICC (scores as released)"


@dataclass(frozen=True)
class BenchScorer:
    """A scorer as it appears in results: ``name`` (registry key), ``label`` (table row) and the scorer.

    ``scorer`` is None for :data:`~modeling_icc.evaluation.data.PUBLISHED`, whose
    scores come with the benchmark file. ``in_sample`` holds the ``data_id`` of the
    benchmark data the scorer reads or was fitted on (its rows there are flagged).
    """

    name: str
    label: str
    scorer: ConcretenessScorer | None
    in_sample: frozenset[str] = frozenset()

    @property
    def scorer_id(self) -> str:
        return self.scorer.model_id if self.scorer is not None else "icc_score column"


@dataclass(frozen=True)
class BenchResult:
    benchmark: str
    scorer: BenchScorer
    scores: np.ndarray
    report: CorrelationReport
    seconds: float
    #: Why this row is not a held-out result (empty when it is).
    in_sample_note: str = ""
    #: On noisy copies: the same scorer's scores here against its scores on the clean texts (stability).
    versus_clean: CorrelationReport | None = None
    #: On sets of several kinds (``web_junk``): per kind, the fraction of texts scoring at least the set's
    #: ``keep_threshold`` (NaN is not kept).
    kept: dict[str, float] | None = None

    def to_dict(self) -> dict:
        return {
            "benchmark": self.benchmark,
            "scorer": self.scorer.name,
            "label": self.scorer.label,
            "scorer_id": self.scorer.scorer_id,
            "in_sample": self.in_sample_note or None,
            **self.report.to_dict(),
            **({"versus_clean": self.versus_clean.to_dict()} if self.versus_clean is not None else {}),
            **({"kept_fraction": {kind: round(value, 4) for kind, value in self.kept.items()}} if self.kept else {}),
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True)
class Skipped:
    benchmark: str
    scorer: str
    reason: str


def scores_for(entry: BenchScorer, benchmark: BenchmarkSet) -> np.ndarray | None:
    """The scorer's raw scores on the benchmark (None when it does not apply)."""
    if entry.scorer is None:
        return benchmark.reference_scores.get(entry.name)
    return entry.scorer.score(benchmark.texts, errors="nan", raw=True).astype(float)


def run_benchmarks(
    benchmarks: Sequence[BenchmarkSet],
    scorers: Sequence[BenchScorer],
    *,
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
    progress: bool = True,
) -> tuple[list[BenchResult], list[Skipped]]:
    """Every scorer on every benchmark, in the given order; reference rows only where the data has them."""
    from .metrics import correlate  # scipy: loaded only when a benchmark runs

    results, skipped = [], []
    pairs = [(benchmark, entry) for benchmark in benchmarks for entry in scorers]
    # disable=None: the bar shows on a terminal only
    for benchmark, entry in tqdm(pairs, desc="icc bench", unit="run", disable=None if progress else True):
        start = time.perf_counter()
        scores = scores_for(entry, benchmark)
        seconds = time.perf_counter() - start
        if scores is None:
            reason = f"the {benchmark.name} benchmark has no {PUBLISHED} scores column"
            if benchmark.clean_of:
                reason = f"{PUBLISHED} scores were released for the clean captions only"
            skipped.append(Skipped(benchmark.name, entry.name, reason))
            continue
        report = correlate(scores, benchmark.labels, bootstrap)
        note = IN_SAMPLE_NOTES.get(benchmark.data_id, "") if benchmark.data_id in entry.in_sample else ""
        clean = next((r for r in results if r.benchmark == benchmark.clean_of and r.scorer.name == entry.name), None)
        versus_clean = None if clean is None else correlate(scores, clean.scores, bootstrap)
        kept = kept_fractions(scores, benchmark) if benchmark.groups else None
        results.append(BenchResult(benchmark.name, entry, scores, report, seconds, note, versus_clean, kept))
    return results, skipped


def kept_fractions(scores: np.ndarray, benchmark: BenchmarkSet) -> dict[str, float]:
    """Per kind of text, the fraction scoring at least the benchmark's keep threshold (as ``icc filter`` keeps)."""
    groups = np.array(benchmark.groups)
    with np.errstate(invalid="ignore"):
        kept = np.asarray(scores, dtype=float) >= benchmark.keep_threshold
    return {kind: float(kept[groups == kind].mean()) for kind in dict.fromkeys(benchmark.groups)}
