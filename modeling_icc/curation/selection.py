"""Which rows a filter keeps: one rule among threshold, top fraction and top k.

NaN scores (blank or invalid captions) are never kept. Rankings break ties by
input order, so the same input always keeps the same rows.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from ..utils.errors import UserInputError


@dataclass(frozen=True)
class KeepRule:
    """Exactly one of ``threshold`` (keep score >= t), ``top_fraction`` (0-1] or ``top_k``.

    Validated on creation, so every engine and the CLI refuse the same bad rules:
    ``threshold`` is a finite number (NaN or infinity would silently keep no row or
    every row), ``top_fraction`` a number in (0, 1], ``top_k`` an integer >= 0. A wrong
    type (a string, a bool) raises ``TypeError``; a wrong value ``UserInputError``.
    Values are stored as plain ``float`` / ``int`` (NumPy scalars are accepted).
    """

    threshold: float | None = None
    top_fraction: float | None = None
    top_k: int | None = None

    def __post_init__(self) -> None:
        given = [value is not None for value in (self.threshold, self.top_fraction, self.top_k)]
        if sum(given) != 1:
            raise UserInputError("give exactly one of threshold, top_fraction or top_k")
        if self.threshold is not None:
            object.__setattr__(self, "threshold", _finite_number("threshold", self.threshold))
        if self.top_fraction is not None:
            fraction = _finite_number("top_fraction", self.top_fraction)
            if not 0.0 < fraction <= 1.0:
                raise UserInputError(f"top_fraction must be in (0, 1], got {fraction:g}")
            object.__setattr__(self, "top_fraction", fraction)
        if self.top_k is not None:
            if isinstance(self.top_k, bool) or not isinstance(self.top_k, numbers.Integral):
                raise TypeError(f"top_k must be an integer, got {type(self.top_k).__name__} {self.top_k!r}")
            if self.top_k < 0:
                raise UserInputError(f"top_k must be >= 0, got {self.top_k}")
            object.__setattr__(self, "top_k", int(self.top_k))

    @property
    def is_ranking(self) -> bool:
        """Top-k and top-fraction compare each row with all others, so they need every score first."""
        return self.threshold is None

    def top_count(self, n_valid: int) -> int:
        """How many of ``n_valid`` scored rows a top-k / top-fraction rule keeps."""
        k = self.top_k if self.top_k is not None else math.floor(self.top_fraction * n_valid + 0.5)
        return min(k, n_valid)

    def describe(self) -> str:
        if self.threshold is not None:
            return f"score >= {self.threshold:g}"
        if self.top_fraction is not None:
            return f"top {self.top_fraction:.1%} of scored rows"
        return f"top {self.top_k} rows"


def _finite_number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise UserInputError(f"{name} must be a finite number, got {number}")
    return number


def keep_mask(scores: np.ndarray, rule: KeepRule, ranking: np.ndarray | None = None) -> np.ndarray:
    """Boolean mask of rows to keep.

    ``ranking`` (default: ``scores``) orders rows for top-k/top-fraction; pass the
    raw, unclipped scores so that rows clipped to 1.0 keep their true order.
    """
    scores = np.asarray(scores, dtype=np.float64)
    valid = ~np.isnan(scores)
    if rule.threshold is not None:
        return valid & (np.nan_to_num(scores, nan=-np.inf) >= rule.threshold)
    k = rule.top_count(int(valid.sum()))
    order_by = np.asarray(scores if ranking is None else ranking, dtype=np.float64)
    keys = np.where(valid, -order_by, np.inf)
    chosen = np.argsort(keys, kind="stable")[:k]
    mask = np.zeros(scores.shape[0], dtype=bool)
    mask[chosen] = True
    return mask


@dataclass(frozen=True)
class RankCut:
    """One shard's share of a top-k / top-fraction rule ranked over many shards.

    Keeps rows whose value is above ``cutoff``, plus the first ``ties`` rows
    (in shard order) whose value equals it: with shards in input order this is
    exactly :func:`keep_mask` over all rows concatenated, without ever holding
    more than one float per row.
    """

    cutoff: float
    ties: int

    def mask(self, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=np.float64)
        mask = np.nan_to_num(values, nan=-np.inf) > self.cutoff
        mask[np.flatnonzero(values == self.cutoff)[: self.ties]] = True
        return mask


def piece_mask(rule: KeepRule, values: np.ndarray, ranking: np.ndarray, cut: RankCut | None) -> np.ndarray:
    """Rows of one piece of a larger input (a shard, a chunk) that ``rule`` keeps.

    A ranking rule needs ``cut``, the piece's share from :func:`rank_cuts` over all pieces.
    """
    if not rule.is_ranking:
        return keep_mask(values, rule)
    if cut is None:
        raise ValueError("a top-k / top-fraction rule over pieces needs each piece's RankCut")
    return cut.mask(ranking)


def rank_cuts(shard_values: list[np.ndarray], rule: KeepRule) -> list[RankCut]:
    """Per-shard cuts of a ranking rule over ``shard_values`` (ranking values per shard, NaN = never kept)."""
    if not rule.is_ranking:
        raise ValueError("rank_cuts is for top_k / top_fraction rules")
    valid = np.concatenate([np.asarray(v, dtype=np.float64) for v in shard_values] or [np.zeros(0)])
    valid = valid[~np.isnan(valid)]
    k = rule.top_count(len(valid))
    if k == 0:
        return [RankCut(np.inf, 0) for _ in shard_values]
    cutoff = float(np.partition(valid, len(valid) - k)[len(valid) - k])
    budget = k - int((valid > cutoff).sum())
    cuts = []
    for values in shard_values:
        ties = min(budget, int((np.asarray(values, dtype=np.float64) == cutoff).sum()))
        cuts.append(RankCut(cutoff, ties))
        budget -= ties
    return cuts
