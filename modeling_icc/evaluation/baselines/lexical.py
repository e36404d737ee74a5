"""Lexical norm average: the classic text-only concreteness baseline."""

from __future__ import annotations

import numpy as np

from ...models.lite.lexicon import Lexicon, default_lexicon
from ...scoring.base import ConcretenessScorer
from ...utils.function_words import FUNCTION_WORDS
from ...utils.words import words

#: Rating given to a caption without any rated content word (midpoint of the 1-5 scale).
NEUTRAL_RATING = 3.0


class LexicalNormScorer(ConcretenessScorer):
    """Mean human concreteness rating of a caption's content words, mapped from 1-5 to [0, 1].

    Ratings are the shipped lexicon's: Brysbaert et al. (2014) for every word and
    two-word compound they rated, Muraki et al. (2023) for other multiword
    expressions, Glasgow only for the few words neither rated. Multiword
    expressions are matched first, longest first ("fire hydrant" is one entry);
    function words are dropped; a caption with no rated content word gets the
    scale's midpoint. A fixed reference point: unlike the ``lite`` model, it
    will not change as that model is improved.
    """

    model_id = "lexical"

    def __init__(self, lexicon: Lexicon | None = None) -> None:
        self.lexicon = lexicon or default_lexicon()
        self._ratings = self.lexicon.norms["concreteness"]

    def _rating(self, text: str) -> float:
        rated = [
            self._ratings[entry]
            for start, end, entry in self.lexicon.match(words(text))
            if end - start > 1 or entry not in FUNCTION_WORDS
        ]
        return sum(rated) / len(rated) if rated else NEUTRAL_RATING

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        return (np.array([self._rating(text) for text in texts], dtype=np.float32) - 1.0) / 4.0
