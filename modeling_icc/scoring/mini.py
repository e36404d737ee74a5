"""The ``"mini"`` scorer: the pip-shipped MiniLM encoder (first 4 layers) and linear heads, no download.

It scores through :class:`~modeling_icc.models.mini.fast_encoder.FastMiniEncoder` and the Rust tokenizer,
built straight from mini's files: no ``transformers`` import (seconds of start-up), pre-packed fused
products on CPUs. ``scorer.model`` and ``scorer.tokenizer`` (the ``transformers`` model and tokenizer) are
built on first use, for code that wants them; once the model exists, scores follow its weights.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..models.mini.fast_encoder import FastMiniEncoder, layers_read, read_mini, select_encoder_tensors
from ..models.mini.files import (
    base_model_path,
    shipped_heads_path,
)
from ..models.mini.heads import head_outputs, probability, token_terms
from .chunks import Tokenize
from .devices import resolve_device, resolve_dtype
from .mini_reading import TOKENIZER_FILE, MiniReading, default_batch_limits
from .runner import default_tokenize_workers, pad_multiple, score_length_sorted

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

    from ..models.mini.modeling_mini import MiniICCModel


class MiniScorer(MiniReading):
    """Scores captions with mini (see ``docs/mini.md``).

    ``score`` is ``sigmoid(logit)`` in [0, 1]; 0.5 separates the abstract and concrete halves of the
    human annotation. Captions are normalized for web noise (``prepare_text``: hashtags to words; handles,
    URLs and emoji dropped; repeats squeezed) and lower-cased, tokenized once, sorted by length and batched
    under a token budget. A caption longer than the 128-token window is read in overlapping windows whose
    logits are averaged, the first weighing most (``modeling_icc/utils/windows.py``); one that fits is read
    as it is. The encoder runs in ``dtype`` (default: bf16 on GPUs and on CPUs with native bf16, fp32 elsewhere or with
    ``ICC_FORCE_FP32=1``); the heads always run in fp32. A ``model`` passed in is moved to ``device`` and
    its encoder cast to ``dtype``; without one, mini is built from the pip base weights and the shipped heads.
    """

    def __init__(
        self,
        model: MiniICCModel | None = None,
        tokenizer: PreTrainedTokenizerBase | None = None,
        *,
        device: str | torch.device | None = None,
        dtype: str | torch.dtype | None = None,
        batch_size: int | None = None,
        max_batch_tokens: int | None = None,
        progress: bool | None = None,
        tokenize_workers: int | None = None,
    ) -> None:
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        rows, tokens = default_batch_limits(self.device.type)
        self.batch_size = batch_size or rows
        self.max_batch_tokens = max(max_batch_tokens or tokens, 8)
        self.progress = progress
        self.tokenize_workers = tokenize_workers
        self._model: MiniICCModel | None = None
        self._hf_tokenizer = tokenizer
        if model is not None:
            self._adopt(model)
            config = model.config.to_dict()
        else:
            heads, tensors, config = read_mini(shipped_heads_path(), base_model_path())
            self._heads = heads.to(self.device)
            self._encoder = self._encoder_from(tensors, config)
        self.layers = layers_read(config)
        tokenizer_json = (
            tokenizer.backend_tokenizer.to_str()
            if tokenizer is not None
            else (base_model_path() / TOKENIZER_FILE).read_text(encoding="utf-8")
        )
        self._set_reading(config, tokenizer_json)

    # --- the model and tokenizer, for code that wants the transformers objects ---------------------------

    @property
    def model(self) -> MiniICCModel:
        """The ``transformers`` model (built on first use; scores then follow its weights)."""
        if self._model is None:
            from ..models.mini.modeling_mini import MiniICCModel

            self._adopt(MiniICCModel.from_base_and_heads())
        return self._model

    @property
    def tokenizer(self) -> PreTrainedTokenizerBase:
        """The ``transformers`` tokenizer of the base encoder (built on first use)."""
        if self._hf_tokenizer is None:
            from transformers import AutoTokenizer

            self._hf_tokenizer = AutoTokenizer.from_pretrained(str(base_model_path()), trust_remote_code=False)
        return self._hf_tokenizer

    def _adopt(self, model: MiniICCModel) -> None:
        self._model = model.eval().to(self.device)
        self._model.bert.to(self.dtype)
        self._heads = self._model.heads()
        self._encoder, self._encoder_weights = None, ()

    def _encoder_from(self, tensors: dict[str, torch.Tensor], config: dict) -> FastMiniEncoder:
        return FastMiniEncoder(
            tensors,
            config["encoder"],
            config["num_layers"],
            dtype=self.dtype,
            device=self.device,
            batch_hint=self.max_batch_tokens,
        )

    def _current_encoder(self) -> FastMiniEncoder:
        """The fast encoder; rebuilt from the model's weights when those changed (in place or moved)."""
        if self._model is None:
            return self._encoder
        weights = tuple((parameter.data_ptr(), parameter._version) for parameter in self._model.bert.parameters())
        if self._encoder is None or weights != self._encoder_weights:
            tensors = select_encoder_tensors(self._model.bert.state_dict(), self.config["num_layers"], "the model")
            self._encoder = self._encoder_from(tensors, self.config)
            self._encoder_weights = weights
        return self._encoder

    # --- scoring ------------------------------------------------------------------------------------------

    def _forward(self, output: str = "scores") -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
        """``(input_ids, attention_mask) -> scores`` (or ``logits``) with the current weights (resolved once
        per call)."""
        encoder, heads, layers = self._current_encoder(), self._heads, self.layers
        return lambda input_ids, attention_mask: getattr(
            head_outputs(heads, *encoder(input_ids, attention_mask, layers), input_ids, attention_mask), output
        )

    def _run(self, rows: list, tokenize: Tokenize, output: str, workers: int = 0) -> np.ndarray:
        return score_length_sorted(
            rows,
            tokenize,
            self._forward(output),
            max_rows=self.batch_size,
            max_tokens=self.max_batch_tokens,
            pad_multiple=pad_multiple(self.device),
            pad_id=self.pad_id,
            device=self.device,
            progress=self.progress,
            workers=workers,
        )

    def _probability(self, logits: np.ndarray) -> np.ndarray:
        return probability(torch.from_numpy(logits)).numpy()

    def _default_tokenize_workers(self) -> int:
        return default_tokenize_workers(self.device)

    def _token_terms(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> tuple[np.ndarray, ...]:
        ids, mask = (torch.from_numpy(array).to(self.device) for array in (input_ids, attention_mask))
        with torch.inference_mode():
            states = self._current_encoder()(ids, mask, self.layers)
            terms = token_terms(self._heads, *states, ids, mask)
        return tuple(
            value.float().cpu().numpy() for value in (terms.per_token, terms.bias + terms.rounding, terms.output.logits)
        )
