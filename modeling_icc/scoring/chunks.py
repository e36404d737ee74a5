"""The torch-free half of the neural scorers' main loop: captions tokenized a chunk at a time and length-sorted.

Captions are tokenized a chunk at a time (bounded memory on huge inputs) into packed int32 arrays
(:mod:`.tokenize_workers`): by worker processes when ``workers > 0`` (several chunks ahead, so the host
keeps up with a GPU), else in a helper thread one chunk ahead. Each chunk is sorted by length and cut into
batches by :func:`~.batching.plan_batches`. A stream of pieces (a job's chunks of rows) is tokenized ahead
across its pieces, so a GPU does not wait for the next piece's first chunk. The torch runner (``runner.py``)
and ONNX Runtime's (``mini_onnx.py``) run those batches.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain

import numpy as np
from tqdm.auto import tqdm

from .batching import plan_batches
from .progress import current_report, progress_options
from .tokenize_workers import PackedTokens, TokenizerPool, TokenizerSpec, built_tokenizer, encode_packed, tokenizer_pool

#: Captions tokenized (and length-sorted) at a time.
CHUNK_SIZE = 16_384
#: Captions per task sent to a tokenizer worker process, at least and at most (a chunk is split among the workers).
MIN_TASK_SIZE, MAX_TASK_SIZE = 512, 4_096
#: Smaller inputs are tokenized in this process unless a worker pool is already running (starting one takes longer).
POOL_MIN_CAPTIONS = 4_096

#: How a scorer tokenizes: a spec (the fast path, which can use worker processes) or a function
#: returning one list of ids per caption.
Tokenize = TokenizerSpec | Callable[[list[str]], list[list[int]]]


@dataclass
class SortedChunk:
    """One chunk of captions, tokenized: ``positions`` of its captions in their piece, in ``order`` (shortest
    first), and the ``batches`` (slices of that order) to run. A piece (the one list of captions of
    :func:`sorted_chunks`, or one piece of a stream) of ``piece_size`` captions starts with its ``first`` chunk
    and ends with its ``last`` (an empty piece is one chunk, both)."""

    positions: np.ndarray
    packed: PackedTokens
    order: np.ndarray
    batches: list[slice]
    piece_size: int
    first: bool
    last: bool


@dataclass(frozen=True)
class _Slice:
    """Captions ``start`` to ``start + len(texts)`` of a piece of ``piece_size`` (an empty piece is one empty slice)."""

    piece_size: int
    start: int
    texts: list[str]

    @property
    def last(self) -> bool:
        return self.start + CHUNK_SIZE >= self.piece_size


def sorted_chunks(
    texts: list[str], tokenize: Tokenize, workers: int, max_rows: int, max_tokens: int, pad_multiple: int
) -> Iterator[SortedChunk]:
    """Each chunk of ``texts`` tokenized, length-sorted and cut into batches under the budget, in order."""
    return sorted_stream_chunks(iter([texts]), tokenize, workers, max_rows, max_tokens, pad_multiple)


def sorted_stream_chunks(
    pieces: Iterator[list[str]], tokenize: Tokenize, workers: int, max_rows: int, max_tokens: int, pad_multiple: int
) -> Iterator[SortedChunk]:
    """:func:`sorted_chunks` over a stream of pieces: each piece is cut into its own chunks (the same as one call
    per piece, so the same batches), and tokenization runs ahead across pieces. ``pieces`` is read ahead of the
    chunks given out (up to two chunks' worth of tokenizer tasks per worker process)."""
    for piece_slice, packed in _packed_slices(_slices(pieces), tokenize, workers):
        order = np.argsort(packed.lengths, kind="stable")
        batches = list(plan_batches(packed.lengths[order], max_rows, max_tokens, pad_multiple))
        yield SortedChunk(
            piece_slice.start + order,
            packed,
            order,
            batches,
            piece_slice.piece_size,
            piece_slice.start == 0,
            piece_slice.last,
        )


def _slices(pieces: Iterator[list[str]]) -> Iterator[_Slice]:
    for texts in pieces:
        for start in range(0, len(texts), CHUNK_SIZE) or range(1):
            yield _Slice(len(texts), start, texts[start : start + CHUNK_SIZE])


@contextmanager
def caption_progress(total: int | None, progress: bool | None) -> Iterator[Callable[[int], object]]:
    """``advance(captions)`` for a scoring call: the caller's report (:func:`~.progress.reporting_to`) if one
    is set, else the call's own bar (of ``total`` captions, when known)."""
    report = current_report()
    with tqdm(total=total, unit="caption", **({"disable": True} if report else progress_options(progress))) as bar:
        yield report or bar.update


def _packed_slices(slices: Iterator[_Slice], tokenize: Tokenize, workers: int) -> Iterator[tuple[_Slice, PackedTokens]]:
    """Each slice tokenized, in order, prepared ahead of the one being scored: by the worker pool when there is
    one (started when the first slice holds at least :data:`POOL_MIN_CAPTIONS`), else in a helper thread."""
    first = next(slices, None)
    if first is None:
        return
    slices = chain([first], slices)
    if isinstance(tokenize, TokenizerSpec):
        start = len(first.texts) >= POOL_MIN_CAPTIONS
        pool = tokenizer_pool(tokenize, workers, start=start) if workers > 0 else None
        if pool is not None:
            yield from _pooled_slices(slices, pool)
            return
        tokenizer = built_tokenizer(tokenize)

        def encode(chunk: list[str]) -> PackedTokens:
            return encode_packed(tokenizer, chunk)
    else:

        def encode(chunk: list[str]) -> PackedTokens:
            return PackedTokens.from_lists(tokenize(chunk))

    with ThreadPoolExecutor(max_workers=1) as helper:
        current: _Slice | None = next(slices)
        pending = helper.submit(encode, current.texts)
        while current is not None:
            following = next(slices, None)  # the caller's next piece is read while this one is tokenized
            packed = pending.result()
            if following is not None:
                pending = helper.submit(encode, following.texts)
            yield current, packed
            current = following


def _pooled_slices(slices: Iterator[_Slice], pool: TokenizerPool) -> Iterator[tuple[_Slice, PackedTokens]]:
    """Slices tokenized by ``pool``: each cut into one task per worker (within the task size limits),
    with up to two tasks per worker in flight, across slices and pieces."""

    def tasks() -> Iterator[tuple[_Slice, bool, Future | None]]:  # (slice, its last task?, the task)
        for piece_slice in slices:
            size = len(piece_slice.texts)
            if size == 0:
                yield piece_slice, True, None
                continue
            step = min(max(-(-size // pool.workers), MIN_TASK_SIZE), MAX_TASK_SIZE)
            for low in range(0, size, step):
                yield piece_slice, low + step >= size, pool.submit(piece_slice.texts[low : low + step])

    queued = tasks()
    pending: deque = deque()

    def fill() -> None:
        while len(pending) < 2 * pool.workers:
            task = next(queued, None)
            if task is None:
                return
            pending.append(task)

    fill()
    while pending:
        parts: list[PackedTokens] = []
        last = False
        while not last:
            piece_slice, last, future = pending.popleft()
            parts.append(future.result() if future is not None else PackedTokens.from_lists([]))
            fill()
        yield piece_slice, PackedTokens.concatenate(parts)
