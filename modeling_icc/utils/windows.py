"""Overlapping token windows: how ``mini`` reads a caption longer than its 128-token window.

A caption of ``n`` word pieces (between ``[CLS]`` and ``[SEP]``) that fits one window is read as
it is. A longer one is cut into windows of ``max_length - 2`` word pieces, each wrapped in ``[CLS]``
... ``[SEP]``: the first starts at piece 0 (so it is exactly what truncation gives), the next ones
every ``stride`` pieces, and the last ends at the caption's end. The caption's logit is a weighted
mean of the window logits, window ``k`` weighing ``WINDOW_DECAY ** k`` (:func:`window_weights`): every
piece is read in at least one window and every window counts, the first (where a caption's description
usually is) the most.

Used by the scorer (``scoring/mini.py``) and by mini's fit (``training/fit_mini.py``), which averages
window features with the same weights: the heads are affine and the weights sum to 1, so that is the same thing.
"""

from __future__ import annotations

import numpy as np

#: Word pieces between window starts: windows overlap by half, so every piece has context on both sides
#: in some window.
WINDOW_OVERLAP = 2
#: Each window's logit weighs this much relative to the window before it (1: the plain mean). Chosen by
#: cross-validation on the 203 fitting captions and their noisy copies (``docs/mini.md``, long captions;
#: the table is in ``mini_heads.report.json``); changing it needs a refit.
WINDOW_DECAY = 0.3


def window_starts(n_pieces: int, width: int, stride: int) -> list[int]:
    """Start offsets (in word pieces) of the windows over ``n_pieces``; ``[0]`` when they fit one window."""
    if n_pieces <= width:
        return [0]
    last = n_pieces - width
    starts = list(range(0, last, stride))
    return [*starts, last]


def window_piece_starts(n_pieces: int, max_length: int) -> list[int]:
    """Where each window of a caption of ``n_pieces`` word pieces starts (0 for the first)."""
    width = max_length - 2
    return window_starts(n_pieces, width, max(width // WINDOW_OVERLAP, 1))


def split_windows(token_ids: list[int], max_length: int) -> list[list[int]]:
    """``[CLS] pieces [SEP]`` cut into windows of at most ``max_length`` ids (see the module docstring)."""
    width = max_length - 2
    cls, body, sep = token_ids[0], token_ids[1:-1], token_ids[-1]
    if len(body) <= width:
        return [token_ids]
    return [[cls, *body[start : start + width], sep] for start in window_piece_starts(len(body), max_length)]


def window_weights(n_windows: int, decay: float | None = None) -> np.ndarray:
    """Weight of each window's logit in the caption's logit: ``decay ** k`` for window ``k`` (default
    :data:`WINDOW_DECAY`), summing to 1, so the heads, which are affine, give the same logit on the
    weighted mean of the window features (how mini's fit reads a long text)."""
    decay = WINDOW_DECAY if decay is None else decay
    if not 0.0 < decay <= 1.0:
        raise ValueError(f"window decay must be in (0, 1], got {decay}")
    weights = decay ** np.arange(n_windows, dtype=np.float64)
    return weights / weights.sum()
