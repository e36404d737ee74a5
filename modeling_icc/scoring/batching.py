"""Length-sorted batching under a token budget: the scorer's main speed lever.

Captions are tokenized once, sorted by length, and cut into batches whose
padded size (rows x longest row) stays under a token budget, so short captions
travel in large batches and long ones in small batches, with little padding.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain

import numpy as np

#: Default rounding of every batch's width (tensor-core friendly on GPUs; CPUs use 1).
PAD_MULTIPLE = 8


def padded_width(length: int, multiple: int = PAD_MULTIPLE) -> int:
    return -(-length // multiple) * multiple


def plan_batches(
    sorted_lengths: np.ndarray, max_rows: int, max_tokens: int, multiple: int = PAD_MULTIPLE
) -> Iterator[slice]:
    """Slices of ``sorted_lengths`` (ascending) such that rows x padded width <= ``max_tokens``.

    A single row longer than the budget still gets a batch of its own.
    """
    start, n = 0, len(sorted_lengths)
    while start < n:
        end = start + 1
        while end < n and end - start < max_rows:
            if (end - start + 1) * padded_width(int(sorted_lengths[end]), multiple) > max_tokens:
                break
            end += 1
        yield slice(start, end)
        start = end


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
