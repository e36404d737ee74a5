"""Per-length logit-normal standardization of teacher similarities.

Reconstruction gets harder with caption length, so raw similarities mostly
measure length. Within each length bucket (in words) we take ``logit(p)``,
standardize it, and map back through the sigmoid so every bucket follows the
same logit-normal LN(``target_mean``, ``target_sd``) — LN(0.5, 1) as in the paper.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .saved_json import SavedAsJSON

#: Similarities are clipped to [EPSILON, 1 - EPSILON] before the logit (an exact 0 or 1 is common).
EPSILON = 1e-4
#: Lengths with fewer captions than this are pooled with neighbouring lengths into one bucket.
MIN_BUCKET_SIZE = 50
#: A bucket whose logit standard deviation is below this counts as constant.
CONSTANT_SD = 1e-9


@dataclass
class Bucket:
    """Caption lengths sharing one logit mean and standard deviation."""

    lengths: list[int]
    count: int
    logit_mean: float
    logit_sd: float


class LengthStandardizer(SavedAsJSON):
    """Fit per-length logit statistics; map similarities to length-free scores in (0, 1).

    Buckets: lengths are visited from shortest to longest and merged until a bucket
    holds at least ``min_bucket_size`` captions; a short last bucket joins the one
    before it. A bucket whose logits are all equal (sd 0) maps to the sigmoid of
    ``target_mean``. At transform time a length seen in the fit uses its bucket; an
    unseen length uses the bucket of the nearest seen length (the shorter on a tie).
    Order is preserved within a bucket (the map is increasing).
    """

    FORMAT = "icc-length-standardizer/1"

    def __init__(
        self,
        epsilon: float = EPSILON,
        min_bucket_size: int = MIN_BUCKET_SIZE,
        target_mean: float = 0.5,
        target_sd: float = 1.0,
    ) -> None:
        if not 0 < epsilon < 0.5:
            raise ValueError(f"epsilon must be in (0, 0.5), got {epsilon}")
        if min_bucket_size < 2:
            raise ValueError(f"min_bucket_size must be at least 2, got {min_bucket_size}")
        if target_sd <= 0:
            raise ValueError(f"target_sd must be positive, got {target_sd}")
        self.epsilon = epsilon
        self.min_bucket_size = min_bucket_size
        self.target_mean = target_mean
        self.target_sd = target_sd
        self.buckets: list[Bucket] = []

    # ----- fitting ----------------------------------------------------------------------------

    def fit(self, similarities: np.ndarray, n_words: np.ndarray) -> LengthStandardizer:
        logits, lengths = self._validate(similarities, n_words)
        if len(logits) < self.min_bucket_size:
            raise ValueError(f"need at least min_bucket_size={self.min_bucket_size} captions to fit, got {len(logits)}")
        self.buckets = []
        for group in self._group_lengths(lengths):
            values = logits[np.isin(lengths, group)]
            sd = float(values.std())
            sd = 0.0 if sd < CONSTANT_SD else sd  # rounding noise of identical values is not spread
            self.buckets.append(Bucket(group, int(values.size), float(values.mean()), sd))
        return self

    def fit_transform(self, similarities: np.ndarray, n_words: np.ndarray) -> np.ndarray:
        return self.fit(similarities, n_words).transform(similarities, n_words)

    def _group_lengths(self, lengths: np.ndarray) -> list[list[int]]:
        seen, counts = np.unique(lengths, return_counts=True)
        groups: list[list[int]] = []
        current, size = [], 0
        for length, count in zip(seen.tolist(), counts.tolist(), strict=True):
            current.append(length)
            size += count
            if size >= self.min_bucket_size:
                groups.append(current)
                current, size = [], 0
        if current:  # a short tail joins the last full bucket
            groups[-1].extend(current)
        return groups

    # ----- applying ---------------------------------------------------------------------------

    def transform(self, similarities: np.ndarray, n_words: np.ndarray) -> np.ndarray:
        """Standardized scores in (0, 1), same order as the input."""
        if not self.buckets:
            raise ValueError("LengthStandardizer is not fitted; call fit() or load()")
        logits, lengths = self._validate(similarities, n_words)
        index = self.bucket_index(lengths)
        means = np.array([b.logit_mean for b in self.buckets])[index]
        sds = np.array([b.logit_sd for b in self.buckets])[index]
        z = np.divide(logits - means, sds, out=np.zeros_like(logits), where=sds > 0)
        return _sigmoid(self.target_mean + self.target_sd * z)

    def bucket_index(self, n_words: np.ndarray) -> np.ndarray:
        """Bucket of each length: its own if seen in the fit, else the nearest seen length's."""
        seen = np.array(sorted(length for bucket in self.buckets for length in bucket.lengths))
        owner = {length: i for i, bucket in enumerate(self.buckets) for length in bucket.lengths}
        lengths = np.asarray(n_words, dtype=np.int64)
        right = np.clip(np.searchsorted(seen, lengths), 0, len(seen) - 1)
        left = np.clip(right - 1, 0, len(seen) - 1)
        nearest = np.where(np.abs(lengths - seen[left]) <= np.abs(seen[right] - lengths), seen[left], seen[right])
        return np.array([owner[int(length)] for length in nearest], dtype=np.int64)

    def _validate(self, similarities: np.ndarray, n_words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = np.asarray(similarities, dtype=np.float64)
        lengths = np.asarray(n_words)
        if p.ndim != 1 or lengths.shape != p.shape:
            raise ValueError(f"similarities and n_words must be 1-D of equal length, got {p.shape} and {lengths.shape}")
        if np.isnan(p).any():
            rows = np.flatnonzero(np.isnan(p))[:5].tolist()
            raise ValueError(f"similarities contain NaN (rows {rows}); drop or re-score those captions")
        if ((p < 0) | (p > 1)).any():
            rows = np.flatnonzero((p < 0) | (p > 1))[:5].tolist()
            raise ValueError(f"similarities must lie in [0, 1]; rows {rows} do not")
        if not np.issubdtype(lengths.dtype, np.integer) or (lengths < 0).any():
            raise ValueError("n_words must be non-negative integers")
        clipped = np.clip(p, self.epsilon, 1 - self.epsilon)
        return np.log(clipped) - np.log1p(-clipped), lengths.astype(np.int64)

    # ----- persistence ------------------------------------------------------------------------

    def to_dict(self) -> dict:
        return {
            "format": self.FORMAT,
            "epsilon": self.epsilon,
            "min_bucket_size": self.min_bucket_size,
            "target_mean": self.target_mean,
            "target_sd": self.target_sd,
            "buckets": [vars(bucket) for bucket in self.buckets],
        }

    @classmethod
    def from_dict(cls, data: dict) -> LengthStandardizer:
        cls.check_format(data)
        standardizer = cls(data["epsilon"], data["min_bucket_size"], data["target_mean"], data["target_sd"])
        standardizer.buckets = [Bucket(**bucket) for bucket in data["buckets"]]
        return standardizer


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))
