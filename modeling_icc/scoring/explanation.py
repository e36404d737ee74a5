"""Explanations: which words (and, for lite, which features) push a caption's score up or down."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .base import ConcretenessScorer


class Explanation(list):
    """A list of ``(text, contribution)`` pairs in caption order: words or rated phrases.

    Positive contributions make the caption more concrete. The other terms of
    the decomposition sit in attributes:

    - ``features``: ``(feature name, contribution)`` for caption-level cues (lite only);
    - ``bias``: the constant term (lite) or ``None``;
    - ``total``: what the terms add up to (lite: the logit, so that
      ``sum(word terms) + sum(feature terms) + bias == total`` and
      ``score == sigmoid(total)``; student: the raw score of the whole caption,
      with word terms measured by occlusion, which need not add up);
    - ``score``: the caption's score in [0, 1]; ``method``: how terms were computed;
    - ``text``: the caption as the model read it (ICC's scorers: wrappers taken off, and for mini and lite
      normalized; a blank or web-junk caption as written), and ``offsets``: each term's ``(start, end)`` in
      ``text`` (``None`` where the terms are not pieces of it), so that :meth:`segments` shows the caption as it
      reads, punctuation and spacing kept;
    - ``web_junk``: for a caption scored 0.0 as web junk, what kind it is (no terms then), else ``None``.
    - ``language``: the caption's language code (``und``: undetermined, see :mod:`.languages`), or ``None``
      for a blank caption.
    """

    def __init__(
        self,
        spans: list[tuple[str, float]],
        *,
        features: list[tuple[str, float]],
        bias: float | None,
        total: float,
        score: float,
        method: str,
        model_id: str,
        text: str | None = None,
        offsets: list[tuple[int, int]] | None = None,
        web_junk: str | None = None,
    ) -> None:
        super().__init__(spans)
        self.features = features
        self.bias = bias
        self.total = total
        self.score = score
        self.method = method
        self.model_id = model_id
        self.text = text
        self.offsets = offsets
        self.web_junk = web_junk
        self.language: str | None = None

    def in_language(self, language: str | None) -> Explanation:
        """This explanation with the caption's ``language`` named (returned, so it chains)."""
        self.language = language
        return self

    def segments(self) -> list[tuple[str, float | None]]:
        """The caption cut into its terms, each with its contribution, and what lies between them (``None``):
        joined, the pieces give :attr:`text` back as it reads. Without offsets: the terms, a space between."""
        if self.text is None or self.offsets is None or len(self.offsets) != len(self):
            pieces: list[tuple[str, float | None]] = []
            for index, (term, value) in enumerate(self):
                pieces += [(" ", None), (term, value)] if index else [(term, value)]
            return pieces if pieces or self.text is None else [(self.text, None)]
        pieces, position = [], 0
        for (start, end), (_, value) in zip(self.offsets, self, strict=True):
            if start > position:
                pieces.append((self.text[position:start], None))
            pieces.append((self.text[start:end], value))
            position = max(position, end)
        if position < len(self.text):
            pieces.append((self.text[position:], None))
        return pieces

    def reasons(self, k: int = 3) -> list[tuple[str, float]]:
        """The ``k`` largest terms (words and features) by absolute contribution."""
        terms = [(f"word '{text}'", value) for text, value in self] + [(f"cue: {n}", v) for n, v in self.features]
        return sorted(terms, key=lambda term: -abs(term[1]))[:k]

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model_id,
            "language": self.language,
            "method": self.method,
            "text": self.text,
            "web_junk": self.web_junk,
            "score": self.score,
            "total": self.total,
            "bias": self.bias,
            "words": [{"text": text, "contribution": value} for text, value in self],
            "features": [{"name": name, "contribution": value} for name, value in self.features],
        }


_WORD = re.compile(r"\S+")


def occlusion_explanations(
    scorer: ConcretenessScorer, texts: list[str], method: str = "occlusion"
) -> list[Explanation]:
    """Word contributions by occlusion: score(caption) - score(caption without that word).

    All variants of all captions are scored in one ``scorer.score`` call, so they
    share the scorer's length-sorted batches. Cost: (words + 1) forward passes per
    caption. Contributions are in raw-score units and need not add up to the score.
    """
    variants: list[str] = []
    layout: list[list[re.Match]] = []  # each caption's words, as written: what the model reads and is shown
    for text in texts:
        words = list(_WORD.finditer(text))
        layout.append(words)
        variants.append(text)
        for word in words:
            variants.append((text[: word.start()].rstrip() + " " + text[word.end() :].lstrip()).strip())
    raw = scorer.score(variants, raw=True)
    explanations, offset = [], 0
    for text, words in zip(texts, layout, strict=True):
        full = float(raw[offset])
        removed = raw[offset + 1 : offset + 1 + len(words)]
        offset += 1 + len(words)
        # A caption reduced to nothing scores NaN; its one word then carries the whole score.
        terms = [
            (word.group(), full - (float(value) if np.isfinite(value) else 0.0))
            for word, value in zip(words, removed, strict=True)
        ]
        explanations.append(
            Explanation(
                terms,
                features=[],
                bias=None,
                total=full,
                score=float(np.clip(full, 0.0, 1.0)) if np.isfinite(full) else math.nan,
                method=method,
                model_id=scorer.model_id,
                text=text,
                offsets=[word.span() for word in words],
            )
        )
    return explanations
