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
from ..utils.windows import boundary_prefix, pieces_read, split_windows, window_weights
from .base import ConcretenessScorer
from .chunks import Tokenize
from .explanation import Explanation
from .inputs import caption_list
from .languages import ENGLISH_ONLY
from .progress import current_report, reporting_to
from .tokenize_workers import TokenizerSpec, built_tokenizer

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer

#: Characters per word piece first assumed when a long caption's start is cut for tokenizing (grown if short).
CHARS_PER_PIECE = 8
TOKENIZER_FILE = "tokenizer.json"


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
