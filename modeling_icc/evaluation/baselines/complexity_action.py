"""Complexity and Action (CA), re-implemented from Radenovic et al. (2023), "Filtering,
distillation, and hard negatives for vision-language pre-training".

No reference code is public (the ICC paper re-implemented it too), so these are
our choices, made on a spaCy dependency parse:

* **object**: a NOUN or PROPN token that is not itself a ``compound`` modifier
  (in "fire hydrant" only "hydrant" is an object).
* **attribute** of an object: a child with relation ``amod``, ``compound``,
  ``nummod``, ``poss`` or ``acl``/``relcl`` (a clause describing it), or an
  adjective complement (``acomp``) of a verb whose subject is the object
  ("the car is red").
* **relation** of an object: a prepositional link to another object in either
  direction ("man *on* a horse"), or sharing a verb with another object as
  subject/object ("a man rides a horse").
* **complexity** = the number of objects with at least one attribute or relation.
* **action** = some token is a VERB (spaCy tags auxiliaries and copulas AUX).

``score`` = (min(complexity, ``max_complexity``) + action) / (``max_complexity`` + 1),
in [0, 1]; ``keep`` applies the paper's kind of rule: complexity >=
``min_complexity`` and, when ``require_action``, an action.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...scoring.base import ConcretenessScorer
from ..nlp import parse

OBJECT_TAGS = frozenset({"NOUN", "PROPN"})
ATTRIBUTE_DEPS = frozenset({"amod", "compound", "nummod", "poss", "acl", "relcl"})
ARGUMENT_DEPS = frozenset({"nsubj", "nsubjpass", "dobj", "obj", "iobj", "attr", "dative"})


@dataclass(frozen=True)
class CAResult:
    complexity: int
    action: bool


def _is_object(token) -> bool:
    return token.pos_ in OBJECT_TAGS and token.dep_ != "compound"


def _has_attribute(token) -> bool:
    if any(child.dep_ in ATTRIBUTE_DEPS for child in token.children):
        return True
    head = token.head
    return token.dep_ in ("nsubj", "nsubjpass") and any(child.dep_ == "acomp" for child in head.children)


def _prepositional_objects(token) -> list:
    return [grandchild for child in token.children if child.dep_ == "prep" for grandchild in child.children]


def _has_relation(token) -> bool:
    if any(_is_object(other) for other in _prepositional_objects(token)):
        return True
    head = token.head
    if token.dep_ == "pobj" and head.dep_ == "prep" and (_is_object(head.head) or head.head.pos_ == "VERB"):
        governor = head.head
        if _is_object(governor):
            return True
        return any(_is_object(c) and c is not token for c in governor.children if c.dep_ in ARGUMENT_DEPS)
    if token.dep_ in ARGUMENT_DEPS and head is not token:
        siblings = [c for c in head.children if c is not token and c.dep_ in ARGUMENT_DEPS]
        siblings += [o for o in _prepositional_objects(head) if o is not token]
        return any(_is_object(other) for other in siblings)
    return False


def analyze(doc) -> CAResult:
    """Complexity and action of one parsed caption."""
    complexity = sum(1 for token in doc if _is_object(token) and (_has_attribute(token) or _has_relation(token)))
    action = any(token.pos_ == "VERB" for token in doc)
    return CAResult(complexity=complexity, action=action)


class ComplexityActionScorer(ConcretenessScorer):
    """CA filter score from a dependency parse (see the module docstring for the rules)."""

    model_id = "complexity-action"

    def __init__(self, *, max_complexity: int = 3, min_complexity: int = 1, require_action: bool = True) -> None:
        if max_complexity < 1 or min_complexity < 0:
            raise ValueError("max_complexity must be >= 1 and min_complexity >= 0")
        self.max_complexity = max_complexity
        self.min_complexity = min_complexity
        self.require_action = require_action

    def analyze(self, texts: list[str]) -> list[CAResult]:
        return [analyze(doc) for doc in parse(texts)]

    def keep(self, texts: list[str]) -> np.ndarray:
        """The CA keep rule per caption: enough complexity and (optionally) an action."""
        return np.array(
            [
                r.complexity >= self.min_complexity and (r.action or not self.require_action)
                for r in self.analyze(list(texts))
            ],
            dtype=bool,
        )

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        results = self.analyze(texts)
        capped = np.array([min(r.complexity, self.max_complexity) + r.action for r in results], dtype=np.float32)
        return capped / (self.max_complexity + 1)
