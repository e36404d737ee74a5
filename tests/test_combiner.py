"""ScoreCombiner: logistic combination of the standardized teacher scores, fitted on human labels."""

import numpy as np
import pytest

from modeling_icc.training.distillation import LengthStandardizer, ScoreCombiner


def _synthetic(n=20000, a=4.0, b=2.0, c=-3.0, seed=0):
    rng = np.random.default_rng(seed)
    vba, sba = rng.uniform(size=n), rng.uniform(size=n)
    labels = rng.uniform(size=n) < 1 / (1 + np.exp(-(a * vba + b * sba + c)))
    return vba, sba, labels.astype(float)


def test_recovers_known_coefficients():
    vba, sba, labels = _synthetic()
    combiner = ScoreCombiner(threshold=1.0).fit(vba, sba, labels)
    assert combiner.vba_weight == pytest.approx(4.0, abs=0.3)
    assert combiner.sba_weight == pytest.approx(2.0, abs=0.3)
    assert combiner.intercept == pytest.approx(-3.0, abs=0.3)
    expected = 1 / (1 + np.exp(-(combiner.vba_weight * 0.7 + combiner.sba_weight * 0.2 + combiner.intercept)))
    assert combiner.combine(np.array([0.7]), np.array([0.2]))[0] == pytest.approx(expected)
    fit = combiner.fit_report
    assert fit.cv_folds == 5 and 0.5 < fit.cv_roc_auc < 1.0 and fit.n == 20000


def test_default_threshold_is_the_median_annotation():
    rng = np.random.default_rng(1)
    annotations = rng.integers(0, 4, size=400).astype(float)
    vba = annotations / 3 + rng.normal(0, 0.3, size=400)
    combiner = ScoreCombiner().fit(vba, rng.uniform(size=400), annotations)
    assert combiner.threshold == np.median(annotations)
    assert combiner.fit_report.n_positive == int((annotations >= np.median(annotations)).sum())
    assert combiner.vba_weight > 0


def test_save_and_load_round_trip(tmp_path):
    vba, sba, labels = _synthetic(n=2000)
    combiner = ScoreCombiner(threshold=1.0).fit(vba, sba, labels)
    combiner.save(tmp_path / "combiner.json")
    loaded = ScoreCombiner.load(tmp_path / "combiner.json")
    np.testing.assert_array_equal(loaded.combine(vba, sba), combiner.combine(vba, sba))
    assert loaded.fit_report == combiner.fit_report


def test_degenerate_inputs_are_refused():
    vba, sba = np.linspace(0, 1, 10), np.linspace(1, 0, 10)
    with pytest.raises(ValueError, match="one side of the threshold"):
        ScoreCombiner().fit(vba, sba, np.full(10, 3.0))
    with pytest.raises(ValueError, match="at least 2 examples"):
        ScoreCombiner(threshold=1).fit(vba, sba, np.r_[1.0, np.zeros(9)])
    with pytest.raises(ValueError, match="NaN"):
        ScoreCombiner().fit(np.r_[np.nan, vba[1:]], sba, np.arange(10.0))
    with pytest.raises(ValueError, match="equal length"):
        ScoreCombiner().fit(vba, sba[:5], np.arange(10.0))
    with pytest.raises(ValueError, match="not fitted"):
        ScoreCombiner().combine(vba, sba)


def test_a_saved_standardizer_is_not_read_as_a_combiner_nor_the_reverse(tmp_path):
    vba, sba, labels = _synthetic(n=400)
    ScoreCombiner(threshold=1.0).fit(vba, sba, labels).save(tmp_path / "combiner.json")
    rng = np.random.default_rng(0)
    LengthStandardizer(min_bucket_size=10).fit(rng.uniform(0.1, 0.9, 100), rng.integers(3, 8, 100)).save(
        tmp_path / "standardizer.json"
    )
    with pytest.raises(ValueError, match=r"not a saved ScoreCombiner \(format='icc-length-standardizer/1'"):
        ScoreCombiner.load(tmp_path / "standardizer.json")
    with pytest.raises(ValueError, match=r"not a saved LengthStandardizer \(format='icc-score-combiner/1'"):
        LengthStandardizer.load(tmp_path / "combiner.json")
