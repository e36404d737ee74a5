"""Pooling weighted by token position for mini's two means, and the cross-validation that chose its decay.

A keyword tail or a run of hashtags after the description moves mini's mean embedding and mean word
concreteness, and so its score. Weighting the token at position t of a window by ``exp(-t / decay)``
makes the first tokens count more and a tail less, but also the keywords or hashtags in front of a
description that comes late. This module measures the trade with the fit's own cross-validation
(:func:`~.fit_mini.cross_validate`: 10 folds x 5 seeds on the 203 fitting captions, never the frozen
100), for every decay of :data:`POSITION_DECAY_CANDIDATES`, with the noisy copies of every type in
training (as shipped) and without the description-late types (:data:`LEAD_TYPES`). The norm entries
scored as captions are pooled the same way; the word head is unchanged (it reads token states). The
choice is ``FitSettings.position_decay``, set by hand (a refit follows). It was chosen before the fit had
its consistency term, and is cross-validated without it (``consistency_weight=0``).

The rule, written before the first run: the objective is the mean over the clean captions and every
noise type of the out-of-fold Spearman with the labels; eligible are the candidates whose clean Spearman
is at most :data:`CLEAN_TOLERANCE` below the plain means'; within :data:`TIE` of the best, the larger
decay wins (plain means first), then the fit without the description-late copies.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from ..utils.caption_noise import NOISE_TYPES
from .fit_mini import Encoded, Features, FitSettings, NoisyPairs, cross_validate, encode

#: Decays tried (tokens; None: plain means, mini's pooling before this CV), fixed before any was evaluated.
POSITION_DECAY_CANDIDATES: tuple[float | None, ...] = (None, 64.0, 32.0, 16.0, 8.0)
#: The noise types whose description comes last: what position weighting would penalize.
LEAD_TYPES = ("seo_lead", "social_lead")
#: A candidate is eligible if its clean CV Spearman is at most this much below the plain means'.
CLEAN_TOLERANCE = 0.01
#: Eligible candidates within this much of the best objective count as tied (see the module docstring).
TIE = 0.001


def _with_norm_rows(norm: Encoded, rows: np.ndarray, pooled: Encoded) -> Encoded:
    """``norm`` with the entries scored as captions (``rows``) replaced by their features in ``pooled``."""
    embedding, word_means = norm.embedding.copy(), norm.word_means.copy()
    embedding[rows], word_means[rows] = pooled.embedding, pooled.word_means
    return Encoded(embedding, norm.span_vectors, norm.span_targets, word_means, norm.windows)


def position_pooled(features: Features, settings: FitSettings, decay: float | None) -> Features:
    """``features`` with the captions, their noisy copies and the norm entries scored as captions pooled
    with ``decay`` (``features`` itself when that is the fit's decay)."""
    if decay == settings.position_decay:
        return features
    if settings.consistency_weight > 0:
        raise ValueError(
            "the consistency captions are pooled with the fit's decay only: cross-validate the position "
            "pooling with consistency_weight=0, as it was chosen"
        )
    model, tokenizer = features.model, features.tokenizer
    other = copy.copy(features)
    other.dev = NoisyPairs.encode(model, tokenizer, features.captions, replace(settings, position_decay=decay))
    entries = [features.norm_keys[i] for i in features.caption_rows]
    pooled = encode(model, tokenizer, entries, position_decay=decay)
    other.norm_encoded = _with_norm_rows(features.norm_encoded, features.caption_rows, pooled)
    return other


def choose(candidates: Sequence[dict]) -> dict:
    """The rule of the module docstring over rows with ``position_decay``, ``lead_copies_in_training``,
    ``clean`` and ``objective``; the plain means are the row with decay None and every copy in training."""
    plain = next(r for r in candidates if r["position_decay"] is None and r["lead_copies_in_training"])
    eligible = [r for r in candidates if r["clean"] >= plain["clean"] - CLEAN_TOLERANCE]
    best = max(r["objective"] for r in eligible)
    tied = [r for r in eligible if r["objective"] >= best - TIE]
    return max(
        tied,
        key=lambda r: (
            math.inf if r["position_decay"] is None else r["position_decay"],
            not r["lead_copies_in_training"],
        ),
    )


def cross_validate_position_pooling(
    features: Features,
    settings: FitSettings,
    word_coef: np.ndarray,
    word_bias: float,
    decays: Sequence[float | None] = POSITION_DECAY_CANDIDATES,
    log: Callable[[str], None] = print,
) -> dict:
    """Every decay, with and without the description-late copies in training; the table and the choice."""
    without_lead = tuple(kind for kind in NOISE_TYPES if kind not in LEAD_TYPES)
    candidates = []
    for decay in decays:
        pooled = position_pooled(features, settings, decay)
        for lead_in_training in (True, False):
            train_kinds = NOISE_TYPES if lead_in_training else without_lead
            report = cross_validate(pooled, settings, word_coef, word_bias, train_kinds=train_kinds)["report"]
            noisy = report["noisy_copies"]
            with_label = {kind: noisy[kind]["spearman_with_label"] for kind in NOISE_TYPES}
            row = {
                "position_decay": decay,
                "lead_copies_in_training": lead_in_training,
                "clean": report["spearman"],
                "objective": float(np.mean([report["spearman"], *with_label.values()])),
                "lead_with_label_mean": float(np.mean([with_label[kind] for kind in LEAD_TYPES])),
                "other_with_label_mean": float(np.mean([with_label[kind] for kind in without_lead])),
                "spearman_with_label": with_label,
                "spearman_with_clean": {kind: noisy[kind]["spearman_with_clean"] for kind in NOISE_TYPES},
            }
            candidates.append(row)
            log(
                f"decay {decay}, lead copies {'in' if lead_in_training else 'out'}: clean {row['clean']:.4f}, "
                f"objective {row['objective']:.4f}, lead types {row['lead_with_label_mean']:.4f}"
            )
    chosen = choose(candidates)
    return {
        "candidates": candidates,
        "rule": (
            "objective: the mean over the clean captions and every noise type of the out-of-fold Spearman with "
            f"the labels; eligible: clean Spearman at most {CLEAN_TOLERANCE} below the plain means'; within "
            f"{TIE} of the best, the larger decay (plain means first), then the fit without the description-late "
            "copies"
        ),
        "chosen": {key: chosen[key] for key in ("position_decay", "lead_copies_in_training")},
    }
