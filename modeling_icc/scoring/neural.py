"""Fast batched scoring with a neural ICC student."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import torch
from transformers import PreTrainedTokenizerBase

from ..models.icc.fast_encoder import FastICCEncoder, supports_fast_encoder
from ..models.icc.modeling_icc import ICCForConcreteness
from .arguments import zero_or_more
from .base import ConcretenessScorer
from .languages import ENGLISH_ONLY
from .runner import default_tokenize_workers, pad_multiple, score_length_sorted_stream
from .tokenize_workers import TokenizerSpec


def default_batch_limits(device: torch.device) -> tuple[int, int]:
    """``(max_rows, max_tokens)`` per batch: large on GPUs, cache-friendly on CPUs."""
    if device.type == "cuda":
        return 1024, 65_536
    # Measured on a 2-core AMX CPU: ~2k-token batches keep activations in cache (1.3x over 4k).
    return 512, 2_048


class NeuralScorer(ConcretenessScorer):
    """Scores captions with an :class:`ICCForConcreteness` model.

    Captions are tokenized once with the fast tokenizer's Rust core into packed arrays (in
    ``tokenize_workers`` processes; default: every core when the model is on a GPU, none on a
    CPU), sorted by length, cut into batches under a token budget, run under
    ``torch.inference_mode`` and put back in input order. Captions longer than the model's
    maximum length (512 tokens for RoBERTa) are truncated.

    ``score()`` returns the clipped [0, 1] score: ICC is defined on [0, 1] and
    thresholds are chosen on that scale. ``score(..., raw=True)`` returns the
    regression output as published (it can exceed 1, as in ``moranyanuka/icc``).

    By default the model runs through :class:`~modeling_icc.models.icc.fast_encoder.FastICCEncoder`
    (same scores, less work; rebuilt whenever the model's weights change);
    ``fast=False`` runs the ``transformers`` module itself, as does ``compile=True``.
    """

    zeroes_web_junk = True
    #: The published student was distilled on English captions (the paper's LAION/CC3M pools).
    languages = ENGLISH_ONLY

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
        tokenize_workers: int | None = None,
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
        zero_or_more("tokenize_workers", tokenize_workers)
        self.tokenize_workers = tokenize_workers
        self._token_spec: TokenizerSpec | None = None
        positions = model.config.max_position_embeddings - (model.config.pad_token_id or 0) - 1
        self.max_length = int(min(tokenizer.model_max_length, positions))

    def token_spec(self) -> TokenizerSpec:
        """How captions are tokenized (the Rust tokenizer, truncating at ``max_length``), built once."""
        if self._token_spec is None or self._token_spec.max_length != self.max_length:
            self._token_spec = TokenizerSpec.from_pretrained_tokenizer(self.tokenizer, self.max_length)
        return self._token_spec

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

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        [scores] = self._score_valid_stream(iter([texts]), total=len(texts))
        return scores

    def _score_valid_stream(self, pieces: Iterator[list[str]], total: int | None = None) -> Iterator[np.ndarray]:
        workers = self.tokenize_workers
        return score_length_sorted_stream(
            pieces,
            self.token_spec(),
            self._forward(),
            max_rows=self.batch_size,
            max_tokens=self.max_batch_tokens,
            pad_multiple=self.pad_multiple,
            pad_id=self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0,
            device=self.device,
            progress=self.progress,
            workers=default_tokenize_workers(self.device) if workers is None else workers,
            total=total,
        )
