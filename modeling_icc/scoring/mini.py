"""The ``"mini"`` scorer: the pip-shipped MiniLM encoder (first 4 layers) and linear heads, no download."""

from __future__ import annotations

import math

import numpy as np
import torch
from transformers import PreTrainedTokenizerBase

from ..models.mini.modeling_mini import MiniICCModel, base_model_path, prepare_text
from .base import ConcretenessScorer
from .devices import resolve_device, resolve_dtype
from .explanation import Explanation
from .inputs import caption_list
from .runner import default_tokenize_workers, pad_multiple, score_length_sorted
from .tokenize_workers import TokenizerSpec

EXPLANATION_METHOD = "mini-linear"


def default_batch_limits(device: torch.device) -> tuple[int, int]:
    """``(max_rows, max_tokens)`` per batch: large on GPUs; on CPUs what mini's measurements used."""
    if device.type == "cuda":
        return 1024, 65_536
    return 256, 8_192


class MiniScorer(ConcretenessScorer):
    """Scores captions with :class:`~modeling_icc.models.mini.MiniICCModel`.

    ``score`` is ``sigmoid(logit)`` in [0, 1]; 0.5 separates the abstract and concrete halves of the
    human annotation. Captions are lower-cased, tokenized once, sorted by length and batched under a
    token budget; only the first 128 tokens are read. The encoder runs in ``dtype`` (default: bf16 on GPUs
    and on CPUs with native bf16, fp32 elsewhere or with ``ICC_FORCE_FP32=1``); the heads always run in fp32.
    A ``model`` passed in is moved to ``device`` and its encoder cast to ``dtype``.
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
        from transformers import AutoTokenizer

        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self.model = (model if model is not None else MiniICCModel.from_base_and_heads()).eval().to(self.device)
        self.model.bert.to(self.dtype)
        self.tokenizer = tokenizer if tokenizer is not None else AutoTokenizer.from_pretrained(str(base_model_path()))
        rows, tokens = default_batch_limits(self.device)
        self.batch_size = batch_size or rows
        self.max_batch_tokens = max(max_batch_tokens or tokens, 8)
        self.progress = progress
        self.max_length = self.model.config.max_length
        self.tokenize_workers = tokenize_workers
        self._token_spec = TokenizerSpec.from_pretrained_tokenizer(self.tokenizer, self.max_length)

    def _prepare(self, text: str) -> str:
        return prepare_text(text, self.model.config.lowercase)

    def _forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids, attention_mask).scores

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        # The host pipeline of issue 24: texts prepared here, tokenized into packed arrays (in worker
        # processes on a GPU, see load_scorer's tokenize_workers), batched in NumPy.
        workers = default_tokenize_workers(self.device) if self.tokenize_workers is None else self.tokenize_workers
        return score_length_sorted(
            [self._prepare(text) for text in texts],
            self._token_spec,
            self._forward,
            max_rows=self.batch_size,
            max_tokens=self.max_batch_tokens,
            pad_multiple=pad_multiple(self.device),
            pad_id=self.tokenizer.pad_token_id or 0,
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
        Only the first 128 tokens are read, as in ``score``.
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
        encoded = self.tokenizer(
            [prepared], truncation=True, max_length=self.max_length, return_offsets_mapping=True, return_tensors="pt"
        )
        offsets = encoded["offset_mapping"][0].tolist()
        with torch.inference_mode():
            terms = self.model.token_contributions(
                encoded["input_ids"].to(self.device), encoded["attention_mask"].to(self.device)
            )
        per_token = terms.per_token[0].float().cpu().tolist()
        bias = float(terms.bias[0] + terms.rounding[0])
        words: dict[int, list] = {}  # word index -> [start, end, contribution]
        for word, (start, end), contribution in zip(encoded.word_ids(0), offsets, per_token, strict=True):
            if word is None:  # [CLS] / [SEP]
                bias += contribution
            elif word in words:  # a word piece of the same word
                words[word][1] = end
                words[word][2] += contribution
            else:
                words[word] = [start, end, contribution]
        total = float(terms.output.logits[0])
        return Explanation(
            [(surface[start:end], contribution) for start, end, contribution in words.values()],
            features=[],
            bias=bias,
            total=total,
            score=float(terms.output.scores[0]),
            method=EXPLANATION_METHOD,
            model_id=self.model_id,
        )

    def explain_many(self, texts: list[str]) -> list[Explanation]:
        return [self.explain(text) for text in caption_list(texts)]
