"""Conceptual Captions text heuristics (Sharma et al., 2018), as a 0/1 keep score and a soft score.

The original pipeline used Google Cloud Natural Language annotations and
unpublished thresholds; this re-implementation uses spaCy's small English
pipeline and the thresholds in :class:`CC3MRules` (all configurable):

1. boiler-plate is cropped first: known prefixes/suffixes such as "stock photo"
   or "click to enlarge picture" are removed, and captions that begin or end with
   patterns such as "embedded image permalink" or "profile photo" are dropped;
2. the caption must contain a determiner, a noun and a preposition (adposition);
3. nouns may make up at most ``max_noun_ratio`` of the word tokens;
4. no word may take more than ``max_repetition_ratio`` of the word tokens;
5. the first word must be capitalized, and at most ``max_capitalized_ratio`` of
   the words may be capitalized;
6. at most ``max_oov_ratio`` of the words may fall outside the English vocabulary
   (every single-word entry of the shipped norm lexicon, ~38k words, matched by
   lower-case form or spaCy lemma; numbers and punctuation are not words here);
7. sentiment polarity, the net count of strongly polar words from
   :data:`POLAR_WORDS` over the word count, must be within ``max_polarity``.

The keep score is 1 when every rule passes; the soft score is the fraction of
the rules that pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ...models.lite.lexicon import default_lexicon
from ...scoring.base import ConcretenessScorer
from ..nlp import parse

#: Cropped when they open or close a caption (case-insensitive, with trailing/leading punctuation).
BOILERPLATE = (
    "click to enlarge picture",
    "click to enlarge",
    "stock photo",
    "stock image",
    "stock photography",
    "royalty free",
    "image may contain",
    "photo by",
    "picture of",
)
#: A caption that begins or ends with one of these is dropped.
DROP_PATTERNS = ("embedded image permalink", "profile photo", "profile picture", "view image", "see more")
#: Small polarity lexicon of our own: strongly evaluative words (+1 positive, -1 negative).
#: Mild descriptive words that captions use for what is seen ("beautiful", "old") are left out.
POLAR_WORDS = {
    **dict.fromkeys(
        "amazing awesome best brilliant excellent fabulous fantastic glorious greatest incredible "
        "lovely magnificent marvelous outstanding perfect spectacular stunning superb terrific "
        "wonderful love loved loving adorable delightful breathtaking".split(),
        1,
    ),
    **dict.fromkeys(
        "awful bad disgusting dreadful hate hated hideous horrible horrific nasty pathetic sad "
        "stupid terrible tragic ugly worst worse evil miserable disaster disastrous".split(),
        -1,
    ),
}
RULES = ("boilerplate", "syntax", "noun_ratio", "repetition", "capitalization", "vocabulary", "sentiment")


@dataclass(frozen=True)
class CC3MRules:
    """Thresholds of the heuristics (see the module docstring)."""

    max_noun_ratio: float = 0.6
    max_repetition_ratio: float = 0.4
    max_capitalized_ratio: float = 0.5
    max_oov_ratio: float = 0.0
    max_polarity: float = 0.2
    boilerplate: tuple[str, ...] = BOILERPLATE
    drop_patterns: tuple[str, ...] = DROP_PATTERNS
    polar_words: dict[str, int] = field(default_factory=lambda: dict(POLAR_WORDS))


@dataclass(frozen=True)
class CC3MVerdict:
    """The cropped caption and which rules it passes."""

    text: str
    passed: dict[str, bool]

    @property
    def keep(self) -> bool:
        return all(self.passed.values())

    @property
    def soft_score(self) -> float:
        return sum(self.passed.values()) / len(self.passed)


def _affix_pattern(phrases: tuple[str, ...]) -> re.Pattern:
    alternatives = "|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True))
    return re.compile(rf"^\W*(?:{alternatives})\b[\W_]*|[\W_]*\b(?:{alternatives})\W*$", re.IGNORECASE)


class CC3MHeuristicScorer(ConcretenessScorer):
    """Conceptual Captions' text filters; ``binary=True`` scores 0/1 (keep), else the fraction of rules passed."""

    def __init__(self, rules: CC3MRules | None = None, *, binary: bool = False) -> None:
        self.rules = rules or CC3MRules()
        self.binary = binary
        self.model_id = "cc3m-keep" if binary else "cc3m-soft"
        self._crop = _affix_pattern(self.rules.boilerplate)
        self._drop = _affix_pattern(self.rules.drop_patterns)

    @cached_property
    def vocabulary(self) -> frozenset[str]:
        """Single-word entries of the shipped norm lexicon (every norm set, every word it rates)."""
        entries = set()
        for ratings in default_lexicon().norms.values():
            entries.update(entry for entry in ratings if " " not in entry)
        return frozenset(entries)

    def crop(self, text: str) -> tuple[str, bool]:
        """``(cropped_text, dropped)``: boiler-plate affixes removed; ``dropped`` for drop patterns."""
        dropped = bool(self._drop.search(text))
        previous = None
        while previous != text:
            previous, text = text, self._crop.sub("", text).strip()
        return text, dropped

    def check(self, texts: list[str]) -> list[CC3MVerdict]:
        cropped = [self.crop(text) for text in texts]
        docs = parse([text or "." for text, _ in cropped])
        return [self._verdict(text, dropped, doc) for (text, dropped), doc in zip(cropped, docs, strict=True)]

    def _verdict(self, text: str, dropped: bool, doc) -> CC3MVerdict:
        rules = self.rules
        words = [t for t in doc if t.is_alpha]
        n = max(len(words), 1)
        tags = {t.pos_ for t in doc}
        lowered = [t.lower_ for t in words]
        counts = {word: lowered.count(word) for word in set(lowered)}
        capitalized = sum(1 for t in words if t.text[0].isupper())
        oov = sum(1 for t in words if t.lower_ not in self.vocabulary and t.lemma_.lower() not in self.vocabulary)
        polarity = sum(rules.polar_words.get(word, 0) for word in lowered) / n
        passed = {
            "boilerplate": bool(text) and not dropped,
            "syntax": "DET" in tags and ("NOUN" in tags or "PROPN" in tags) and "ADP" in tags,
            "noun_ratio": sum(1 for t in words if t.pos_ in ("NOUN", "PROPN")) / n <= rules.max_noun_ratio,
            "repetition": bool(words) and max(counts.values()) / n <= rules.max_repetition_ratio,
            "capitalization": bool(words)
            and words[0].text[0].isupper()
            and capitalized / n <= rules.max_capitalized_ratio,
            "vocabulary": bool(words) and oov / n <= rules.max_oov_ratio,
            "sentiment": abs(polarity) <= rules.max_polarity,
        }
        return CC3MVerdict(text=text, passed=passed)

    def keep(self, texts: list[str]) -> np.ndarray:
        return np.array([verdict.keep for verdict in self.check(list(texts))], dtype=bool)

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        verdicts = self.check(texts)
        if self.binary:
            return np.array([verdict.keep for verdict in verdicts], dtype=np.float32)
        return np.array([verdict.soft_score for verdict in verdicts], dtype=np.float32)
