"""The scorer interface every ICC model implements (neural student, lite, baselines)."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from ..utils.caption_text import replace_surrogates
from ..utils.caption_wrappers import unwrap_caption
from ..utils.web_junk import is_web_junk, web_junk_kind
from .explanation import Explanation, occlusion_explanations
from .inputs import ErrorMode, caption_list, deduplicate, has_content, prepare_texts, scatter
from .languages import caption_language, not_read_reason, read_captions_languages, read_codes, reads

_NO_SCORES = np.empty(0, dtype=np.float32)
#: A scorer's per-call settings, set on a copy that shares the model's weights: not part of a cached model's
#: identity (``load_scorer(..., cache=True)``), and passed on to the torch mini that serves ONNX Runtime's.
BATCH_SETTINGS = ("batch_size", "max_batch_tokens", "progress", "tokenize_workers")


@dataclass(frozen=True)
class _ReadPiece:
    """One list of captions as a scorer reads it: ``texts`` to score (with content, distinct, not web junk, in a
    language the model reads), and how their scores go back to every position (``mask`` of captions with
    content, ``inverse`` to the distinct ones, ``junk`` among the distinct ones, which score 0.0, ``unread``
    among them, in a language the model does not read, which score NaN)."""

    texts: list[str]
    mask: np.ndarray
    inverse: np.ndarray
    junk: np.ndarray
    unread: np.ndarray

    def scores(self, values: np.ndarray, raw: bool) -> np.ndarray:
        """Every position's score from ``values`` (those of ``texts``): NaN for blanks and captions in a language
        the model does not read, clipped unless ``raw``."""
        distinct = np.zeros(len(self.junk), dtype=np.float32)
        distinct[self.unread] = np.nan
        distinct[~(self.junk | self.unread)] = values
        scores = distinct[self.inverse]
        return scatter(scores if raw else np.clip(scores, 0.0, 1.0), self.mask)


class ConcretenessScorer(ABC):
    """Scores captions for visual concreteness.

    ``score(texts)`` returns one float32 per caption, in input order, in [0, 1]
    (higher = more concrete). Blank captions (nothing visible, :func:`~.inputs.has_content`) give NaN;
    ``None`` or non-strings raise ``TypeError`` unless ``errors="nan"``; so does a container that is not an
    ordered list of captions (a single string, bytes, a dict, a set). Repeated captions are scored once
    and share one score. ICC's own scorers (``zeroes_web_junk``) score web junk 0.0 without reading it: alt-text
    that is no caption (a URL, a camera or default file name, markup alone, a missing-value marker, a placeholder,
    punctuation or a code: :func:`~modeling_icc.utils.web_junk.web_junk_kind`), and read every other caption
    without its wrappers (markup, escaped characters, a file name's extension: :meth:`text_read`); the peer
    baselines of ``icc bench`` read every caption as it is.
    A caption in a language the model does not read (:attr:`languages`, :mod:`~.languages`) scores NaN.
    """

    #: Identifier recorded next to scores (Hub id, local path or "lite").
    model_id: str = "unknown"
    #: Whether web junk scores 0.0 (ICC's scorers) or goes to the model like any caption (the baselines).
    zeroes_web_junk: bool = False
    #: The languages (ISO 639 codes) the model was shown to read: a caption named in another scores NaN
    #: (:mod:`.languages`; undetermined captions are read). ``None``: any text (the peer baselines).
    languages: frozenset[str] | None = None

    def score(self, texts: Iterable[object], *, errors: ErrorMode = "raise", raw: bool = False) -> np.ndarray:
        """Concreteness of each caption, in input order.

        ``raw=True`` returns the model's unclipped output instead of the [0, 1]
        score (identical for models whose output is already bounded).
        """
        piece = self._read_piece(texts, errors)
        return piece.scores(self._score_valid(piece.texts) if piece.texts else _NO_SCORES, raw)

    def score_stream(
        self, pieces: Iterable[Iterable[object]], *, errors: ErrorMode = "raise", raw: bool = False
    ) -> Iterator[np.ndarray]:
        """``score`` of each piece, in order, as they finish (the same scores as one call per piece).

        Why: a scorer on a GPU tokenizes the next piece and launches its batches while this one runs, so the
        device does not wait at every piece's start as it does between calls; ``pieces`` is read a few pieces
        ahead of what is given back. Other scorers score one piece at a time.
        """
        read: deque[_ReadPiece] = deque()

        def texts_to_read() -> Iterator[list[str]]:
            for texts in pieces:
                read.append(self._read_piece(texts, errors))
                yield read[-1].texts

        for values in self._score_valid_stream(texts_to_read()):
            yield read.popleft().scores(values, raw)

    def _read_piece(self, texts: Iterable[object], errors: ErrorMode) -> _ReadPiece:
        """The captions the model reads of ``texts``: with content, distinct, not web junk, in its languages,
        wrappers taken off."""
        valid, mask = prepare_texts(texts, errors=errors)
        distinct, inverse = deduplicate(valid)
        junk = self.web_junk_mask(distinct)
        kept = [text for text, skipped in zip(distinct, junk.tolist(), strict=True) if not skipped]
        kept_read = [self.text_read(text) for text in kept]
        unread = np.zeros(len(distinct), dtype=bool)
        unread[~junk] = self.unread_mask(kept, kept_read)
        read = [text for text, skipped in zip(kept_read, unread[~junk].tolist(), strict=True) if not skipped]
        return _ReadPiece(read, mask, inverse, junk, unread)

    def unread_mask(self, texts: list[str], read: list[str]) -> np.ndarray:
        """Which captions are in a language this model does not read (none for a model of any language); named as
        written, as the writers name them (``icc_language``). ``read``: each as :meth:`text_read` gives it, so that
        their wrappers are not taken off twice (named from the text as written where this model reads that)."""
        if self.languages is None:
            return np.zeros(len(texts), dtype=bool)
        as_read = read if self.zeroes_web_junk else [None] * len(texts)
        codes = read_codes(self.languages)
        named = read_captions_languages(texts, as_read)
        return np.fromiter((language not in codes for language in named), bool, len(texts))

    def text_read(self, text: str) -> str:
        """What the model reads of a caption that is no web junk: ICC's scorers take its wrappers off (markup,
        escaped characters, a file name's extension, a tagger's preamble:
        :func:`~modeling_icc.utils.caption_wrappers.unwrap_caption`); the peer baselines read it as it is."""
        return unwrap_caption(text) if self.zeroes_web_junk else text

    def explain(self, text: str) -> Explanation:
        """Why ``text`` scores as it does: ``(word, contribution)`` pairs, see :class:`Explanation`.

        The default is occlusion (each word removed in turn, all variants scored in
        one batch); the lite model overrides it with its exact linear decomposition.
        """
        return self.explain_many([text])[0]

    def explain_many(self, texts: list[str]) -> list[Explanation]:
        """Explanations of several captions, batched together (blank captions and web junk explained as the
        NaN and 0.0 they score, without terms)."""
        texts = caption_list(texts)
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"caption at index {index} is {type(text).__name__}, not str")
        unread = [self.blank_or_junk_explanation(text, "occlusion") for text in texts]
        read = [
            self.text_read(replace_surrogates(text)) for text, done in zip(texts, unread, strict=True) if done is None
        ]
        explained = iter(occlusion_explanations(self, read))
        return [
            done if done is not None else next(explained).in_language(caption_language(text))
            for text, done in zip(texts, unread, strict=True)
        ]

    def web_junk_mask(self, texts: list[str]) -> np.ndarray:
        """Which captions this scorer scores 0.0 as web junk (none for a scorer that does not zero it)."""
        if not self.zeroes_web_junk:
            return np.zeros(len(texts), dtype=bool)
        return np.fromiter(map(is_web_junk, texts), dtype=bool, count=len(texts))

    def blank_or_junk_explanation(self, text: str, method: str) -> Explanation | None:
        """The explanation of a caption the model does not read, shown as written: NaN when blank or in a language
        the model does not read (the reason as its method), 0.0 when web junk (no terms; ``web_junk`` says what
        kind, ``method`` is ``"web junk"``); ``None`` for a caption the model reads."""
        if has_content(text):
            language = caption_language(text)
            kind = web_junk_kind(text) if self.zeroes_web_junk else None
            if kind is not None:
                return Explanation(
                    [], features=[], bias=None, total=0.0, score=0.0, method="web junk", model_id=self.model_id,
                    text=text, offsets=[], web_junk=kind,
                ).in_language(language)  # fmt: skip
            if self.languages is None or reads(language, self.languages):
                return None
            method = not_read_reason(language, self.model_id, self.languages)
            return Explanation(
                [], features=[], bias=None, total=math.nan, score=math.nan, method=method, model_id=self.model_id,
                text=text, offsets=[],
            ).in_language(language)  # fmt: skip
        return Explanation(
            [], features=[], bias=None, total=math.nan, score=math.nan, method=method, model_id=self.model_id,
            text=text, offsets=[],
        )  # fmt: skip

    @abstractmethod
    def _score_valid(self, texts: list[str]) -> np.ndarray:
        """Raw scores of non-blank captions (float32, same order)."""

    def _score_valid_stream(self, pieces: Iterator[list[str]]) -> Iterator[np.ndarray]:
        """:meth:`_score_valid` of each piece, in order; scorers that can work ahead across pieces override it."""
        for texts in pieces:
            yield self._score_valid(texts) if texts else _NO_SCORES

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r})"
