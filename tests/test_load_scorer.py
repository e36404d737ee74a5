"""One way to get a scorer: ``load_scorer`` with an explicit, reported fallback and an optional process cache."""

import re
import warnings

import numpy as np
import pytest
import torch

from modeling_icc import (
    DEFAULT_MODEL_ID,
    PUBLISHED_MODEL_ID,
    LiteScorer,
    ModelNotAvailableError,
    load_scorer,
)
from modeling_icc.scoring.devices import resolve_dtype
from modeling_icc.scoring.load import (
    ModelFallbackWarning,
    clear_scorer_cache,
    fallback_notices,
)
from modeling_icc.scoring.mini_reading import MiniReading
from modeling_icc.utils.errors import CheckpointError

CAPTIONS = ["a man with a white shirt", "a great method of quantifying concreteness", "a red car on a street"]


@pytest.fixture(autouse=True)
def fresh_cache():
    clear_scorer_cache()
    yield
    clear_scorer_cache()


def test_nothing_falls_back_unless_the_caller_names_a_fallback(tmp_path):
    missing = tmp_path / "absent"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ModelNotAvailableError, match="does not exist"):
            load_scorer(missing)
        with pytest.raises(ModelNotAvailableError) as raised:
            load_scorer(PUBLISHED_MODEL_ID)  # not in the cache here, and the Hub is off
    assert "load_scorer('moranyanuka/icc', fallback='mini')" in str(raised.value)
    assert "`--fallback mini`" in str(raised.value) and "`icc score --model mini`" in str(raised.value)


def test_without_a_name_the_default_is_mini_which_loads_offline():
    assert (DEFAULT_MODEL_ID, PUBLISHED_MODEL_ID) == ("mini", "moranyanuka/icc")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no download tried, nothing falls back
        scorer = load_scorer()
        assert isinstance(scorer, MiniReading) and scorer.model_id == "mini"
        assert load_scorer(cache=True) is load_scorer("mini", cache=True)  # one model, one cache entry
    expected = load_scorer("mini", cache=True).score(CAPTIONS)
    np.testing.assert_array_equal(scorer.score(CAPTIONS), expected)


def test_a_fallback_is_reported_naming_both_models_and_recorded_as_the_model_used(tmp_path):
    missing = tmp_path / "absent"
    with pytest.warns(ModelFallbackWarning) as caught:
        scorer = load_scorer(missing, fallback="lite")
    assert isinstance(scorer, LiteScorer) and scorer.model_id == "lite"
    (warning,) = caught
    assert f"the ICC model '{missing}' cannot be loaded here" in str(warning.message)
    assert "scoring with the fallback model 'lite' instead" in str(warning.message)
    assert warning.filename == __file__  # points at the caller


