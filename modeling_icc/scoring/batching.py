"""Length-sorted batching under a token budget: the scorer's main speed lever.

Captions are tokenized once, sorted by length, and cut into batches whose
padded size (rows x longest row) stays under a token budget, so short captions
travel in large batches and long ones in small batches, with little padding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import chain

import numpy as np

#: Default rounding of every batch's width (tensor-core friendly on GPUs; CPUs use 1).
PAD_MULTIPLE = 8


def padded_width(length: int, multiple: int = PAD_MULTIPLE) -> int:
    return -(-length // multiple) * multiple


def plan_batches(
    sorted_lengths: np.ndarray, max_rows: int, max_tokens: int, multiple: int = PAD_MULTIPLE
) -> Iterator[slice]:
    """Slices of ``sorted_lengths`` (ascending) such that rows x padded width <= ``max_tokens``, each holding
    rows of one padded width.

    One width per batch makes a caption's padding a function of its own length, so its score does not
    depend on the captions scored beside it (attention's kernels round differently at other widths).
    A single row longer than the budget still gets a batch of its own. Each batch is found with
    vectorized searches over at most ``max_rows`` lengths (no Python step per row).
    """
    widths = -(-np.asarray(sorted_lengths, dtype=np.int64) // multiple) * multiple
    start, n = 0, len(widths)
    while start < n:
        window = widths[start : start + max_rows]
        # Ascending widths: rows x width of a batch ending at each position only grows.
        cost = np.arange(1, len(window) + 1, dtype=np.int64) * window
        size = max(1, int(np.searchsorted(cost, max_tokens, side="right")))
        size = min(size, int(np.searchsorted(window, window[0], side="right")))
        yield slice(start, start + size)
        start += size


def pad_rows(
    token_ids: Sequence[Sequence[int]], rows: np.ndarray, pad_id: int, multiple: int = PAD_MULTIPLE
) -> tuple[np.ndarray, np.ndarray]:
    """Right-padded ``(input_ids, attention_mask)`` int64 arrays for the given rows.

    Filled by numpy in one step rather than row by row: this runs on the host for every
    batch, which matters once a GPU scores captions faster than the host prepares them.
    """
    selected = [token_ids[row] for row in rows]
    lengths = np.fromiter(map(len, selected), dtype=np.int64, count=len(selected))
    width = padded_width(int(lengths.max()), multiple)
    real = np.arange(width) < lengths[:, None]
    input_ids = np.full((len(selected), width), pad_id, dtype=np.int64)
    input_ids[real] = np.fromiter(chain.from_iterable(selected), dtype=np.int64, count=int(lengths.sum()))
    return input_ids, real.astype(np.int64)


def pad_packed(
    ids: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    rows: np.ndarray,
    pad_id: int,
    multiple: int = PAD_MULTIPLE,
    allocate: Callable[[tuple[int, int]], np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Right-padded ``(input_ids, attention_mask)`` int64 arrays for ``rows`` of packed token ids.

    ``ids`` holds every caption's ids one after another, caption ``i`` at ``starts[i]`` for
    ``lengths[i]`` tokens. ``allocate(shape)`` gives the int64 arrays to fill (pinned host memory,
    for asynchronous copies to a GPU); by default new NumPy arrays.
    """
    row_lengths = lengths[rows].astype(np.int64)
    width = padded_width(int(row_lengths.max()), multiple)
    position = np.arange(width, dtype=np.int64)
    real = position < row_lengths[:, None]
    gather = np.minimum(starts[rows][:, None] + position, max(len(ids) - 1, 0))
    allocate = allocate or (lambda shape: np.empty(shape, dtype=np.int64))
    input_ids, mask = allocate(real.shape), allocate(real.shape)
    np.copyto(input_ids, np.where(real, ids[gather], pad_id), casting="unsafe")
    np.copyto(mask, real, casting="unsafe")
    return input_ids, mask
