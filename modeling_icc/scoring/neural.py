"""Fast batched scoring with a neural ICC student."""

from __future__ import annotations

import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from tqdm.auto import tqdm
from transformers import PreTrainedTokenizerBase

from ..models.icc.fast_encoder import FastICCEncoder, supports_fast_encoder
from ..models.icc.modeling_icc import ICCForConcreteness
from .base import ConcretenessScorer
from .batching import pad_rows, plan_batches

#: Captions tokenized (and length-sorted) at a time: bounds memory on huge inputs, keeps sorting
#: effective, and lets the next chunk be tokenized in a helper thread while the model runs.
CHUNK_SIZE = 16_384
#: Inputs at least this large get a progress bar by default (when stderr is a terminal).
PROGRESS_MIN_ITEMS = 10_000


def default_batch_limits(device: torch.device) -> tuple[int, int]:
    """``(max_rows, max_tokens)`` per batch: large on GPUs, cache-friendly on CPUs."""
    if device.type == "cuda":
        return 1024, 65_536
    # Measured on a 2-core AMX CPU: ~2k-token batches keep activations in cache (1.3x over 4k).
    return 512, 2_048


def pad_multiple(device: torch.device) -> int:
    """Batch widths are rounded up to this: 8 suits GPU tensor cores; CPUs lose time on padding."""
    return 8 if device.type == "cuda" else 1


class NeuralScorer(ConcretenessScorer):
    """Scores captions with an :class:`ICCForConcreteness` model.

    Captions are tokenized once with the fast tokenizer, sorted by length, cut
    into batches under a token budget, run under ``torch.inference_mode`` and put
    back in input order. Captions longer than the model's maximum length
    (512 tokens for RoBERTa) are truncated.

    ``score()`` returns the clipped [0, 1] score: ICC is defined on [0, 1] and
    thresholds are chosen on that scale. ``score(..., raw=True)`` returns the
    regression output as published (it can exceed 1, as in ``moranyanuka/icc``).

    By default the model runs through :class:`~modeling_icc.models.icc.fast_encoder.FastICCEncoder`
    (same scores, less work; rebuilt whenever the model's weights change);
    ``fast=False`` runs the ``transformers`` module itself, as does ``compile=True``.
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
        fast: bool = True,
    ) -> None:
        if not getattr(tokenizer, "is_fast", False):
            raise ValueError("NeuralScorer needs a fast (Rust) tokenizer")
        self.model = model.eval()
        # Frozen weights let inductor pre-pack them for the CPU's matrix units and fold constants.
        self._compiled = torch.compile(self.model, dynamic=True, options={"freezing": True}) if compile else None
        self.fast = fast and not compile and supports_fast_encoder(model)
        self._fast_encoder: FastICCEncoder | None = None
        self._fast_encoder_weights: tuple = ()
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.device = next(model.parameters()).device
        self.pad_multiple = pad_multiple(self.device)
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
        batches = plan_batches(lengths[order], self.batch_size, self.max_batch_tokens, self.pad_multiple)
        return token_ids, order, list(batches)

    def _forward(self) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
        """``(input_ids, attention_mask) -> raw scores`` with the model's current weights."""
        if not self.fast:
            module = self.model if self._compiled is None else self._compiled
            return lambda input_ids, attention_mask: (
                module(input_ids=input_ids, attention_mask=attention_mask).raw_scores
            )
        # In-place updates bump a tensor's version and moves change its storage: either means new weights.
        weights = tuple((parameter.data_ptr(), parameter._version) for parameter in self.model.parameters())
        if self._fast_encoder is None or weights != self._fast_encoder_weights:
            self._fast_encoder = FastICCEncoder(self.model, batch_hint=self.max_batch_tokens)
            self._fast_encoder_weights = weights
        return self._fast_encoder

    @torch.inference_mode()
    def _score_valid(self, texts: list[str]) -> np.ndarray:
        raw = np.empty(len(texts), dtype=np.float32)
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        forward = self._forward()
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
                    input_ids, attention_mask = pad_rows(token_ids, rows, pad_id, self.pad_multiple)
                    scores = forward(
                        torch.from_numpy(input_ids).to(self.device, non_blocking=True),
                        torch.from_numpy(attention_mask).to(self.device, non_blocking=True),
                    )
                    on_device.append((rows, scores))
                # One device-to-host copy per chunk instead of one synchronization per batch.
                for rows, scores in on_device:
                    raw[start + rows] = scores.float().cpu().numpy()
                bar.update(len(token_ids))
        return raw
