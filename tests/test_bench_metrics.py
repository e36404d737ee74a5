"""Correlation metrics against scipy, and the bootstrap interval's guarantees."""

import numpy as np
import pytest
from scipy import stats

from modeling_icc.evaluation.bootstrap import Bootstrap
from modeling_icc.evaluation.metrics import complete_pairs, correlate, kendall, pearson, spearman


@pytest.fixture(scope="module")
def ordinal_data():
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 4, size=200).astype(float)  # 0-3 with many ties, like the human labels
    scores = labels * 0.2 + rng.normal(0, 0.3, size=200)
    return scores, labels


def test_metrics_match_scipy_on_tied_ordinal_data(ordinal_data):
    scores, labels = ordinal_data
    assert pearson(scores, labels) == pytest.approx(stats.pearsonr(scores, labels).statistic, abs=1e-12)
    assert spearman(scores, labels) == pytest.approx(stats.spearmanr(scores, labels).statistic, abs=1e-12)
    assert kendall(scores, labels) == pytest.approx(stats.kendalltau(scores, labels).statistic, abs=1e-12)


def test_metrics_on_known_values():
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    assert pearson(x, 2 * x + 1) == pytest.approx(1.0)
    assert spearman(x, x**3) == pytest.approx(1.0)
    assert kendall(x, -x) == pytest.approx(-1.0)
    assert kendall(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0])) == pytest.approx(1 / 3)
    assert np.isnan(pearson(x, np.ones(5))) and np.isnan(kendall(x, np.ones(5)))


def test_nan_pairs_are_dropped_and_counted():
    scores = np.array([0.1, np.nan, 0.3, 0.5, 0.7])
    labels = np.array([0.0, 1.0, np.nan, 2.0, 3.0])
    x, y = complete_pairs(scores, labels)
    np.testing.assert_array_equal(x, [0.1, 0.5, 0.7])
    np.testing.assert_array_equal(y, [0.0, 2.0, 3.0])
    report = correlate(scores, labels, Bootstrap(n_bootstrap=50))
    assert (report.n, report.n_missing) == (3, 2)


def test_bootstrap_interval_contains_estimate_and_is_seeded(ordinal_data):
    scores, labels = ordinal_data
    first = correlate(scores, labels, Bootstrap(n_bootstrap=300, seed=3))
    for name in ("pearson", "spearman", "kendall"):
        estimate = getattr(first, name)
        assert estimate.low < estimate.value < estimate.high
        assert estimate.high - estimate.low < 0.4
    assert correlate(scores, labels, Bootstrap(n_bootstrap=300, seed=3)) == first
    assert correlate(scores, labels, Bootstrap(n_bootstrap=300, seed=4)).pearson.low != first.pearson.low


def test_wider_confidence_gives_wider_interval(ordinal_data):
    scores, labels = ordinal_data
    narrow = correlate(scores, labels, Bootstrap(n_bootstrap=300, confidence=0.5)).spearman
    wide = correlate(scores, labels, Bootstrap(n_bootstrap=300, confidence=0.99)).spearman
    assert wide.low < narrow.low and wide.high > narrow.high


def test_mismatched_lengths_raise():
    with pytest.raises(ValueError, match="differ in length"):
        correlate(np.zeros(3), np.zeros(4))
