"""How mini reads captions, whatever runs its network: normalization, tokenization, windows, their average.

Shared by mini's two runtimes, torch (``mini.py``) and ONNX Runtime (``mini_onnx.py``), and free of
torch, so the ONNX Runtime path never imports it. A runtime supplies ``_run`` (logits or scores of rows of
text or of token ids) and ``_probability`` (logit to score, as its own heads compute it).
"""

from __future__ import annotations

from abc import abstractmethod
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from ..models.mini.files import prepare_text
from ..utils.caption_text import normalize_caption, replace_surrogates
from ..utils.windows import boundary_prefix, pieces_read, split_windows, window_piece_starts, window_weights
from .base import ConcretenessScorer
from .chunks import Tokenize
from .explanation import Explanation
from .inputs import caption_list
from .languages import ENGLISH_ONLY, caption_language
from .progress import current_report, reporting_to
from .tokenize_workers import TokenizerSpec, built_tokenizer

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer

#: Characters per word piece first assumed when a long caption's start is cut for tokenizing (grown if short).
CHARS_PER_PIECE = 8
TOKENIZER_FILE = "tokenizer.json"
#: ``Explanation.method`` of mini's explanations (on either runtime).
EXPLANATION_METHOD = "mini-linear"


def default_batch_limits(device_type: str, runtime: str = "torch") -> tuple[int, int]:
    """``(max_rows, max_tokens)`` per batch: large on GPUs; on CPUs what mini's measurements chose for each
    runtime. ONNX Runtime ran as fast or faster on 1,024-token batches as on 8,192 and peaked 170 MB lower
    with two batches side by side (each batch's activations are held until it ends; docs/speed.md,
    "mini on ONNX Runtime")."""
    if device_type == "cuda":
        return 1024, 65_536
    return (256, 1_024) if runtime == "onnxruntime" else (256, 8_192)


def identity(rows: list) -> list:
    """The tokenize step of rows that are token ids already."""
    return rows


