"""Shared assertions for baseline scorers."""

import numpy as np

from modeling_icc.scoring.base import ConcretenessScorer


def assert_scores_in_order(scorer: ConcretenessScorer, texts: list[str], atol: float = 1e-6) -> np.ndarray:
    """Scores are finite, keep input order (reversed input gives reversed scores) and NaN for blanks."""
    scores = scorer.score(texts)
    assert scores.shape == (len(texts),) and scores.dtype == np.float32
    assert np.isfinite(scores).all()
    np.testing.assert_allclose(scorer.score(texts[::-1])[::-1], scores, atol=atol)
    with_blank = scorer.score([texts[1], "  ", texts[0]])
    assert np.isnan(with_blank[1])
    np.testing.assert_allclose(with_blank[[0, 2]], scores[[1, 0]], atol=atol)
    return scores


def concrete_minus_abstract(scorer: ConcretenessScorer, examples: list[dict]) -> float:
    """Mean score of the paper's concrete examples minus that of its abstract ones."""
    scores = scorer.score([example["caption"] for example in examples])
    groups = np.array([example["group"] for example in examples])
    return float(scores[groups == "concrete"].mean() - scores[groups == "abstract"].mean())
