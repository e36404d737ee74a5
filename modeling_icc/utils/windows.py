"""Overlapping token windows: how ``mini`` reads a caption longer than its 128-token window.

A caption of ``n`` word pieces (between ``[CLS]`` and ``[SEP]``) that fits one window is read as
it is. A longer one is cut into windows of ``max_length - 2`` word pieces, each wrapped in ``[CLS]``
... ``[SEP]``: the first starts at piece 0 (so it is exactly what truncation gives), the next ones
every ``stride`` pieces, and the last ends at the caption's end. The caption's logit is a weighted
mean of the window logits, window ``k`` weighing ``WINDOW_DECAY ** k`` (:func:`window_weights`): every
piece is read in at least one window and every window counts, the first (where a caption's description
usually is) the most. Past :data:`MAX_WINDOWS` windows, where the rest could not change a score, reading
stops: a longer caption is read in its first :data:`MAX_WINDOWS` windows at their stride, and the pieces
after them (:func:`pieces_read`) are neither read nor tokenized.

Used by the scorer (``scoring/mini.py``) and by mini's fit (``training/fit_mini.py``), which averages
window features with the same weights: the heads are affine and the weights sum to 1, so that is the same thing.
"""

from __future__ import annotations

import string

import numpy as np

#: Word pieces between window starts: windows overlap by half, so every piece has context on both sides
#: in some window.
WINDOW_OVERLAP = 2
#: Each window's logit weighs this much relative to the window before it (1: the plain mean). Chosen by
#: cross-validation on the 203 fitting captions and their noisy copies (``docs/mini.md``, long captions;
#: the table is in ``mini_heads.report.json``); changing it needs a refit.
WINDOW_DECAY = 0.3
#: Most windows read. Window k weighs ``WINDOW_DECAY ** k`` (normalized), so the windows after the 20th weigh
#: less than ``0.3 ** 20 / 0.7``, about 5e-11, together: reading them could move a caption's logit by less
#: than 1e-9, under float32's resolution of its score. A caption longer than 20 windows (about 1,300 word
#: pieces) is read in its first 20, in time that stops growing with its length.
MAX_WINDOWS = 20


def window_starts(n_pieces: int, width: int, stride: int) -> list[int]:
    """Start offsets (in word pieces) of the windows over ``n_pieces``; ``[0]`` when they fit one window."""
    if n_pieces <= width:
        return [0]
    last = n_pieces - width
    starts = list(range(0, last, stride))
    return [*starts, last]


def window_piece_starts(n_pieces: int, max_length: int) -> list[int]:
    """Where each window of a caption of ``n_pieces`` word pieces starts (0 for the first); at most
    :data:`MAX_WINDOWS`, the first ones."""
    width = max_length - 2
    return window_starts(n_pieces, width, max(width // WINDOW_OVERLAP, 1))[:MAX_WINDOWS]


def pieces_read(max_length: int) -> int:
    """Word pieces past which a caption's windows no longer change: with more, they are the first
    :data:`MAX_WINDOWS` at their stride, and no piece after them is read."""
    width = max_length - 2
    return width + (MAX_WINDOWS - 1) * max(width // WINDOW_OVERLAP, 1) + 1


#: Characters after which BERT-style pre-tokenization always starts a new word (a space, ASCII punctuation).
_WORD_ENDS = " " + string.punctuation


def boundary_prefix(text: str, chars: int) -> str:
    """The longest prefix of ``text`` of at most ``chars`` characters that ends just after a space or an ASCII
    punctuation mark, where a BERT-style tokenizer starts a new word: it tokenizes into the same first pieces
    as ``text``. ``text`` itself when it is that short or has no such place."""
    if len(text) <= chars:
        return text
    end = max(text.rfind(char, 0, chars) for char in _WORD_ENDS)
    return text[: end + 1] if end >= 0 else text


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
