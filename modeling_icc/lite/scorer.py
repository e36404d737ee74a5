"""The zero-download ``"lite"`` scorer: human concreteness norms, no neural network."""

from __future__ import annotations

import numpy as np

from ..scorer import ConcretenessScorer
from .function_words import FUNCTION_WORDS
from .lexicon import Lexicon, default_lexicon
from .text import words

#: Words past this many are ignored (documented bound on work per caption).
MAX_WORDS = 256
#: Rating used when a caption has no rated content word (the 1-5 scale's midpoint).
NEUTRAL_RATING = 3.0


class LiteScorer(ConcretenessScorer):
    """Mean Brysbaert/Muraki concreteness of a caption's content words and phrases, mapped to [0, 1].

    Multiword expressions ("fire hydrant", "white shirt") are matched first,
    longest first; function words are skipped; ``(rating - 1) / 4`` maps the 1-5
    scale to [0, 1]. Deterministic and pure Python.
    """

    model_id = "lite"

    def __init__(self, lexicon: Lexicon | None = None) -> None:
        self.lexicon = lexicon or default_lexicon()
        self._ratings = self.lexicon.norms["concreteness"]

    def content_ratings(self, text: str) -> list[tuple[str, float]]:
        """The rated content entries of ``text`` with their 1-5 concreteness."""
        tokens = words(text)[:MAX_WORDS]
        return [
            (entry, self._ratings[entry])
            for start, end, entry in self.lexicon.match(tokens)
            if end - start > 1 or entry not in FUNCTION_WORDS
        ]

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        out = np.empty(len(texts), dtype=np.float32)
        for index, text in enumerate(texts):
            rated = self.content_ratings(text)
            mean = sum(value for _, value in rated) / len(rated) if rated else NEUTRAL_RATING
            out[index] = (mean - 1.0) / 4.0
        return out
