"""The neural scorers' main loop: tokenize in chunks, sort by length, run batches under a token budget.

Shared by the student (``neural.py``) and mini (``mini.py``): captions are tokenized a chunk at a time
(bounded memory on huge inputs, and the next chunk is tokenized in a helper thread while the model runs),
sorted by length within the chunk, cut into batches by :func:`~.batching.plan_batches`, and the outputs put
back in input order with one device-to-host copy per chunk.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from tqdm.auto import tqdm

from .batching import pad_rows, plan_batches
from .progress import current_report, progress_options

#: Captions tokenized (and length-sorted) at a time.
CHUNK_SIZE = 16_384


def pad_multiple(device: torch.device) -> int:
    """Batch widths are rounded up to this: 8 suits GPU tensor cores; CPUs lose time on padding."""
    return 8 if device.type == "cuda" else 1


@torch.inference_mode()
def score_length_sorted(
    texts: list[str],
    tokenize: Callable[[list[str]], list[list[int]]],
    forward: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    *,
    max_rows: int,
    max_tokens: int,
    pad_multiple: int,
    pad_id: int,
    device: torch.device,
    progress: bool | None = None,
) -> np.ndarray:
    """``forward(input_ids, attention_mask) -> (B,)`` over every text, as float32 in input order."""
    out = np.empty(len(texts), dtype=np.float32)

    def prepare(chunk: list[str]) -> tuple[list[list[int]], np.ndarray, list[slice]]:
        token_ids = tokenize(chunk)
        lengths = np.fromiter(map(len, token_ids), dtype=np.int64, count=len(token_ids))
        order = np.argsort(lengths, kind="stable")
        return token_ids, order, list(plan_batches(lengths[order], max_rows, max_tokens, pad_multiple))

    report = current_report()
    with (
        ThreadPoolExecutor(max_workers=1) as tokenizer_thread,
        tqdm(total=len(texts), unit="caption", **({"disable": True} if report else progress_options(progress))) as bar,
    ):
        advance = report or bar.update
        pending = tokenizer_thread.submit(prepare, texts[:CHUNK_SIZE])
        for start in range(0, len(texts), CHUNK_SIZE):
            token_ids, order, batches = pending.result()
            if start + CHUNK_SIZE < len(texts):
                pending = tokenizer_thread.submit(prepare, texts[start + CHUNK_SIZE : start + 2 * CHUNK_SIZE])
            on_device = []
            for batch in batches:
                rows = order[batch]
                input_ids, attention_mask = pad_rows(token_ids, rows, pad_id, pad_multiple)
                values = forward(
                    torch.from_numpy(input_ids).to(device, non_blocking=True),
                    torch.from_numpy(attention_mask).to(device, non_blocking=True),
                )
                on_device.append((rows, values))
                advance(len(rows))
            # One device-to-host copy per chunk instead of one synchronization per batch.
            for rows, values in on_device:
                out[start + rows] = values.float().cpu().numpy()
    return out