class MiniReading(ConcretenessScorer):
    """mini's reading of captions (see :class:`~modeling_icc.scoring.mini.MiniScorer` for what it is)."""

    model_id = "mini"
    zeroes_web_junk = True
    languages = ENGLISH_ONLY

    def _set_reading(self, config: dict, tokenizer_json: str) -> None:
        """The window, lower-casing and tokenizer of ``config`` (a heads file's) and ``tokenizer_json``."""
        self.config = config
        self.max_length = int(config["max_length"])
        self.lowercase = bool(config["lowercase"])
        self._token_spec = TokenizerSpec(tokenizer_json, self.max_length)
        self._tokenizer = built_tokenizer(self._token_spec)
        self.pad_id = self._tokenizer.token_to_id("[PAD]") or 0

    @abstractmethod
    def _run(self, rows: list, tokenize: Tokenize, output: str, workers: int = 0) -> np.ndarray:
        """``output`` (``"scores"`` or ``"logits"``) of each row (texts, or token ids with :func:`identity`)."""

    @abstractmethod
    def _probability(self, logits: np.ndarray) -> np.ndarray:
        """The scores of float32 ``logits``, rounded as the runtime's own scores are."""

    @abstractmethod
    def _default_tokenize_workers(self) -> int:
        """Tokenizer processes when ``tokenize_workers`` is ``None``."""

    @abstractmethod
    def _token_terms(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(per_token (B, T), bias (B,), logits (B,))``, float32, of right-padded int64 windows: each token's
        share of its window's logit, what the tokens leave (the heads' bias and float32 rounding), the logit."""

    def explain(self, text: str) -> Explanation:
        """Exact per-word contributions to the logit: ``sum(words) + bias == total == logit(score)``.

        Word pieces are summed into their word; [CLS] and [SEP] are folded into ``bias``, and so is the
        float32 rounding of the decomposition (about 1e-6, with a bf16 encoder too: the heads average its
        token states in fp32). A word contributes through its share of the mean embedding and, for a
        content word, its contextual concreteness, so function words and punctuation carry terms too.
        The words are those of the caption as the model reads it (wrappers taken off, normalized, as in
        ``score``); a caption longer than one window is explained over all its windows, each term weighted as
        its window's logit.
        """
        if not isinstance(text, str):
            raise TypeError(f"explain() takes a caption string, got {type(text).__name__}")
        unread = self.blank_or_junk_explanation(text, EXPLANATION_METHOD)
        if unread is not None:
            return unread
        caption, text = text, self.text_read(replace_surrogates(text))
        prepared = self._prepare(text)
        normalized = normalize_caption(text)
        surface = normalized if len(normalized) == len(prepared) else prepared
        encoding: Encoding = self._read_pieces(prepared)[1]
        windows = split_windows(encoding.ids, self.max_length)
        weights = window_weights(len(windows))
        starts = window_piece_starts(len(encoding.ids) - 2, self.max_length)
        width = max(map(len, windows))
        input_ids = np.zeros((len(windows), width), dtype=np.int64)
        attention_mask = np.zeros((len(windows), width), dtype=np.int64)
        for row, window in enumerate(windows):
            input_ids[row, : len(window)] = window
            attention_mask[row, : len(window)] = 1
        per_token, window_bias, logits = self._token_terms(input_ids, attention_mask)
        per_token = per_token.astype(np.float64)
        bias = float(weights @ window_bias)
        # Read once: each access to an Encoding's list attribute copies the whole list out of Rust.
        word_ids, offsets = encoding.word_ids, encoding.offsets
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
        logit = np.float32(weights @ logits.astype(np.float64))
        spans = sorted(words.values())
        return Explanation(
            [(surface[start:end], float(contribution)) for start, end, contribution in spans],
            features=[],
            bias=float(bias),
            total=float(logit),
            score=float(self._probability(np.array([logit], dtype=np.float32))[0]),  # as score() computes it
            method=EXPLANATION_METHOD,
            model_id=self.model_id,
            text=surface,
            offsets=[(start, end) for start, end, _ in spans],
        ).in_language(caption_language(caption))

    def _prepare(self, text: str) -> str:
        return prepare_text(text, self.lowercase)

    @cached_property
    def _full_tokenizer(self) -> Tokenizer:
        """The tokenizer without truncation: the word pieces of a whole caption, for its windows."""
        tokenizer = self._token_spec.build()
        tokenizer.no_truncation()
        return tokenizer

    def _read_pieces(self, text: str) -> tuple[str, Encoding]:
        """The shortest start of ``text`` ending at a word boundary that holds every word piece mini reads
        (:func:`~modeling_icc.utils.windows.pieces_read`; the whole text when it has fewer), and its encoding:
        what lies past it is never read, so a megabyte-long caption is not tokenized whole."""
        needed = pieces_read(self.max_length)
        chars = CHARS_PER_PIECE * needed
        while True:
            prefix = boundary_prefix(text, chars)
            encoding = self._full_tokenizer.encode(prefix)
            if prefix is text or len(encoding.ids) - 2 >= needed:
                return prefix, encoding
            chars *= 4

    def _windows_of_long_texts(self, prepared: list[str]) -> dict[int, list[list[int]]]:
        """``{index: its windows}`` of the captions that could overflow one window, tokenized here (up to what
        is read): a WordPiece token covers at least one character, so only texts longer than the window in
        characters can overflow it. Most of them still fit one window."""
        width = self.max_length - 2
        return {
            index: split_windows(self._read_pieces(text)[1].ids, self.max_length)
            for index, text in enumerate(prepared)
            if len(text) > width
        }

    def _long_text_scores(self, long: dict[int, list[list[int]]], scores: np.ndarray) -> np.ndarray:
        """Score captions longer than one window: ``sigmoid(weighted mean of their window logits)``."""
        rows = [window for windows in long.values() for window in windows]
        if not rows:
            return scores
        with reporting_to(lambda count: None):  # window rows are no captions: reported below, one per caption
            logits = self._run(rows, identity, "logits").astype(np.float64)
        position = 0
        for index, windows in long.items():
            n_windows = len(windows)
            logit = np.float32(window_weights(n_windows) @ logits[position : position + n_windows])
            scores[index] = self._probability(np.array([logit], dtype=np.float32))[0]
            position += n_windows
        report = current_report()
        if report is not None:
            report(len(long))
        return scores

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        # Texts prepared here, tokenized into packed arrays (in worker processes on a GPU, see
        # load_scorer's tokenize_workers), batched in NumPy. Texts long in characters were tokenized here
        # already (to find their windows): those that fit one window are scored from those ids (a megabyte-long
        # word is not tokenized twice), the longer ones read in windows. A caption's score does not depend
        # on what it is batched with, so the three groups score as they would together.
        prepared = [self._prepare(text) for text in texts]
        windowed = self._windows_of_long_texts(prepared)
        scores = np.empty(len(prepared), dtype=np.float32)
        plain = [index for index in range(len(prepared)) if index not in windowed]
        if plain:
            workers = self._default_tokenize_workers() if self.tokenize_workers is None else self.tokenize_workers
            scores[plain] = self._run([prepared[index] for index in plain], self._token_spec, "scores", workers)
        one_window = [index for index, windows in windowed.items() if len(windows) == 1]
        if one_window:
            scores[one_window] = self._run([windowed[index][0] for index in one_window], identity, "scores")
        long = {index: windows for index, windows in windowed.items() if len(windows) > 1}
        return self._long_text_scores(long, scores)

    def explain_many(self, texts: list[str]) -> list[Explanation]:
        return [self.explain(text) for text in caption_list(texts)]
