"""What writing a unit did: its counts, and the quantiles of its scores without keeping the scores."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class ScoreStats:
    """Counts and quantiles of clipped scores without keeping them (a histogram of 100,000 bins), and the
    captions of each language: ``not_read`` counts the NaN scores of captions in a language the model does not
    read, apart from blank or non-text ones (whose language is ``None``)."""

    BINS = 100_000

    def __init__(self) -> None:
        self.counts = np.zeros(self.BINS + 1, dtype=np.int64)
        self.rows = 0
        self.nan = 0
        self.not_read = 0
        self.languages: Counter[str] = Counter()

    def add(self, scores: np.ndarray, languages: Sequence[str | None] = ()) -> None:
        """Count ``scores`` and, where given, the ``languages`` of the same captions."""
        missing = np.isnan(scores)
        valid = scores[~missing]
        self.rows += len(scores)
        self.nan += len(scores) - len(valid)
        if len(languages):
            named = np.fromiter((language is not None for language in languages), bool, len(languages))
            self.not_read += int(np.count_nonzero(missing & named))
            self.languages.update(language for language in languages if language is not None)
        bins = np.rint(valid.astype(np.float64) * self.BINS).astype(np.int64)
        self.counts += np.bincount(bins, minlength=self.BINS + 1)

    def quantiles(self, qs: list[float]) -> list[float] | None:
        """Linear-interpolated quantiles of the valid scores (as ``numpy.quantile``), to 1e-5."""
        n = self.rows - self.nan
        if n == 0:
            return None
        cumulative = np.cumsum(self.counts)

        def value(k: int) -> float:  # the k-th smallest score (0-based)
            return float(np.searchsorted(cumulative, k, side="right")) / self.BINS

        out = []
        for q in qs:
            position = q * (n - 1)
            low = int(np.floor(position))
            high = min(low + 1, n - 1)
            out.append(value(low) + (position - low) * (value(high) - value(low)))
        return out


@dataclass
class UnitResult:
    """What writing one unit did, for its summary (``stats`` counts captions: with lists of captions per row,
    every caption of every row; ``kept_captions``: those kept at node level)."""

    model_id: str
    stats: ScoreStats = field(default_factory=ScoreStats)
    rows: int = 0
    kept: int = 0
    kept_captions: int | None = None
    #: Rows written apart (``--other-languages apart``): in a language the model does not read.
    apart: int = 0
    non_text: int = 0
    decode_errors: int = 0
    seconds: float = 0.0
    escaped_line_breaks: int = 0
    base64_columns: list[str] = field(default_factory=list)
    kept_uids: list[np.ndarray] = field(default_factory=list)
    shown: list[tuple[Any, float, bool]] = field(default_factory=list)
    #: Uids written to the DataComp subset file, by a single-file job.
    subset_uids: int | None = None
