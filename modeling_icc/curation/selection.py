"""Which rows a rule keeps: a threshold, a top fraction or a top k, and where a ranking rule cuts.

NaN values (blank or invalid captions) are never kept. Rankings break ties by
input order, so the same input always keeps the same rows. A top-k / top-fraction
rule over an input read in pieces (shards, chunks, blocks) is fitted once over the
ranking values of every piece (:func:`fit_cuts`) and applied to each piece by its
:class:`Cut`, without ever holding more than one float per row.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..utils.errors import UserInputError
from .columns import to_pylist


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
    if rule.threshold is not None:
        return np.nan_to_num(scores, nan=-np.inf) >= rule.threshold
    ranking = scores if ranking is None else np.asarray(ranking, dtype=np.float64)
    return fit_cuts([ranking], rule)[0].mask(ranking)


@dataclass(frozen=True)
class Cut:
    """Where a ranking rule cuts the whole input, applied to one piece of it.

    Keeps rows ranked above ``value``. Of the rows equal to it, keeps the first
    ``ties`` of this piece (in row order), or with ``last_tied_id`` those whose id
    is at most that id (exactly k rows without a global row order), or else all.
    """

    value: float
    ties: int | None = None
    last_tied_id: Any = None

    def mask(self, ranking: np.ndarray, ids: Any = None) -> np.ndarray:
        """Rows of a piece to keep, from its ranking values (and its ids, for ``last_tied_id``)."""
        ranking = np.asarray(ranking, dtype=np.float64)
        tied = ranking == self.value
        if self.last_tied_id is not None:
            import pyarrow.compute as pc

            tied &= ~pc.fill_null(pc.greater(_arrow(ids), self.last_tied_id), True).to_numpy(zero_copy_only=False)
        elif self.ties is not None:
            tied[np.flatnonzero(tied)[self.ties :]] = False
        return (np.nan_to_num(ranking, nan=-np.inf) > self.value) | tied


def fit_cuts(
    pieces: Sequence[np.ndarray], rule: KeepRule, *, ids: Sequence[Any] | None = None, ordered: bool = True
) -> list[Cut]:
    """Each piece's :class:`Cut` of ranking ``rule`` over all ``pieces`` together (NaN: never kept).

    Rows tied at the cut are kept in piece order, then row order (``ordered``: exactly
    :func:`keep_mask` over the concatenation); or, given one id column per piece, by
    smallest id; or else all of them.
    """
    if not rule.is_ranking:
        raise ValueError("fit_cuts is for top_k / top_fraction rules")
    values = [np.asarray(piece) for piece in pieces]  # no float64 copies held: one value per row is all there is
    valid = np.concatenate([piece.astype(np.float64) for piece in values] or [np.zeros(0)])
    valid = valid[~np.isnan(valid)]
    k = rule.top_count(len(valid))
    if k == 0:
        return [Cut(np.inf, ties=0) for _ in values]
    cutoff = float(np.partition(valid, len(valid) - k)[len(valid) - k])
    budget = k - int((valid > cutoff).sum())
    del valid
    if ids is not None:
        return [Cut(cutoff, last_tied_id=_last_tied_id(values, ids, cutoff, budget))] * len(values)
    if not ordered:
        return [Cut(cutoff)] * len(values)
    cuts = []
    for piece in values:
        ties = min(budget, int((piece == cutoff).sum()))
        cuts.append(Cut(cutoff, ties))
        budget -= ties
    return cuts


def _last_tied_id(values: list[np.ndarray], ids: Sequence[Any], cutoff: float, budget: int) -> Any:
    """The largest id kept among the rows tied at ``cutoff`` (``None``: all of them are kept)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    tied = pa.chunked_array(
        [pc.filter(_arrow(piece_ids), pa.array(piece == cutoff)) for piece, piece_ids in zip(values, ids, strict=True)]
    )
    if tied.null_count or len(pc.unique(tied)) < len(tied):
        raise UserInputError("tie-break ids must be unique and non-null; rows tied at the cut repeat one")
    if budget >= len(tied):
        return None
    return pc.take(tied, pc.sort_indices(tied))[budget - 1].as_py()


def _arrow(values: Any) -> Any:
    import pyarrow as pa

    return values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(to_pylist(values))
