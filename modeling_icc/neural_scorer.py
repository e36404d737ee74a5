"""Fast batched scoring with a neural ICC student."""

from __future__ import annotations

import sys

import numpy as np
import torch
from tqdm.auto import tqdm
from transformers import PreTrainedTokenizerBase

from .batching import pad_rows, plan_batches
from .modeling_icc import ICCForConcreteness
from .scorer import ConcretenessScorer

#: Captions tokenized at a time: bounds memory on huge inputs while keeping sorting effective.
CHUNK_SIZE = 65_536
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
    ) -> None:
        if not getattr(tokenizer, "is_fast", False):
            raise ValueError("NeuralScorer needs a fast (Rust) tokenizer")
        self.model = model.eval()
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

    @torch.inference_mode()
    def _score_valid(self, texts: list[str]) -> np.ndarray:
        raw = np.empty(len(texts), dtype=np.float32)
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        with tqdm(total=len(texts), unit="caption", disable=not self._show_progress(len(texts))) as bar:
            for start in range(0, len(texts), CHUNK_SIZE):
                token_ids = self._tokenize(texts[start : start + CHUNK_SIZE])
                lengths = np.fromiter(map(len, token_ids), dtype=np.int64, count=len(token_ids))
                order = np.argsort(lengths, kind="stable")
                for batch in plan_batches(lengths[order], self.batch_size, self.max_batch_tokens):
                    rows = order[batch]
                    input_ids, attention_mask = pad_rows(token_ids, rows, pad_id)
                    output = self.model(
                        input_ids=torch.from_numpy(input_ids).to(self.device, non_blocking=True),
                        attention_mask=torch.from_numpy(attention_mask).to(self.device, non_blocking=True),
                    )
                    raw[start + rows] = output.raw_scores.float().cpu().numpy()
                    bar.update(len(rows))
        return raw
