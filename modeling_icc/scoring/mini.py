"""The ``"mini"`` scorer: the pip-shipped MiniLM encoder (first 4 layers) and linear heads, no download."""

from __future__ import annotations

import math

import numpy as np
import torch
from transformers import PreTrainedTokenizerBase

from ..models.mini.modeling_mini import MiniICCModel, base_model_path, prepare_text
from ..utils.caption_text import normalize_caption
from ..utils.windows import split_windows, window_piece_starts, window_weights
from .base import ConcretenessScorer
from .devices import resolve_device, resolve_dtype
from .explanation import Explanation
from .inputs import caption_list
from .runner import pad_multiple, score_length_sorted

EXPLANATION_METHOD = "mini-linear"


def default_batch_limits(device: torch.device) -> tuple[int, int]:
    """``(max_rows, max_tokens)`` per batch: large on GPUs; on CPUs what mini's measurements used."""
    if device.type == "cuda":
        return 1024, 65_536
    return 256, 8_192


class MiniScorer(ConcretenessScorer):
    """Scores captions with :class:`~modeling_icc.models.mini.MiniICCModel`.

    ``score`` is ``sigmoid(logit)`` in [0, 1]; 0.5 separates the abstract and concrete halves of the
    human annotation. Captions are normalized for web noise (``prepare_text``: hashtags to words; handles,
    URLs and emoji dropped; repeats squeezed) and lower-cased, tokenized once, sorted by length and batched
    under a token budget. A caption longer than the 128-token window is read in overlapping windows whose
    logits are averaged (``modeling_icc/utils/windows.py``); one that fits is read as it is. The encoder
    runs in ``dtype`` (default: bf16 on GPUs and on CPUs with native bf16, fp32 elsewhere or with
    ``ICC_FORCE_FP32=1``); the heads always run in fp32. A ``model`` passed in is moved to ``device`` and
    its encoder cast to ``dtype``.
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

    def _prepare(self, text: str) -> str:
        return prepare_text(text, self.model.config.lowercase)

    def _tokenize(self, prepared: list[str]) -> list[list[int]]:
        """Token ids of prepared texts, cut to the first window (all of a caption that fits one)."""
        return self.tokenizer(
            prepared,
            truncation=True,
            max_length=self.max_length,
            return_attention_mask=False,
            return_token_type_ids=False,
        )["input_ids"]

    def _scores(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids, attention_mask).scores

    def _logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids, attention_mask).logits

    def _run(self, rows: list, tokenize, forward) -> np.ndarray:
        return score_length_sorted(
            rows,
            tokenize,
            forward,
            max_rows=self.batch_size,
            max_tokens=self.max_batch_tokens,
            pad_multiple=pad_multiple(self.device),
            pad_id=self.tokenizer.pad_token_id or 0,
            device=self.device,
            progress=self.progress,
        )

    def _windows(self, prepared: str) -> list[list[int]]:
        ids = self.tokenizer(prepared, return_attention_mask=False, return_token_type_ids=False)["input_ids"]
        return split_windows(ids, self.max_length)

    def _long_text_scores(self, prepared: list[str], scores: np.ndarray) -> np.ndarray:
        """Rescore captions longer than one window: ``sigmoid(mean of their window logits)``.

        A WordPiece token covers at least one character, so only texts longer than the window in
        characters can overflow it; only those are tokenized again, in full. Every other score stays
        the one-window score, bit for bit.
        """
        width = self.max_length - 2
        owners, rows = [], []
        for index, text in enumerate(prepared):
            if len(text) > width:
                windows = self._windows(text)
                if len(windows) > 1:
                    owners.append((index, len(windows)))
                    rows.extend(windows)
        if not rows:
            return scores
        logits = self._run(rows, lambda chunk: chunk, self._logits).astype(np.float64)
        position = 0
        for index, n_windows in owners:
            logit = np.float32(window_weights(n_windows) @ logits[position : position + n_windows])
            scores[index] = torch.sigmoid(torch.tensor(logit)).item()
            position += n_windows
        return scores

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        prepared = [self._prepare(text) for text in texts]
        return self._long_text_scores(prepared, self._run(prepared, self._tokenize, self._scores))

    def explain(self, text: str) -> Explanation:
        """Exact per-word contributions to the logit: ``sum(words) + bias == total == logit(score)``.

        Word pieces are summed into their word; [CLS] and [SEP] are folded into ``bias``, and so is the
        rounding of a bf16 encoder's mean embedding, which no word owns (about 0.002 in logit units; in fp32
        the word terms are exact). A word contributes through its share of the mean embedding and, for a
        content word, its contextual concreteness, so function words and punctuation carry terms too.
        The words are those of the normalized caption (what the model reads, as in ``score``); a caption
        longer than one window is explained over all its windows, each term weighted as its window's logit.
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
        normalized = normalize_caption(text)
        surface = normalized if len(normalized) == len(prepared) else prepared
        encoded = self.tokenizer(prepared, return_offsets_mapping=True, return_token_type_ids=False)
        offsets, word_ids = encoded["offset_mapping"], encoded.word_ids()
        windows = split_windows(encoded["input_ids"], self.max_length)
        weights = window_weights(len(windows))
        starts = window_piece_starts(len(encoded["input_ids"]) - 2, self.max_length)
        width = max(map(len, windows))
        input_ids = torch.zeros((len(windows), width), dtype=torch.long)
        attention_mask = torch.zeros((len(windows), width), dtype=torch.long)
        for row, window in enumerate(windows):
            input_ids[row, : len(window)] = torch.tensor(window)
            attention_mask[row, : len(window)] = 1
        with torch.inference_mode():
            terms = self.model.token_contributions(input_ids.to(self.device), attention_mask.to(self.device))
        per_token = terms.per_token.float().cpu().numpy().astype(np.float64)
        bias = float(weights @ (terms.bias + terms.rounding).float().cpu().numpy())
        words: dict[int, list] = {}  # word index -> [start, end, contribution]
        for row, (window, start) in enumerate(zip(windows, starts, strict=True)):
            for position in range(len(window)):
                contribution = weights[row] * per_token[row, position]
                # Position 0 is [CLS], the last is [SEP]; position k reads piece start + k of the whole caption.
                piece = start + position if 0 < position < len(window) - 1 else None
                word = None if piece is None else word_ids[piece]
                if word is None:
                    bias += contribution
                elif word in words:  # a word piece of a word already seen
                    words[word][1] = max(words[word][1], offsets[piece][1])
                    words[word][2] += contribution
                else:
                    words[word] = [offsets[piece][0], offsets[piece][1], contribution]
        logit = np.float32(weights @ terms.output.logits.float().cpu().numpy().astype(np.float64))
        total = float(logit)
        return Explanation(
            [(surface[start:end], contribution) for start, end, contribution in sorted(words.values())],
            features=[],
            bias=bias,
            total=total,
            score=float(torch.sigmoid(torch.tensor(logit))),  # as score() computes it
            method=EXPLANATION_METHOD,
            model_id=self.model_id,
        )

    def explain_many(self, texts: list[str]) -> list[Explanation]:
        return [self.explain(text) for text in caption_list(texts)]
