"""The `evaluate` module: loading offline from the repo and from the installed package, outputs, caching."""

import math
import warnings
from pathlib import Path

import evaluate
import numpy as np
import pytest

import modeling_icc
from modeling_icc import LiteScorer, ModelNotAvailableError, ScoringOptions, load_scorer
from modeling_icc.hub import measurement
from modeling_icc.hub.measurement import compute_icc, metric_path, model_for_config, module_script

REPO_ROOT = Path(__file__).resolve().parents[1]
CAPTIONS = ["a man with a white shirt", "a great method of quantifying concreteness", "", "a red car on a street"]


def test_loads_by_folder_name_from_the_repository_root(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    icc = evaluate.load("icc_metric")
    assert icc.module_type == "measurement"
    assert list(icc.features) == ["predictions"] and icc.features["predictions"].dtype == "string"
    result = icc.compute(predictions=CAPTIONS, model_id="lite")
    expected = LiteScorer().score(CAPTIONS)
    np.testing.assert_allclose(result["icc_scores"], expected, equal_nan=True)
    assert result["icc_model"] == "lite"
    assert result["icc_scores"][0] > result["icc_scores"][1]


def test_loads_from_the_installed_package_anywhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = Path(modeling_icc.metric_path())
    assert (folder / "icc_metric.py").is_file() and (folder / "README.md").is_file()
    icc = evaluate.load(modeling_icc.metric_path())
    result = icc.compute(predictions=CAPTIONS[:2], model_id="lite", aggregation="mean")
    assert result["icc_mean"] == pytest.approx(np.mean(result["icc_scores"]))


@pytest.fixture
def icc_module(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    return evaluate.load("icc_metric")


@pytest.mark.parametrize(
    ("predictions", "message"),
    [
        ("a dog on a beach", "not a single string"),
        (b"a dog on a beach", "got bytes"),
        ({"a dog": 1}, "got a mapping"),
        ({"a dog", "a cat"}, "has no order"),
    ],
)
def test_the_module_refuses_predictions_that_are_not_a_list_of_captions(icc_module, predictions, message):
    with pytest.raises(TypeError, match=message):
        icc_module.compute(predictions=predictions, model_id="lite")
    with pytest.raises(TypeError, match=message):
        icc_module.add_batch(predictions=predictions)
    with pytest.raises(TypeError, match=message):
        compute_icc(predictions, model_id="lite")


def test_non_string_predictions_score_nan_and_are_never_coerced(icc_module):
    lite = LiteScorer()
    dog, cat = lite.score(["a dog", "a cat"])
    for predictions, expected in (
        (["a dog", 5], [dog, np.nan]),  # evaluate alone turns 5 into "5" and scores it
        ([5, "a dog"], [np.nan, dog]),  # ... and refuses a non-string only in first place
        ([None, "a dog", b"a cat", 3.5, ["a cat"]], [np.nan, dog, np.nan, np.nan, np.nan]),
    ):
        result = icc_module.compute(predictions=predictions, model_id="lite")
        np.testing.assert_allclose(result["icc_scores"], expected, equal_nan=True)
        direct = compute_icc(predictions, model_id="lite")["icc_scores"]
        np.testing.assert_allclose(direct, expected, equal_nan=True)
    icc_module.add(prediction="a dog")
    icc_module.add(prediction=5)
    icc_module.add_batch(predictions=[7, "a cat"])
    result = icc_module.compute(model_id="lite")
    np.testing.assert_allclose(result["icc_scores"], [dog, np.nan, np.nan, cat], equal_nan=True)


def test_aggregations_and_kept_fraction_skip_blank_captions():
    result = compute_icc(CAPTIONS, model_id="lite", aggregation="all", threshold=0.5)
    scores = np.array(result["icc_scores"])
    assert math.isnan(scores[2])
    valid = scores[~np.isnan(scores)]
    assert result["icc_mean"] == pytest.approx(valid.mean())
    assert result["icc_median"] == pytest.approx(np.median(valid))
    assert result["icc_std"] == pytest.approx(valid.std())
    assert result["icc_quantiles"]["p50"] == pytest.approx(np.median(valid))
    assert list(result["icc_quantiles"]) == ["p5", "p25", "p50", "p75", "p95"]
    assert result["kept_fraction"] == pytest.approx((valid >= 0.5).sum() / len(CAPTIONS))


def test_per_caption_only_unless_asked_and_bad_aggregation_is_rejected():
    assert set(compute_icc(CAPTIONS, model_id="lite")) == {"icc_scores", "icc_model", "icc_languages"}
    with pytest.raises(ValueError, match="aggregation must be one of"):
        compute_icc(CAPTIONS, model_id="lite", aggregation="average")


def test_all_blank_input_gives_nan_summaries():
    result = compute_icc(["", "  "], model_id="lite", aggregation="median", threshold=0.1)
    assert math.isnan(result["icc_median"]) and result["kept_fraction"] == 0.0


def test_the_model_is_chosen_by_config_name_as_evaluates_model_based_modules_do(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    icc = evaluate.load("icc_metric", "lite")
    assert icc.config_name == "lite"
    result = icc.compute(predictions=CAPTIONS[:2])
    assert result["icc_model"] == "lite"
    np.testing.assert_allclose(result["icc_scores"], LiteScorer().score(CAPTIONS[:2]))
    assert model_for_config("default") == "mini" and model_for_config("org/icc-x") == "org/icc-x"


def test_the_mini_config_scores_with_mini(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    result = evaluate.load("icc_metric", "mini").compute(predictions=CAPTIONS[:2])
    assert result["icc_model"] == "mini"
    expected = load_scorer("mini", "cpu", "float32", cache=True).score(CAPTIONS[:2])
    np.testing.assert_allclose(result["icc_scores"], expected, atol=1e-6)


def test_the_module_scores_in_fp32_on_cpu_even_where_the_library_runs_bf16(monkeypatch):
    """The card says fp32 on CPU: true on a CPU with native bf16 too, where load_scorer's default is bf16."""
    import torch

    monkeypatch.delenv("ICC_FORCE_FP32", raising=False)
    monkeypatch.setattr("modeling_icc.scoring.hardware.cpu_has_native_bf16", lambda: True)
    assert load_scorer("mini", device="cpu").dtype == torch.bfloat16  # the library's default here
    assert str(measurement._scorer(ScoringOptions("mini", device="cpu")).dtype) in ("float32", "torch.float32")
    asked = ScoringOptions("mini", device="cpu", dtype="bfloat16")
    assert measurement._scorer(asked).dtype == torch.bfloat16  # asked for: honoured
    scores = compute_icc(CAPTIONS[:2], model_id="mini", device="cpu")["icc_scores"]
    expected = load_scorer("mini", "cpu", "float32").score(CAPTIONS[:2])
    np.testing.assert_array_equal(np.asarray(scores, dtype=np.float32), expected)


def test_a_config_name_that_is_a_path_is_refused_before_evaluate_uses_it_as_a_folder(monkeypatch, tmp_path):
    monkeypatch.chdir(REPO_ROOT)
    with pytest.raises(ValueError, match=r"not a model name: .*compute\(\.\.\., model_id=FOLDER\)"):
        evaluate.load("icc_metric", str(tmp_path))


def test_without_a_config_name_the_module_scores_with_mini_offline(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    icc = evaluate.load("icc_metric")  # config "default": the package's default model, as load_scorer()
    assert icc.config_name == "default"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing downloaded, nothing falls back
        result = icc.compute(predictions=CAPTIONS[:2])
        by_function = compute_icc(CAPTIONS[:2])
    assert result["icc_model"] == by_function["icc_model"] == "mini"
    expected = load_scorer("mini", "cpu", "float32", cache=True).score(CAPTIONS[:2])
    np.testing.assert_allclose(result["icc_scores"], expected, atol=1e-6)
    assert result["icc_scores"] == by_function["icc_scores"]


def test_a_named_model_never_switches_to_another_offline(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    icc = evaluate.load("icc_metric", "moranyanuka/icc")  # the published student: not in the cache here
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback warning either: nothing falls back
        with pytest.raises(ModelNotAvailableError) as raised:
            icc.compute(predictions=CAPTIONS[:1])
    message = str(raised.value)
    assert "'moranyanuka/icc'" in message
    assert "evaluate.load(<this module>, 'mini')" in message and "compute(..., model_id='mini')" in message
    with pytest.raises(ModelNotAvailableError, match="never switches models"):
        compute_icc(CAPTIONS[:1], model_id="moranyanuka/icc")


def test_batch_size_applies_per_call_and_keeps_scores(tiny_student_dir):
    reference = load_scorer(tiny_student_dir, "cpu", "float32").score(CAPTIONS, errors="nan")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        by_one = compute_icc(CAPTIONS, model_id=str(tiny_student_dir), batch_size=1, device="cpu", dtype="float32")
    np.testing.assert_allclose(by_one["icc_scores"], reference, atol=1e-6, equal_nan=True)
    with pytest.raises(ValueError, match="positive"):
        compute_icc(CAPTIONS, model_id=str(tiny_student_dir), batch_size=0)


def test_module_script_finds_the_renamed_script(tmp_path):
    (tmp_path / "app.py").write_text("")
    (tmp_path / "icc.py").write_text("")
    assert module_script(tmp_path).name == "icc.py"
    assert module_script(metric_path()).name == "icc_metric.py"


def test_references_are_refused_not_ignored():
    import evaluate

    from modeling_icc import metric_path

    icc = evaluate.load(metric_path(), "lite")
    with pytest.raises(ValueError, match="no references"):
        icc.compute(predictions=["a dog on a beach"], references=["a dog"])
    with pytest.raises(ValueError, match="no references"):
        icc.add_batch(predictions=["a dog on a beach"], references=["a dog"])
    with pytest.raises(ValueError, match="no references"):
        icc.add(prediction="a dog on a beach", reference="a dog")


@pytest.mark.parametrize("threshold", [1.5, -0.1, float("nan")])
def test_a_threshold_outside_the_scores_range_is_refused_as_the_filters_refuse_it(threshold):
    from modeling_icc.hub.measurement import compute_icc
    from modeling_icc.utils.errors import UserInputError

    with pytest.raises(UserInputError, match="threshold"):
        compute_icc(["a dog on a beach"], model_id="lite", threshold=threshold)


@pytest.mark.parametrize("options", [{"device": "cuda:7"}, {"dtype": "int8"}, {"batch_size": 8}])
def test_options_lite_would_ignore_are_refused(options):
    from modeling_icc.hub.measurement import compute_icc

    with pytest.raises(ValueError, match="not apply to lite"):
        compute_icc(["a dog on a beach"], model_id="lite", **options)
