"""Fast batched scoring with a neural ICC student."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from tqdm.auto import tqdm
from transformers import PreTrainedTokenizerBase

from .batching import pad_rows, plan_batches
from .modeling_icc import ICCForConcreteness
from .scorer import ConcretenessScorer

#: Captions tokenized (and length-sorted) at a time: bounds memory on huge inputs, keeps sorting
#: effective, and lets the next chunk be tokenized in a helper thread while the model runs.
CHUNK_SIZE = 16_384
#: Inputs at least this large get a progress bar by default (when stderr is a terminal).
PROGRESS_MIN_ITEMS = 10_000


def default_batch_limits(device: torch.device) -> tuple[int, int]:
    """``(max_rows, max_tokens)`` per batch: large on GPUs, cache-friendly on CPUs."""
    if device.type == "cuda":
        return 1024, 65_536
    return 128, 4_096


class NeuralScorer(ConcretenessScorer):
    """Scores captions with an :class:`ICCForConcreteness` model.

    Captions are tokenized once with the fast tokenizer, sorted by length, cut
    into batches under a token budget, run under ``torch.inference_mode`` and put
    back in input order. Captions longer than the model's maximum length
    (512 tokens for RoBERTa) are truncated.

    ``score()`` returns the clipped [0, 1] score: ICC is defined on [0, 1] and
    thresholds are chosen on that scale. ``score(..., raw=True)`` returns the
    regression output as published (it can exceed 1, as in ``moranyanuka/icc``).
    """

    def __init__(
        self,
        model: ICCForConcreteness,
        tokenizer: PreTrainedTokenizerBase,
        *,
        model_id: str,
        batch_size: int | None = None,
        max_batch_tokens: int | None = None,
        progress: bool | None = None,
        compile: bool = False,
    ) -> None:
        if not getattr(tokenizer, "is_fast", False):
            raise ValueError("NeuralScorer needs a fast (Rust) tokenizer")
        self.model = model.eval()
        # Frozen weights let inductor pre-pack them for the CPU's matrix units and fold constants.
        self._forward = torch.compile(self.model, dynamic=True, options={"freezing": True}) if compile else self.model
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.device = next(model.parameters()).device
        rows, tokens = default_batch_limits(self.device)
        self.batch_size = batch_size or rows
        self.max_batch_tokens = max(max_batch_tokens or tokens, 8)
        self.progress = progress
        positions = model.config.max_position_embeddings - (model.config.pad_token_id or 0) - 1
        self.max_length = int(min(tokenizer.model_max_length, positions))

    def _tokenize(self, texts: list[str]) -> list[list[int]]:
        return self.tokenizer(
            texts,
            truncation=True,
            max_length=self.max_length,
            return_attention_mask=False,
            return_token_type_ids=False,
        )["input_ids"]

    def _show_progress(self, n: int) -> bool:
        if self.progress is not None:
            return self.progress
        return n >= PROGRESS_MIN_ITEMS and sys.stderr.isatty()

    def _prepare(self, texts: list[str]) -> tuple[list[list[int]], np.ndarray, list[slice]]:
        """Tokenize a chunk, sort it by length and cut it into batches (runs in a helper thread)."""
        token_ids = self._tokenize(texts)
        lengths = np.fromiter(map(len, token_ids), dtype=np.int64, count=len(token_ids))
        order = np.argsort(lengths, kind="stable")
        return token_ids, order, list(plan_batches(lengths[order], self.batch_size, self.max_batch_tokens))

    @torch.inference_mode()
    def _score_valid(self, texts: list[str]) -> np.ndarray:
        raw = np.empty(len(texts), dtype=np.float32)
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        starts = range(0, len(texts), CHUNK_SIZE)
        with (
            ThreadPoolExecutor(max_workers=1) as tokenizer_thread,
            tqdm(total=len(texts), unit="caption", disable=not self._show_progress(len(texts))) as bar,
        ):
            pending = tokenizer_thread.submit(self._prepare, texts[:CHUNK_SIZE])
            for start in starts:
                token_ids, order, batches = pending.result()
                if start + CHUNK_SIZE < len(texts):
                    # Tokenize the next chunk while the model works on this one.
                    pending = tokenizer_thread.submit(self._prepare, texts[start + CHUNK_SIZE : start + 2 * CHUNK_SIZE])
                on_device = []
                for batch in batches:
                    rows = order[batch]
                    input_ids, attention_mask = pad_rows(token_ids, rows, pad_id)
                    output = self._forward(
                        input_ids=torch.from_numpy(input_ids).to(self.device, non_blocking=True),
                        attention_mask=torch.from_numpy(attention_mask).to(self.device, non_blocking=True),
                    )
                    on_device.append((rows, output.raw_scores))
                # One device-to-host copy per chunk instead of one synchronization per batch.
                for rows, scores in on_device:
                    raw[start + rows] = scores.float().cpu().numpy()
                bar.update(len(token_ids))
        return raw
