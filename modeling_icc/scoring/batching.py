"""Length-sorted batching under a token budget: the scorer's main speed lever.

Captions are tokenized once, sorted by length, and cut into batches whose
padded size (rows x longest row) stays under a token budget, so short captions
travel in large batches and long ones in small batches, with little padding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import chain, pairwise

import numpy as np

#: Default rounding of every batch's width (tensor-core friendly on GPUs; CPUs use 1).
PAD_MULTIPLE = 8
#: What is left of a width under this many rows runs as one batch, not in powers of two: up to five more small
#: batches cost mini about 2% on a CPU (``benchmarks/speed/batch_plan.py``), for at most 31 more row counts per
#: width; a GPU fills it to a full batch like any other (one shape per width either way).
MIN_SPLIT_ROWS = 32


def padded_width(length: int, multiple: int = PAD_MULTIPLE) -> int:
    return -(-length // multiple) * multiple


def batch_rows(width: int, max_rows: int, max_tokens: int) -> int:
    """The rows of a full batch of padded ``width``: as many as the token budget allows, at most ``max_rows``, at
    least one (a row longer than the budget is a batch of its own)."""
    return max(1, min(max_rows, max_tokens // width))


def plan_batches(
    sorted_lengths: np.ndarray, max_rows: int, max_tokens: int, multiple: int = PAD_MULTIPLE
) -> Iterator[slice]:
    """Slices of ``sorted_lengths`` (ascending), each holding rows of one padded width: full batches of
    :func:`batch_rows` rows, and what is left of each width in batches of powers of two rows, largest first,
    down to :data:`MIN_SPLIT_ROWS`, then the rest in one.

    One width per batch makes a caption's padding a function of its own length, so its score does not
    depend on the captions scored beside it (attention's kernels round differently at other widths). The
    rows of what is left of a width come in powers of two so that the shapes a job meets are bounded, whatever
    its size, without padding a row: per width, the full row count, the powers of two from
    :data:`MIN_SPLIT_ROWS` up, and the counts under it (:func:`shape_bound`). A GPU pads those partial batches to
    full ones instead (:func:`fill_rows`), for one shape per width.
    """
    widths = -(-np.asarray(sorted_lengths, dtype=np.int64) // multiple) * multiple
    bounds = [0, *(np.flatnonzero(np.diff(widths)) + 1).tolist(), len(widths)]
    for start, stop in pairwise(bounds):
        if start == stop:
            continue
        rows = batch_rows(int(widths[start]), max_rows, max_tokens)
        full_end = start + (stop - start) // rows * rows
        for position in range(start, full_end, rows):
            yield slice(position, position + rows)
        position, left = full_end, stop - full_end
        while left:
            size = 1 << (left.bit_length() - 1) if left >= MIN_SPLIT_ROWS else left
            yield slice(position, position + size)
            position, left = position + size, left - size


def shape_bound(max_length: int, max_rows: int, multiple: int = PAD_MULTIPLE) -> int:
    """The most distinct ``(rows, width)`` batch shapes :func:`plan_batches` can give, for any number of captions
    of at most ``max_length`` tokens: per padded width, the full row count, the powers of two from
    :data:`MIN_SPLIT_ROWS` below it and the row counts under :data:`MIN_SPLIT_ROWS`."""
    powers = max(0, max_rows.bit_length() - MIN_SPLIT_ROWS.bit_length() + 1)
    return -(-max_length // multiple) * (1 + powers + MIN_SPLIT_ROWS - 1)


def fill_rows(rows: np.ndarray, width: int, max_rows: int, max_tokens: int) -> np.ndarray:
    """``rows`` (a batch of padded ``width``) made a full batch of :func:`batch_rows` rows by repeating its last
    row: on a GPU every batch of a width then has one shape, so a caption's score cannot depend on how many
    captions share its batch (a kernel chosen by row count), and each width meets one shape."""
    missing = batch_rows(width, max_rows, max_tokens) - len(rows)
    return rows if missing <= 0 else np.concatenate([rows, np.full(missing, rows[-1], dtype=rows.dtype)])


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
