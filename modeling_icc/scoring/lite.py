"""The zero-download ``"lite"`` scorer: human word norms and caption-form cues, no neural network."""

from __future__ import annotations

import math

import numpy as np

from ..models.lite.features import FEATURE_NAMES, FEATURES, MAX_WORDS, analyze, caption_features, text_read
from ..models.lite.lexicon import Lexicon, default_lexicon
from ..models.lite.modeling_lite import LiteModel, default_lite_model
from ..utils.caption_text import replace_surrogates
from ..utils.words import WORD_PATTERN
from .base import ConcretenessScorer
from .explanation import Explanation
from .inputs import caption_list
from .languages import ENGLISH_ONLY, caption_language

_DESCRIPTIONS = {feature.name: feature.description for feature in FEATURES}
#: Features explained relative to their mean on the fitting data (so a typical value contributes ~0);
#: the others (word counts of rare cues, 0/1 flags) are explained from zero and shown only when present.
CENTERED_FEATURES = frozenset({"concreteness", "visual", "coverage", "capitalized", "non_ascii_letters", "log_length"})


class LiteScorer(ConcretenessScorer):
    """A calibrated linear model over :data:`~modeling_icc.models.lite.features.FEATURES`.

    Deterministic, pure Python per caption (about 20k+ captions/s per core), shipped
    inside the package. ``score`` is ``sigmoid(logit)`` in [0, 1]; 0.5 separates the
    abstract and concrete halves of the human annotation it was fitted on.
    Captions are normalized for web noise first (:func:`~modeling_icc.utils.caption_text.normalize_caption`,
    as for mini); only the first 65,536 characters and, of them, the first 256 words of a caption are read.
    """

    model_id = "lite"
    zeroes_web_junk = True
    languages = ENGLISH_ONLY

    def __init__(self, lexicon: Lexicon | None = None, model: LiteModel | None = None) -> None:
        self.lexicon = lexicon or default_lexicon()
        self.model = model or default_lite_model()
        self._coefficients = self.model.coefficients
        self._intercept = self.model.intercept

    def features(self, texts: list[str]) -> np.ndarray:
        """Raw feature values of the normalized captions, one row per caption, columns in ``FEATURE_NAMES`` order."""
        lexicon = self.lexicon
        return np.array([caption_features(text, lexicon) for text in texts], dtype=np.float64).reshape(
            len(texts), len(FEATURE_NAMES)
        )

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        logits = self.features(texts) @ self._coefficients + self._intercept
        return (1.0 / (1.0 + np.exp(-logits))).astype(np.float32)

    def explain(self, text: str) -> Explanation:
        """Per-word/phrase and per-feature contributions to the logit.

        Word-level features (concreteness, visual strength, coverage, scene words,
        pronouns, modal verbs) are split over the words that carry them; the other
        features are reported by name. ``sum(words) + sum(features) + bias ==
        total`` (the logit) and ``score == sigmoid(total)``. The words are those of the normalized caption.
        """
        if not isinstance(text, str):
            raise TypeError(f"explain() takes a caption string, got {type(text).__name__}")
        unread = self.blank_or_junk_explanation(text, "lite-linear")
        if unread is not None:
            return unread
        caption, text = text, text_read(self.text_read(replace_surrogates(text)))
        values, shares = analyze(text, self.lexicon, detail=True)
        spans: dict[tuple[int, int], float] = {}
        feature_terms: list[tuple[str, float]] = []
        bias = float(self._intercept)
        for name, value, coefficient, mean in zip(
            FEATURE_NAMES, values, self._coefficients, self.model.means, strict=True
        ):
            offset = mean if name in CENTERED_FEATURES else 0.0
            bias += float(coefficient * offset)
            denominator = shares.denominators.get(name, 0)
            if denominator:
                for span, share in shares.shares[name]:
                    spans[span] = spans.get(span, 0.0) + float(coefficient * (share - offset) / denominator)
            elif name in CENTERED_FEATURES or value:
                missing = "no rated words" if shares.words else "no words"
                label = f"{name} ({missing})" if name in shares.denominators else name
                feature_terms.append((label, float(coefficient * (value - offset))))
        total = bias + sum(spans.values()) + sum(term for _, term in feature_terms)
        terms, offsets = _surface_spans(text, shares.words, spans)
        return Explanation(
            terms,
            features=feature_terms,
            bias=bias,
            total=total,
            score=1.0 / (1.0 + math.exp(-total)),
            method="lite-linear",
            model_id=self.model_id,
            text=text,
            offsets=offsets,
        ).in_language(caption_language(caption))

    def explain_many(self, texts: list[str]) -> list[Explanation]:
        return [self.explain(text) for text in caption_list(texts)]

    @staticmethod
    def describe_feature(name: str) -> str:
        return _DESCRIPTIONS.get(name.split(" (")[0], name)


def _surface_spans(
    text: str, words: list[str], spans: dict[tuple[int, int], float]
) -> tuple[list[tuple[str, float]], list[tuple[int, int]] | None]:
    """Map word-index spans back to the caption's own text, in order (words without a term get 0), with each
    term's ``(start, end)`` in ``text`` (``None`` when lower-casing moved characters)."""
    lowered = text.lower().replace("\u2019", "'")
    matches = list(WORD_PATTERN.finditer(lowered))[:MAX_WORDS]
    same_layout = len(lowered) == len(text)

    def surface(start: int, end: int) -> str:
        if same_layout:
            return text[matches[start].start() : matches[end - 1].end()]
        return " ".join(words[start:end])

    covered: dict[int, tuple[int, int]] = {}
    for start, end in spans:
        if end - start > 1:
            for index in range(start, end):
                covered[index] = (start, end)
    out: list[tuple[str, float]] = []
    offsets: list[tuple[int, int]] = []
    index = 0
    while index < len(words):
        phrase = covered.get(index)
        if phrase is not None and phrase[0] == index:
            value = spans[phrase] + sum(spans.get((i, i + 1), 0.0) for i in range(*phrase))
            out.append((surface(*phrase), value))
            offsets.append((matches[phrase[0]].start(), matches[phrase[1] - 1].end()) if same_layout else (0, 0))
            index = phrase[1]
            continue
        out.append((surface(index, index + 1), spans.get((index, index + 1), 0.0)))
        offsets.append((matches[index].start(), matches[index].end()) if same_layout else (0, 0))
        index += 1
    return out, offsets if same_layout else None
