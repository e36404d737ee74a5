"""LengthStandardizer: per-length logit-normal standardization, pooling, persistence, validation."""

import numpy as np
import pytest

from modeling_icc.training.distillation import LengthStandardizer


def _logit(p):
    return np.log(p) - np.log1p(-p)


@pytest.fixture
def data():
    """Similarities whose level and spread depend on caption length, as real teacher scores do."""
    rng = np.random.default_rng(0)
    n_words = rng.integers(3, 15, size=3000)
    logits = -0.2 * n_words + rng.normal(0, 0.3 + 0.05 * n_words)
    return 1 / (1 + np.exp(-logits)), n_words


def test_each_bucket_follows_logit_normal_half_one(data):
    p, n_words = data
    standardizer = LengthStandardizer(min_bucket_size=50)
    scores = standardizer.fit_transform(p, n_words)
    assert len(standardizer.buckets) == 12  # every length has ~250 captions: one bucket each
    for bucket in standardizer.buckets:
        z = _logit(scores[np.isin(n_words, bucket.lengths)])
        assert z.mean() == pytest.approx(0.5, abs=1e-6)
        assert z.std() == pytest.approx(1.0, abs=1e-6)
    assert abs(np.corrcoef(scores, n_words)[0, 1]) < 0.05  # length no longer predicts the score
    assert np.corrcoef(p, n_words)[0, 1] < -0.5


def test_order_within_a_bucket_is_preserved(data):
    p, n_words = data
    scores = LengthStandardizer().fit_transform(p, n_words)
    for length in (3, 9):
        rows = n_words == length
        assert (np.argsort(p[rows], kind="stable") == np.argsort(scores[rows], kind="stable")).all()


def test_save_and_load_give_identical_transforms(data, tmp_path):
    p, n_words = data
    standardizer = LengthStandardizer(epsilon=1e-3, min_bucket_size=400).fit(p, n_words)
    standardizer.save(tmp_path / "standardizer.json")
    loaded = LengthStandardizer.load(tmp_path / "standardizer.json")
    probe_lengths = np.array([1, 3, 8, 14, 40])
    probe = np.array([0.0, 0.2, 0.5, 0.9, 1.0])
    np.testing.assert_array_equal(loaded.transform(probe, probe_lengths), standardizer.transform(probe, probe_lengths))
    assert loaded.epsilon == 1e-3 and loaded.min_bucket_size == 400


def test_sparse_lengths_are_pooled_with_neighbours():
    n_words = np.array([1] * 3 + [2] * 4 + [3] * 60 + [4] * 10 + [5] * 45 + [30] * 2)
    p = np.linspace(0.05, 0.95, len(n_words))
    standardizer = LengthStandardizer(min_bucket_size=50).fit(p, n_words)
    assert [b.lengths for b in standardizer.buckets] == [[1, 2, 3], [4, 5, 30]]
    assert [b.count for b in standardizer.buckets] == [67, 57]
    assert all(b.count >= 50 for b in standardizer.buckets)


def test_unseen_lengths_use_the_nearest_fitted_length():
    n_words = np.array([2] * 60 + [10] * 60)
    p = np.concatenate([np.linspace(0.1, 0.5, 60), np.linspace(0.5, 0.9, 60)])
    standardizer = LengthStandardizer(min_bucket_size=50).fit(p, n_words)
    np.testing.assert_array_equal(standardizer.bucket_index(np.array([0, 2, 5, 6, 7, 10, 99])), [0, 0, 0, 0, 1, 1, 1])
    # a length-99 caption is standardized exactly like a length-10 one
    assert standardizer.transform(np.array([0.7]), np.array([99])) == standardizer.transform(
        np.array([0.7]), np.array([10])
    )


def test_extremes_and_constant_buckets_are_finite():
    n_words = np.array([4] * 60)
    standardizer = LengthStandardizer(min_bucket_size=50)
    scores = standardizer.fit_transform(np.ones(60), n_words)  # every similarity exactly 1
    np.testing.assert_allclose(scores, 1 / (1 + np.exp(-0.5)))
    p = np.r_[0.0, 1.0, np.linspace(0.2, 0.8, 58)]
    scores = standardizer.fit_transform(p, n_words)
    assert np.isfinite(scores).all() and scores[0] < scores[2] < scores[1]


@pytest.mark.parametrize(
    ("p", "n_words", "message"),
    [
        ([0.5, np.nan], [3, 4], "NaN"),
        ([0.5, 1.2], [3, 4], r"\[0, 1\]"),
        ([0.5, -0.1], [3, 4], r"\[0, 1\]"),
        ([0.5, 0.6], [3.5, 4], "integers"),
        ([0.5, 0.6], [3, -1], "integers"),
        ([0.5, 0.6], [3], "equal length"),
    ],
)
def test_bad_inputs_are_rejected_with_a_clear_error(p, n_words, message):
    standardizer = LengthStandardizer(min_bucket_size=50).fit(np.full(60, 0.5), np.full(60, 3))
    with pytest.raises(ValueError, match=message):
        standardizer.transform(np.array(p), np.array(n_words))


def test_unfitted_and_too_small_fits_are_refused():
    with pytest.raises(ValueError, match="not fitted"):
        LengthStandardizer().transform(np.array([0.5]), np.array([3]))
    with pytest.raises(ValueError, match="at least min_bucket_size"):
        LengthStandardizer(min_bucket_size=50).fit(np.full(10, 0.5), np.full(10, 3))
