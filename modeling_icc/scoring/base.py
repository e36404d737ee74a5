"""The scorer interface every ICC model implements (neural student, lite, baselines)."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable

import numpy as np

from ..utils.web_junk import is_web_junk
from .explanation import Explanation, occlusion_explanations
from .inputs import ErrorMode, caption_list, deduplicate, has_content, prepare_texts, scatter


class ConcretenessScorer(ABC):
    """Scores captions for visual concreteness.

    ``score(texts)`` returns one float32 per caption, in input order, in [0, 1]
    (higher = more concrete). Blank captions (nothing visible, :func:`~.inputs.has_content`) give NaN;
    ``None`` or non-strings raise ``TypeError`` unless ``errors="nan"``; so does a container that is not an
    ordered list of captions (a single string, bytes, a dict, a set). Repeated captions are scored once
    and share one score. ICC's own scorers (``zeroes_web_junk``) score web junk 0.0 without reading it: alt-text
    that is only a file name, a URL, markup, a missing-value marker, punctuation or a code
    (:func:`~modeling_icc.utils.web_junk.is_web_junk`); the peer baselines of ``icc bench`` score it as they read it.
    """

    #: Identifier recorded next to scores (Hub id, local path or "lite").
    model_id: str = "unknown"
    #: Whether web junk scores 0.0 (ICC's scorers) or goes to the model like any caption (the baselines).
    zeroes_web_junk: bool = False

    def score(self, texts: Iterable[object], *, errors: ErrorMode = "raise", raw: bool = False) -> np.ndarray:
        """Concreteness of each caption, in input order.

        ``raw=True`` returns the model's unclipped output instead of the [0, 1]
        score (identical for models whose output is already bounded).
        """
        valid, mask = prepare_texts(texts, errors=errors)
        distinct, inverse = deduplicate(valid)
        values = self._score_distinct(distinct)[inverse]
        if not raw:
            values = np.clip(values, 0.0, 1.0)
        return scatter(values, mask)

    def explain(self, text: str) -> Explanation:
        """Why ``text`` scores as it does: ``(word, contribution)`` pairs, see :class:`Explanation`.

        The default is occlusion (each word removed in turn, all variants scored in
        one batch); the lite model overrides it with its exact linear decomposition.
        """
        return self.explain_many([text])[0]

    def explain_many(self, texts: list[str]) -> list[Explanation]:
        """Explanations of several captions, batched together."""
        texts = caption_list(texts)
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"caption at index {index} is {type(text).__name__}, not str")
        return occlusion_explanations(self, list(texts))

    def _score_distinct(self, texts: list[str]) -> np.ndarray:
        """Scores of distinct non-blank captions: web junk 0.0 (where the scorer zeroes it), the rest read."""
        scores = np.zeros(len(texts), dtype=np.float32)
        junk = self.web_junk_mask(texts)
        if not junk.all():
            scores[~junk] = self._score_valid([text for text, skip in zip(texts, junk, strict=True) if not skip])
        return scores

    def web_junk_mask(self, texts: list[str]) -> np.ndarray:
        """Which captions this scorer scores 0.0 as web junk (none for a scorer that does not zero it)."""
        if not self.zeroes_web_junk:
            return np.zeros(len(texts), dtype=bool)
        return np.fromiter(map(is_web_junk, texts), dtype=bool, count=len(texts))

    def blank_or_junk_explanation(self, text: str, method: str) -> Explanation | None:
        """The explanation of a caption the model does not read: NaN when blank, 0.0 when web junk (with no
        terms); ``None`` for a caption the model reads."""
        if has_content(text):
            if not self.web_junk_mask([text])[0]:
                return None
            return Explanation(
                [], features=[], bias=None, total=0.0, score=0.0, method="web junk", model_id=self.model_id
            )
        return Explanation(
            [], features=[], bias=None, total=math.nan, score=math.nan, method=method, model_id=self.model_id
        )

    @abstractmethod
    def _score_valid(self, texts: list[str]) -> np.ndarray:
        """Raw scores of non-blank captions (float32, same order)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r})"
