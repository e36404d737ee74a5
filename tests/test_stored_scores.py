"""A stored ``icc_score`` column stands for a named model only when it records that model (issue 25, item 5)."""

import datasets
import numpy as np
import pytest

from modeling_icc import LiteScorer, add_icc_scores, filter_by_icc, load_scorer
from modeling_icc.curation.selection import KeepRule, keep_mask
from modeling_icc.utils.errors import UserInputError
from modeling_icc.utils.provenance import synthetic_captions

CAPTIONS = [*synthetic_captions(40, seed=3), "!!!", "😀", "...", "an idea about freedom", "a dog on a red sofa"]


@pytest.fixture(scope="module")
def mini_scores() -> np.ndarray:
    return load_scorer("mini", dtype="float32").score(CAPTIONS)


def _threshold_where_models_disagree(mini: np.ndarray) -> float:
    lite = LiteScorer().score(CAPTIONS)
    for threshold in np.linspace(0.05, 0.95, 19):
        if (keep_mask(lite, KeepRule(threshold=threshold)) != keep_mask(mini, KeepRule(threshold=threshold))).any():
            return float(threshold)
    raise AssertionError("lite and mini agree at every threshold on these captions")


@pytest.mark.parametrize("streaming", [False, True])
def test_a_named_model_rescores_what_another_model_stored(mini_scores, streaming):
    threshold = _threshold_where_models_disagree(mini_scores)
    dataset = datasets.Dataset.from_dict({"caption": CAPTIONS, "id": list(range(len(CAPTIONS)))})
    if streaming:
        dataset = dataset.to_iterable_dataset()
    by_lite = add_icc_scores(dataset, model="lite")
    kept = filter_by_icc(by_lite, threshold=threshold, model="mini", dtype="float32")
    rows = list(kept)
    expected = np.flatnonzero(keep_mask(mini_scores, KeepRule(threshold=threshold)))
    assert [row["id"] for row in rows] == expected.tolist()
    np.testing.assert_allclose([row["icc_score"] for row in rows], mini_scores[expected], atol=1e-6)
    assert {row["icc_model"] for row in rows} == {"mini"}


def test_stored_scores_are_used_when_no_model_or_the_same_model_is_named():
    stored = datasets.Dataset.from_dict(
        {"caption": ["an idea", "a dog", "freedom"], "icc_score": [0.9, 0.1, 0.8], "icc_model": ["lite"] * 3}
    )
    assert filter_by_icc(stored, threshold=0.5)["caption"] == ["an idea", "freedom"]
    assert filter_by_icc(stored, threshold=0.5, model="lite")["caption"] == ["an idea", "freedom"]
    assert filter_by_icc(stored, threshold=0.5, model=LiteScorer())["caption"] == ["an idea", "freedom"]
    rescored = filter_by_icc(stored, threshold=0.5, model="lite", score_column="icc_score_other")
    lite = LiteScorer().score(stored["caption"])  # another score column: scored by lite
    assert rescored["caption"] == [c for c, s in zip(stored["caption"], lite, strict=True) if s >= 0.5]


def test_stored_scores_without_a_recorded_model_are_rescored_for_a_named_model():
    own = datasets.Dataset.from_dict({"caption": ["an idea", "a dog"], "icc_score": [0.9, 0.1]})
    kept = filter_by_icc(own, threshold=0.5, model="lite")
    assert kept["caption"] == ["a dog"] and kept["icc_model"] == ["lite"]
    assert filter_by_icc(own, threshold=0.5)["caption"] == ["an idea"]  # no model named: the column as it is


def test_rescoring_without_captions_is_a_clear_error():
    scores_only = datasets.Dataset.from_dict({"icc_score": [0.9, 0.1], "icc_model": ["lite", "lite"]})
    with pytest.raises(UserInputError, match=r"holds scores of lite .*not of model='mini'.*no 'caption' column"):
        filter_by_icc(scores_only, threshold=0.5, model="mini")


def test_add_icc_scores_records_the_model():
    scored = add_icc_scores(datasets.Dataset.from_dict({"caption": ["a dog", ""]}), model="lite", output_column="s")
    assert scored["s_model"] == ["lite", "lite"] and scored.features["s_model"] == datasets.Value("string")


# The Ray engine's case, test_ray_rescores_what_another_model_stored, is in test_ray.py, on its Ray instance.
