"""The ``"mini"`` scorer: the pip-shipped MiniLM encoder (first 4 layers) and linear heads, no download.

It scores through :class:`~modeling_icc.models.mini.fast_encoder.FastMiniEncoder` and the Rust tokenizer,
built straight from mini's files: no ``transformers`` import (seconds of start-up), pre-packed fused
products on CPUs. ``scorer.model`` and ``scorer.tokenizer`` (the ``transformers`` model and tokenizer) are
built on first use, for code that wants them; once the model exists, scores follow its weights.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..models.mini.fast_encoder import FastMiniEncoder, select_encoder_tensors
from ..models.mini.files import (
    BASE_WEIGHTS_FILE,
    base_model_path,
    check_base_matches,
    prepare_text,
    read_base_weights,
    read_heads,
    shipped_heads_path,
)
from ..models.mini.heads import MiniHeads, head_outputs, token_terms
from .base import ConcretenessScorer
from .devices import resolve_device, resolve_dtype
from .explanation import Explanation
from .inputs import caption_list
from .runner import default_tokenize_workers, pad_multiple, score_length_sorted
from .tokenize_workers import TokenizerSpec, built_tokenizer

if TYPE_CHECKING:
    from tokenizers import Encoding
    from transformers import PreTrainedTokenizerBase

    from ..models.mini.modeling_mini import MiniICCModel

EXPLANATION_METHOD = "mini-linear"
TOKENIZER_FILE = "tokenizer.json"


def default_batch_limits(device: torch.device) -> tuple[int, int]:
    """``(max_rows, max_tokens)`` per batch: large on GPUs; on CPUs what mini's measurements used."""
    if device.type == "cuda":
        return 1024, 65_536
    return 256, 8_192


class MiniScorer(ConcretenessScorer):
    """Scores captions with mini (see ``docs/mini.md``).

    ``score`` is ``sigmoid(logit)`` in [0, 1]; 0.5 separates the abstract and concrete halves of the
    human annotation. Captions are lower-cased, tokenized once, sorted by length and batched under a
    token budget; only the first 128 tokens are read. The encoder runs in ``dtype`` (default: bf16 on GPUs
    and on CPUs with native bf16, fp32 elsewhere or with ``ICC_FORCE_FP32=1``); the heads always run in fp32.
    A ``model`` passed in is moved to ``device`` and its encoder cast to ``dtype``; without one, mini is
    built from the pip base weights and the shipped heads.
    """

    model_id = "mini"

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
        rows, tokens = default_batch_limits(self.device)
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
            heads_path, base_path = shipped_heads_path(), base_model_path()
            head_tensors, payload = read_heads(heads_path)
            check_base_matches(payload, heads_path, base_path)
            config = payload["config"]
            self._heads = MiniHeads.from_tensors(head_tensors, config["special_token_ids"]).to(self.device)
            source = str(base_path / BASE_WEIGHTS_FILE)
            tensors = select_encoder_tensors(read_base_weights(base_path), config["num_layers"], source)
            self._encoder = self._encoder_from(tensors, config)
        self.config = config
        self.max_length = int(config["max_length"])
        self.lowercase = bool(config["lowercase"])
        self.layers = (int(config["embedding_layer"]), int(config["word_layer"]))
        tokenizer_json = (
            tokenizer.backend_tokenizer.to_str()
            if tokenizer is not None
            else (base_model_path() / TOKENIZER_FILE).read_text(encoding="utf-8")
        )
        self._token_spec = TokenizerSpec(tokenizer_json, self.max_length)
        self._tokenizer = built_tokenizer(self._token_spec)
        self.pad_id = self._tokenizer.token_to_id("[PAD]") or 0

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

            self._hf_tokenizer = AutoTokenizer.from_pretrained(str(base_model_path()))
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

    def _prepare(self, text: str) -> str:
        return prepare_text(text, self.lowercase)

    def _forward(self) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
        """``(input_ids, attention_mask) -> scores`` with the current weights (resolved once per call)."""
        encoder, heads, layers = self._current_encoder(), self._heads, self.layers
        return lambda input_ids, attention_mask: (
            head_outputs(heads, *encoder(input_ids, attention_mask, layers), input_ids, attention_mask).scores
        )

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        # Texts prepared here, tokenized into packed arrays (in worker processes on a GPU, see
        # load_scorer's tokenize_workers), batched in NumPy.
        workers = default_tokenize_workers(self.device) if self.tokenize_workers is None else self.tokenize_workers
        return score_length_sorted(
            [self._prepare(text) for text in texts],
            self._token_spec,
            self._forward(),
            max_rows=self.batch_size,
            max_tokens=self.max_batch_tokens,
            pad_multiple=pad_multiple(self.device),
            pad_id=self.pad_id,
            device=self.device,
            progress=self.progress,
            workers=workers,
        )

    def explain(self, text: str) -> Explanation:
        """Exact per-word contributions to the logit: ``sum(words) + bias == total == logit(score)``.

        Word pieces are summed into their word; [CLS] and [SEP] are folded into ``bias``, and so is the
        rounding of a bf16 encoder's mean embedding, which no word owns (about 0.002 in logit units; in fp32
        the word terms are exact). A word contributes through its share of the mean embedding and, for a
        content word, its contextual concreteness, so function words and punctuation carry terms too.
        Only the first 128 tokens are read, as in ``score``; the score is computed as ``score`` computes it.
        """
        if not isinstance(text, str):
            raise TypeError(f"explain() takes a caption string, got {type(text).__name__}")
        if not text.strip():
            return Explanation(
                [],
                features=[],
                bias=None,
                total=math.nan,
                score=math.nan,
                method=EXPLANATION_METHOD,
                model_id=self.model_id,
            )
        prepared = self._prepare(text)
        surface = text if len(prepared) == len(text) else prepared
        encoding: Encoding = self._tokenizer.encode(prepared)
        input_ids = torch.tensor([encoding.ids], device=self.device)
        attention_mask = torch.ones_like(input_ids)
        with torch.inference_mode():
            states = self._current_encoder()(input_ids, attention_mask, self.layers)
            terms = token_terms(self._heads, *states, input_ids, attention_mask)
        per_token = terms.per_token[0].float().cpu().tolist()
        bias = float(terms.bias[0] + terms.rounding[0])
        words: dict[int, list] = {}  # word index -> [start, end, contribution]
        for word, (start, end), contribution in zip(encoding.word_ids, encoding.offsets, per_token, strict=True):
            if word is None:  # [CLS] / [SEP]
                bias += contribution
            elif word in words:  # a word piece of the same word
                words[word][1] = end
                words[word][2] += contribution
            else:
                words[word] = [start, end, contribution]
        return Explanation(
            [(surface[start:end], contribution) for start, end, contribution in words.values()],
            features=[],
            bias=bias,
            total=float(terms.output.logits[0]),
            score=float(terms.output.scores[0]),
            method=EXPLANATION_METHOD,
            model_id=self.model_id,
        )

    def explain_many(self, texts: list[str]) -> list[Explanation]:
        return [self.explain(text) for text in caption_list(texts)]
