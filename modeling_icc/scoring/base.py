"""The scorer interface every ICC model implements (neural student, lite, baselines)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable

import numpy as np

from .explanation import Explanation, occlusion_explanations
from .inputs import ErrorMode, caption_list, deduplicate, prepare_texts, scatter


class ConcretenessScorer(ABC):
    """Scores captions for visual concreteness.

    ``score(texts)`` returns one float32 per caption, in input order, in [0, 1]
    (higher = more concrete). Blank captions (nothing visible, :func:`~.inputs.has_content`) give NaN;
    ``None`` or non-strings raise ``TypeError`` unless ``errors="nan"``; so does a container that is not an
    ordered list of captions (a single string, bytes, a dict, a set). Repeated captions are scored once
    and share one score.
    """

    #: Identifier recorded next to scores (Hub id, local path or "lite").
    model_id: str = "unknown"

    def score(self, texts: Iterable[object], *, errors: ErrorMode = "raise", raw: bool = False) -> np.ndarray:
        """Concreteness of each caption, in input order.

        ``raw=True`` returns the model's unclipped output instead of the [0, 1]
        score (identical for models whose output is already bounded).
        """
        valid, mask = prepare_texts(texts, errors=errors)
        distinct, inverse = deduplicate(valid)
        values = self._score_valid(distinct)[inverse] if distinct else np.zeros(0, dtype=np.float32)
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

    @abstractmethod
    def _score_valid(self, texts: list[str]) -> np.ndarray:
        """Raw scores of non-blank captions (float32, same order)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r})"
