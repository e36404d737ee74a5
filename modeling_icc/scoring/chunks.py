"""The torch-free half of the neural scorers' main loop: captions tokenized a chunk at a time and length-sorted.

Captions are tokenized a chunk at a time (bounded memory on huge inputs) into packed int32 arrays
(:mod:`.tokenize_workers`): by worker processes when ``workers > 0`` (several chunks ahead, so the host
keeps up with a GPU), else in a helper thread one chunk ahead. Each chunk is sorted by length and cut into
batches by :func:`~.batching.plan_batches`. The torch runner (``runner.py``) and ONNX Runtime's
(``mini_onnx.py``) run those batches.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

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
    """One chunk of captions, tokenized: ``positions`` of its captions in the input, in ``order`` (shortest
    first), and the ``batches`` (slices of that order) to run."""

    positions: np.ndarray
    packed: PackedTokens
    order: np.ndarray
    batches: list[slice]


def sorted_chunks(
    texts: list[str], tokenize: Tokenize, workers: int, max_rows: int, max_tokens: int, pad_multiple: int
) -> Iterator[SortedChunk]:
    """Each chunk of ``texts`` tokenized, length-sorted and cut into batches under the budget, in order."""
    starts = range(0, len(texts), CHUNK_SIZE)
    for start, packed in zip(starts, packed_chunks(texts, tokenize, workers), strict=True):
        order = np.argsort(packed.lengths, kind="stable")
        batches = list(plan_batches(packed.lengths[order], max_rows, max_tokens, pad_multiple))
        yield SortedChunk(start + order, packed, order, batches)


@contextmanager
def caption_progress(total: int, progress: bool | None) -> Iterator[Callable[[int], object]]:
    """``advance(captions)`` for a scoring call: the caller's report (:func:`~.progress.reporting_to`) if one
    is set, else the call's own bar."""
    report = current_report()
    with tqdm(total=total, unit="caption", **({"disable": True} if report else progress_options(progress))) as bar:
        yield report or bar.update


def packed_chunks(texts: list[str], tokenize: Tokenize, workers: int) -> Iterator[PackedTokens]:
    """Each chunk of ``texts`` tokenized, in order, prepared ahead of the one being scored."""
    if isinstance(tokenize, TokenizerSpec):
        pool = tokenizer_pool(tokenize, workers, start=len(texts) >= POOL_MIN_CAPTIONS) if workers > 0 else None
        if pool is not None:
            yield from _pooled_chunks(texts, pool)
            return
        tokenizer = built_tokenizer(tokenize)

        def encode(chunk: list[str]) -> PackedTokens:
            return encode_packed(tokenizer, chunk)
    else:

        def encode(chunk: list[str]) -> PackedTokens:
            return PackedTokens.from_lists(tokenize(chunk))

    with ThreadPoolExecutor(max_workers=1) as helper:
        pending = helper.submit(encode, texts[:CHUNK_SIZE])
        for start in range(0, len(texts), CHUNK_SIZE):
            packed = pending.result()
            if start + CHUNK_SIZE < len(texts):
                pending = helper.submit(encode, texts[start + CHUNK_SIZE : start + 2 * CHUNK_SIZE])
            yield packed


def _pooled_chunks(texts: list[str], pool: TokenizerPool) -> Iterator[PackedTokens]:
    """Chunks tokenized by ``pool``: each cut into one task per worker (within the task size limits),
    with up to two tasks per worker in flight."""
    size = min(CHUNK_SIZE, len(texts))
    task_size = min(max(-(-size // pool.workers), MIN_TASK_SIZE), MAX_TASK_SIZE)
    tasks = (
        (start // CHUNK_SIZE, task, min(task + task_size, start + CHUNK_SIZE, len(texts)))
        for start in range(0, len(texts), CHUNK_SIZE)
        for task in range(start, min(start + CHUNK_SIZE, len(texts)), task_size)
    )
    pending: deque = deque()

    def fill() -> None:
        while len(pending) < 2 * pool.workers:
            task = next(tasks, None)
            if task is None:
                return
            chunk, low, high = task
            pending.append((chunk, pool.submit(texts[low:high])))

    fill()
    for chunk in range(-(-len(texts) // CHUNK_SIZE)):
        parts = []
        while pending and pending[0][0] == chunk:
            parts.append(pending.popleft()[1].result())
            fill()
        yield PackedTokens.concatenate(parts)
