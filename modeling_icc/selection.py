"""Which rows a filter keeps: one rule among threshold, top fraction and top k.

NaN scores (blank or invalid captions) are never kept. Rankings break ties by
input order, so the same input always keeps the same rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .errors import UserInputError


@dataclass(frozen=True)
class KeepRule:
    """Exactly one of ``threshold`` (keep score >= t), ``top_fraction`` (0-1] or ``top_k``."""

    threshold: float | None = None
    top_fraction: float | None = None
    top_k: int | None = None

    def __post_init__(self) -> None:
        given = [value is not None for value in (self.threshold, self.top_fraction, self.top_k)]
        if sum(given) != 1:
            raise UserInputError("give exactly one of threshold, top_fraction or top_k")
        if self.top_fraction is not None and not 0.0 < self.top_fraction <= 1.0:
            raise UserInputError(f"top_fraction must be in (0, 1], got {self.top_fraction}")
        if self.top_k is not None and self.top_k < 0:
            raise UserInputError(f"top_k must be >= 0, got {self.top_k}")

    @property
    def is_ranking(self) -> bool:
        """Top-k and top-fraction compare each row with all others, so they need every score first."""
        return self.threshold is None

    def describe(self) -> str:
        if self.threshold is not None:
            return f"score >= {self.threshold:g}"
        if self.top_fraction is not None:
            return f"top {self.top_fraction:.1%} of scored rows"
        return f"top {self.top_k} rows"


def keep_mask(scores: np.ndarray, rule: KeepRule, ranking: np.ndarray | None = None) -> np.ndarray:
    """Boolean mask of rows to keep.

    ``ranking`` (default: ``scores``) orders rows for top-k/top-fraction; pass the
    raw, unclipped scores so that rows clipped to 1.0 keep their true order.
    """
    scores = np.asarray(scores, dtype=np.float64)
    valid = ~np.isnan(scores)
    if rule.threshold is not None:
        return valid & (np.nan_to_num(scores, nan=-np.inf) >= rule.threshold)
    n_valid = int(valid.sum())
    k = rule.top_k if rule.top_k is not None else math.floor(rule.top_fraction * n_valid + 0.5)
    k = min(k, n_valid)
    order_by = np.asarray(scores if ranking is None else ranking, dtype=np.float64)
    keys = np.where(valid, -order_by, np.inf)
    chosen = np.argsort(keys, kind="stable")[:k]
    mask = np.zeros(scores.shape[0], dtype=bool)
    mask[chosen] = True
    return mask
