"""Overlapping token windows: how ``mini`` reads a caption longer than its 128-token window.

A caption of ``n`` word pieces (between ``[CLS]`` and ``[SEP]``) that fits one window is read as
it is. A longer one is cut into windows of ``max_length - 2`` word pieces, each wrapped in ``[CLS]``
... ``[SEP]``: the first starts at piece 0 (so it is exactly what truncation gives), the next ones
every ``stride`` pieces, and the last ends at the caption's end. The caption's logit is the mean of
the window logits (:func:`window_weights`); every piece is read in at least one window.

Used by the scorer (``scoring/mini.py``) and by mini's fit (``training/fit_mini.py``), which averages
window features with the same weights: the heads are linear, so that is the same thing.
"""

from __future__ import annotations

import numpy as np

#: Word pieces between window starts: windows overlap by half, so every piece has context on both sides
#: in some window. Not chosen by cross-validation: an in-sample check on long copies of the fitting
#: captions ranked other rules higher (``docs/mini.md``, limits); changing the rule needs a refit.
WINDOW_OVERLAP = 2


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


def window_weights(n_windows: int) -> np.ndarray:
    """Weight of each window's logit in the caption's logit: the plain mean."""
    return np.full(n_windows, 1.0 / n_windows)
