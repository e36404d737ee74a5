"""The neural scorers' main loop: tokenize in chunks, sort by length, run batches under a token budget.

Shared by the student (``neural.py``) and mini (``mini.py``). Captions are tokenized a chunk at a time
(bounded memory on huge inputs) into packed int32 arrays (:mod:`.tokenize_workers`): by worker processes
when ``workers > 0`` (several chunks ahead, so the host keeps up with a GPU), else in a helper thread one
chunk ahead. Each chunk is sorted by length, cut into batches by :func:`~.batching.plan_batches` and
padded in NumPy; on CUDA the batches are filled in pinned host memory and copied asynchronously, so the
next batch is prepared while the model runs, and each chunk's scores come back in one asynchronous copy
that is waited for only after the next chunk has been launched. Outputs are put back in input order.

On CPUs the batches run side by side, one per core, each with one torch thread (:func:`run_batches`),
instead of one batch at a time across all cores: the products of short captions are too small for
several threads to share well, and each operator's thread barrier costs most where other jobs share the
cores (``benchmarks/speed/mini_cpu.py`` measures it against the old one-batch path).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np
import torch
from tqdm.auto import tqdm

from .batching import pad_packed, plan_batches
from .progress import current_report, progress_options
from .tokenize_workers import (
    PackedTokens,
    TokenizerPool,
    TokenizerSpec,
    built_tokenizer,
    encode_packed,
    tokenizer_pool,
    usable_cores,
)

#: Captions tokenized (and length-sorted) at a time.
CHUNK_SIZE = 16_384
#: Captions per task sent to a tokenizer worker process, at least and at most (a chunk is split among the workers).
MIN_TASK_SIZE, MAX_TASK_SIZE = 512, 4_096
#: Smaller inputs are tokenized in this process unless a worker pool is already running (starting one takes longer).
POOL_MIN_CAPTIONS = 4_096

#: How a scorer tokenizes: a spec (the fast path, which can use worker processes) or a function
#: returning one list of ids per caption.
Tokenize = TokenizerSpec | Callable[[list[str]], list[list[int]]]


def pad_multiple(device: torch.device) -> int:
    """Batch widths are rounded up to this: 8 suits GPU tensor cores; CPUs lose time on padding."""
    return 8 if device.type == "cuda" else 1


def default_tokenize_workers(device: torch.device) -> int:
    """Tokenizer processes when none are asked for: every usable core for a GPU (the host must keep up
    with it); none on a CPU, whose cores run the model (tokenization is a few percent of its time there)."""
    return 0 if device.type == "cpu" else usable_cores()


def cpu_batch_workers(device: torch.device) -> int:
    """Batches run at once: one per torch thread (the cores) on CPUs, one on accelerators."""
    return max(1, torch.get_num_threads()) if device.type == "cpu" else 1


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """torch's intra-op threads set to ``count`` for the block (process-wide), then restored."""
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def run_batches(run: Callable[[slice], torch.Tensor], batches: list[slice], workers: int) -> list[torch.Tensor]:
    """``run(batch)`` for every batch, in order; with ``workers > 1`` that many at once, one torch thread each."""
    if workers <= 1 or len(batches) < 2:
        return [run(batch) for batch in batches]

    def run_inference(batch: slice) -> torch.Tensor:
        with torch.inference_mode():  # thread-local: each worker thread needs its own
            return run(batch)

    with torch_threads(1), ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(run_inference, batches))


@torch.inference_mode()
def score_length_sorted(
    texts: list[str],
    tokenize: Tokenize,
    forward: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    *,
    max_rows: int,
    max_tokens: int,
    pad_multiple: int,
    pad_id: int,
    device: torch.device,
    progress: bool | None = None,
    workers: int = 0,
) -> np.ndarray:
    """``forward(input_ids, attention_mask) -> (B,)`` over every text, as float32 in input order.

    ``workers``: tokenizer processes (with a :class:`TokenizerSpec`; 0: tokenize in this process).
    """
    out = np.empty(len(texts), dtype=np.float32)
    cuda = device.type == "cuda"
    batch_workers = cpu_batch_workers(device)
    waiting: tuple[np.ndarray, torch.Tensor, torch.cuda.Event | None] | None = None
    report = current_report()
    with tqdm(total=len(texts), unit="caption", **({"disable": True} if report else progress_options(progress))) as bar:
        advance = report or bar.update
        starts = range(0, len(texts), CHUNK_SIZE)
        for start, packed in zip(starts, _packed_chunks(texts, tokenize, workers), strict=True):
            order = np.argsort(packed.lengths, kind="stable")

            def run(batch: slice, packed: PackedTokens = packed, order: np.ndarray = order) -> torch.Tensor:
                input_ids, attention_mask = _batch(packed, order[batch], pad_id, pad_multiple, device)
                values = forward(input_ids, attention_mask)
                advance(batch.stop - batch.start)
                return values

            batches = list(plan_batches(packed.lengths[order], max_rows, max_tokens, pad_multiple))
            launched = (start + order, *_to_host(run_batches(run, batches, batch_workers), cuda))
            if waiting is not None:
                _scatter(out, *waiting)
            waiting = launched
        if waiting is not None:
            _scatter(out, *waiting)
    return out


def _batch(
    packed: PackedTokens, rows: np.ndarray, pad_id: int, multiple: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """One padded batch on ``device``; on CUDA filled in pinned memory and copied without waiting."""
    if device.type != "cuda":
        input_ids, mask = pad_packed(packed.ids, packed.starts, packed.lengths, rows, pad_id, multiple)
        return torch.from_numpy(input_ids).to(device), torch.from_numpy(mask).to(device)
    # Pinned tensors from torch's caching host allocator: it keeps each block until its copy is done.
    pinned: list[torch.Tensor] = []

    def allocate(shape: tuple[int, int]) -> np.ndarray:
        pinned.append(torch.empty(shape, dtype=torch.int64, pin_memory=True))
        return pinned[-1].numpy()

    pad_packed(packed.ids, packed.starts, packed.lengths, rows, pad_id, multiple, allocate)
    return tuple(tensor.to(device, non_blocking=True) for tensor in pinned)


def _to_host(values: list[torch.Tensor], cuda: bool) -> tuple[torch.Tensor, torch.cuda.Event | None]:
    """A chunk's outputs copied to the host as float32: on CUDA asynchronously, with the event that marks its end."""
    joined = torch.cat(values).float()
    if not cuda:
        return joined.cpu(), None
    host = torch.empty(joined.shape, dtype=torch.float32, pin_memory=True)
    host.copy_(joined, non_blocking=True)
    event = torch.cuda.Event()
    event.record()
    return host, event


def _scatter(out: np.ndarray, positions: np.ndarray, host: torch.Tensor, event: torch.cuda.Event | None) -> None:
    if event is not None:
        event.synchronize()
    out[positions] = host.numpy()


def _packed_chunks(texts: list[str], tokenize: Tokenize, workers: int) -> Iterator[PackedTokens]:
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