def test_a_broken_checkpoint_never_falls_back(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(CheckpointError, match="has no weights"):
            load_scorer(tmp_path, fallback="lite")


def test_a_fallback_that_cannot_load_either_names_both(tmp_path):
    with pytest.raises(
        ModelNotAvailableError, match=r"'.*absent' \(the local path .* does not exist\) nor its fallback"
    ):
        load_scorer(tmp_path / "absent", fallback=tmp_path / "also-absent")


def test_fallback_notices_collects_the_report_instead_of_warning(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with fallback_notices() as notices:
            load_scorer(tmp_path / "absent", fallback="lite")
            load_scorer("lite", fallback="lite")  # available: no notice
    assert len(notices) == 1 and "fallback model 'lite'" in notices[0]


def test_a_ready_scorer_is_returned_as_is():
    lite = LiteScorer()
    assert load_scorer(lite) is lite and load_scorer(lite, cache=True) is lite


def test_the_cache_keeps_one_model_per_model_device_dtype(tiny_student_dir):
    default_dtype = resolve_dtype(None, torch.device("cpu"))
    first = load_scorer(tiny_student_dir, "cpu", default_dtype, cache=True)
    assert load_scorer(str(tiny_student_dir), "cpu", cache=True) is first  # None resolves to the same default
    assert load_scorer(tiny_student_dir, "cpu", default_dtype) is not first  # cache=False always loads
    other = torch.float16 if default_dtype == torch.bfloat16 else torch.bfloat16
    assert load_scorer(tiny_student_dir, "cpu", other, cache=True) is not first
    assert load_scorer("lite", cache=True) is load_scorer("lite", "cpu", cache=True)


def test_cached_batch_settings_share_the_weights_and_keep_scores(tiny_student_dir):
    cached = load_scorer(tiny_student_dir, "cpu", "float32", cache=True)
    by_one = load_scorer(tiny_student_dir, "cpu", "float32", batch_size=1, max_batch_tokens=16, cache=True)
    assert by_one.model is cached.model and (by_one.batch_size, by_one.max_batch_tokens) == (1, 16)
    assert cached.batch_size != 1
    assert load_scorer(tiny_student_dir, "cpu", "float32", batch_size=1, max_batch_tokens=16, cache=True) is by_one
    np.testing.assert_allclose(by_one.score(CAPTIONS), cached.score(CAPTIONS), atol=1e-6)
    for option in ("batch_size", "max_batch_tokens"):
        with pytest.raises(ValueError, match=f"{option} must be positive"):
            load_scorer(tiny_student_dir, "cpu", cache=True, **{option: 0})


def test_a_cached_fallback_is_reported_on_every_call(tmp_path):
    for _ in range(2):
        with pytest.warns(ModelFallbackWarning, match="fallback model 'lite'"):
            assert load_scorer(tmp_path / "absent", fallback="lite", cache=True).model_id == "lite"


def test_fallback_notices_leaves_other_warnings_alone():
    with pytest.warns(UserWarning, match="unrelated") as caught, fallback_notices() as notices:
        warnings.warn("unrelated", UserWarning, stacklevel=1)
    assert notices == [] and not any(issubclass(w.category, ModelFallbackWarning) for w in caught)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"batch_size": "8"}, "batch_size must be a whole number or None, got str '8'"),
        ({"batch_size": 2.5}, "batch_size must be a whole number or None, got float 2.5"),
        ({"batch_size": True}, "batch_size must be a whole number or None, got bool True"),
        ({"max_batch_tokens": "1024"}, "max_batch_tokens must be a whole number or None"),
        ({"tokenize_workers": 1.0}, "tokenize_workers must be a whole number or None"),
        ({"compile": "yes"}, "compile must be True or False, got str 'yes'"),
        ({"cache": 1}, "cache must be True or False, got int 1"),
        ({"progress": "no"}, "progress must be True, False or None, got str 'no'"),
        ({"device": 0}, "device must be a device name"),
        ({"dtype": 16}, "dtype must be a dtype name"),
        ({"fallback": 3}, "fallback must be a model name, Hub id or local path"),
        ({"name_or_path": 3}, "name_or_path must be a model name, Hub id or local path"),
        ({"name_or_path": ["mini"]}, "name_or_path must be a model name"),
    ],
)
def test_an_argument_of_the_wrong_type_is_a_type_error_naming_it(arguments, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        load_scorer(**{"name_or_path": "lite", **arguments})


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"batch_size": 0}, "batch_size must be positive, got 0"),
        ({"max_batch_tokens": -8}, "max_batch_tokens must be positive, got -8"),
        ({"tokenize_workers": -1}, "tokenize_workers must be 0 or more, got -1"),
        ({"name_or_path": ""}, "name_or_path is empty"),
        ({"fallback": " "}, "fallback is empty"),
    ],
)
def test_an_argument_out_of_range_is_a_value_error_naming_it(arguments, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        load_scorer(**{"name_or_path": "lite", **arguments})


def test_arguments_are_checked_also_with_a_ready_scorer_and_torch_objects_pass():
    with pytest.raises(ValueError, match="batch_size must be positive"):
        load_scorer(LiteScorer(), batch_size=0)
    assert load_scorer("lite", torch.device("cpu"), torch.float32, np.int64(4)).model_id == "lite"


@pytest.mark.parametrize(("typed", "meant"), [("minii", "mini"), ("Mini", "mini"), ("lit", "lite"), ("light", "lite")])
def test_a_near_miss_of_a_shipped_name_asks_did_you_mean(typed, meant):
    with pytest.raises(ModelNotAvailableError) as raised:
        load_scorer(typed)
    message = str(raised.value)
    assert message.endswith(f"did you mean {meant!r}?") and "hf download" not in message and "\n" not in message


def test_names_far_from_a_shipped_one_or_with_an_organisation_get_no_suggestion(tmp_path):
    for name in ("org/minii", "some-org/some-model", str(tmp_path / "mini")):
        with pytest.raises(ModelNotAvailableError) as raised:
            load_scorer(name)
        assert "did you mean" not in str(raised.value), name


def test_a_near_miss_falls_back_like_any_model_not_available_here():
    with pytest.warns(ModelFallbackWarning, match=r"'minii' cannot be loaded here \(.*did you mean 'mini'\?\)"):
        assert load_scorer("minii", fallback="lite").model_id == "lite"
