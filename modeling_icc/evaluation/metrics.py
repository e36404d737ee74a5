"""Correlation metrics with paired bootstrap confidence intervals.

Pearson and Spearman are computed in numpy, vectorized over bootstrap
resamples; Kendall's tau-b uses scipy's O(n log n) implementation per
resample, so that the 12k-phrase benchmark bootstraps in seconds. Pairs with
a NaN on either side are dropped first and counted.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from .bootstrap import DEFAULT_BOOTSTRAP, Bootstrap

METRICS = ("pearson", "spearman", "kendall")
#: Bootstrap resamples handled per vectorized step (bounds memory on large benchmarks).
_CHUNK_ROWS = 64


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its bootstrap interval (``low``/``high``; NaN when undefined)."""

    value: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float | None]:
        return {key: (None if np.isnan(value) else round(float(value), 4)) for key, value in asdict(self).items()}


@dataclass(frozen=True)
class CorrelationReport:
    """Pearson, Spearman and Kendall of scores against labels, on ``n`` complete pairs."""

    n: int
    n_missing: int
    pearson: Estimate
    spearman: Estimate
    kendall: Estimate

    def to_dict(self) -> dict:
        return {
            "n": self.n,
            "n_missing": self.n_missing,
            **{name: getattr(self, name).to_dict() for name in METRICS},
        }


def _rowwise_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair of two 2-D arrays (NaN where a row is constant)."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    denominator = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.clip((xc * yc).sum(axis=1) / denominator, -1.0, 1.0)


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r (NaN when either side is constant)."""
    return float(_rowwise_pearson(np.asarray(x, float)[None], np.asarray(y, float)[None])[0])


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho: Pearson's r of average ranks (ties share their mean rank)."""
    return pearson(stats.rankdata(x), stats.rankdata(y))


def kendall(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b (tie-corrected), the variant usual for ordinal human labels."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(stats.kendalltau(x, y, variant="b").statistic)


def complete_pairs(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (score, label) pairs where neither side is NaN."""
    scores, labels = np.asarray(scores, float), np.asarray(labels, float)
    if scores.shape != labels.shape:
        raise ValueError(f"scores and labels differ in length: {scores.shape[0]} vs {labels.shape[0]}")
    keep = ~(np.isnan(scores) | np.isnan(labels))
    return scores[keep], labels[keep]


def correlate(scores: np.ndarray, labels: np.ndarray, bootstrap: Bootstrap = DEFAULT_BOOTSTRAP) -> CorrelationReport:
    """The three correlations with percentile bootstrap intervals.

    The same ``bootstrap.n_bootstrap`` resamples (drawn with ``numpy.random.default_rng(bootstrap.seed)``)
    serve all three metrics, so a given seed always gives the same intervals.
    Resamples in which a side is constant are left out of the percentiles.
    """
    if not 0.0 < bootstrap.confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {bootstrap.confidence}")
    x, y = complete_pairs(scores, labels)
    n = x.shape[0]
    points = {"pearson": pearson(x, y), "spearman": spearman(x, y), "kendall": kendall(x, y)}
    n_bootstrap = bootstrap.n_bootstrap
    samples = _bootstrap(x, y, n_bootstrap, bootstrap.seed) if n >= 3 and n_bootstrap > 0 else None
    tail = (1.0 - bootstrap.confidence) / 2.0 * 100.0
    estimates = {}
    for name, value in points.items():
        low = high = float("nan")
        if samples is not None and np.isfinite(samples[name]).any():
            low, high = np.nanpercentile(samples[name], [tail, 100.0 - tail])
        estimates[name] = Estimate(value, float(low), float(high))
    return CorrelationReport(n=n, n_missing=int(np.asarray(scores).shape[0] - n), **estimates)


def _bootstrap(x: np.ndarray, y: np.ndarray, n_bootstrap: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, x.shape[0], size=(n_bootstrap, x.shape[0]))
    out = {name: np.empty(n_bootstrap) for name in METRICS}
    for start in range(0, n_bootstrap, _CHUNK_ROWS):
        rows = indices[start : start + _CHUNK_ROWS]
        xs, ys = x[rows], y[rows]
        stop = start + rows.shape[0]
        out["pearson"][start:stop] = _rowwise_pearson(xs, ys)
        out["spearman"][start:stop] = _rowwise_pearson(stats.rankdata(xs, axis=1), stats.rankdata(ys, axis=1))
        out["kendall"][start:stop] = [kendall(a, b) for a, b in zip(xs, ys, strict=True)]
    return out
