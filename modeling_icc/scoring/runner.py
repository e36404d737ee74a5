"""The neural scorers' main loop in torch: length-sorted batches under a token budget (``chunks.py``) run.

Shared by the student (``neural.py``) and mini's torch path (``mini.py``). Each chunk's batches are padded in
NumPy; on CUDA they are filled in pinned host memory and copied asynchronously, so the next batch is
prepared while the model runs, and each chunk's scores come back in one asynchronous copy that is waited
for only after the next chunk has been launched. Outputs are put back in input order. On CUDA every batch is
filled to the full row count of its width (:func:`~.batching.fill_rows`): one shape per width, so no score
depends on how many captions share its batch and a job meets a fixed set of shapes.

On CPUs the batches run side by side, one per core, each with one torch thread (:func:`run_batches`),
instead of one batch at a time across all cores: the products of short captions are too small for
several threads to share well, and each operator's thread barrier costs most where other jobs share the
cores (``benchmarks/speed/mini_cpu.py`` measures it against the old one-batch path).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch

from .batching import fill_rows, pad_packed, padded_width
from .chunks import SortedChunk, Tokenize, caption_progress, sorted_stream_chunks
from .tokenize_workers import PackedTokens, usable_cores


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


def score_length_sorted(
    texts: list[str],
    tokenize: Tokenize,
    forward: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    **settings: Any,
) -> np.ndarray:
    """``forward(input_ids, attention_mask) -> (B,)`` over every text, as float32 in input order
    (:func:`score_length_sorted_stream` of one piece; ``settings`` are its keyword arguments)."""
    [out] = score_length_sorted_stream(iter([texts]), tokenize, forward, total=len(texts), **settings)
    return out


@torch.inference_mode()
def score_length_sorted_stream(
    pieces: Iterator[list[str]],
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
    total: int | None = None,
) -> Iterator[np.ndarray]:
    """``forward(input_ids, attention_mask) -> (B,)`` over the texts of each piece, as float32 in the piece's order.

    The pieces' captions are tokenized and batched as one call per piece would be (the same scores), but the
    next piece is tokenized and launched while this one runs, and each piece's scores are given back only once
    the next one's first chunk is launched. ``workers``: tokenizer processes (with a :class:`TokenizerSpec`;
    0: tokenize in this process). ``total``: captions in all, for the progress bar."""
    cuda = device.type == "cuda"
    batch_workers = cpu_batch_workers(device)
    waiting: tuple[SortedChunk, torch.Tensor | None, torch.cuda.Event | None] | None = None
    out = np.empty(0, dtype=np.float32)
    with caption_progress(total, progress) as advance:
        chunks = sorted_stream_chunks(pieces, tokenize, workers, max_rows, max_tokens, pad_multiple)
        for chunk in chunks:

            def run(batch: slice, packed: PackedTokens = chunk.packed, order: np.ndarray = chunk.order) -> torch.Tensor:
                rows = order[batch]
                if cuda:  # one shape per width: see batching.fill_rows
                    width = padded_width(int(packed.lengths[rows].max()), pad_multiple)
                    rows = fill_rows(rows, width, max_rows, max_tokens)
                input_ids, attention_mask = _batch(packed, rows, pad_id, pad_multiple, device)
                values = forward(input_ids, attention_mask)[: batch.stop - batch.start]
                advance(batch.stop - batch.start)
                return values

            launched = (chunk, *_to_host(run_batches(run, chunk.batches, batch_workers), cuda))
            if waiting is not None:
                out = _settle(out, *waiting)
                if waiting[0].last:
                    yield out
            waiting = launched
        if waiting is not None:
            out = _settle(out, *waiting)
            yield out


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


def _to_host(values: list[torch.Tensor], cuda: bool) -> tuple[torch.Tensor | None, torch.cuda.Event | None]:
    """A chunk's outputs copied to the host as float32: on CUDA asynchronously, with the event that marks its end
    (``None`` for a chunk without captions)."""
    if not values:
        return None, None
    joined = torch.cat(values).float()
    if not cuda:
        return joined.cpu(), None
    host = torch.empty(joined.shape, dtype=torch.float32, pin_memory=True)
    host.copy_(joined, non_blocking=True)
    event = torch.cuda.Event()
    event.record()
    return host, event


def _settle(
    out: np.ndarray, chunk: SortedChunk, host: torch.Tensor | None, event: torch.cuda.Event | None
) -> np.ndarray:
    """``chunk``'s scores put in place in its piece's array (a new one at the piece's first chunk), once copied."""
    if chunk.first:
        out = np.empty(chunk.piece_size, dtype=np.float32)
    if host is not None:
        if event is not None:
            event.synchronize()
        out[chunk.positions] = host.numpy()
    return out
