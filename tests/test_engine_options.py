"""One contract for every engine: the options of FilterOptions and ScoringOptions (the parts of a JobSpec), with
their defaults, reach ``datasets``, Ray, single-file and sharded jobs alike (docs/curation.md, "Adding an option")."""

import dataclasses
import inspect
import json

import datasets
import pytest

from modeling_icc.cli.main import build_parser, main
from modeling_icc.curation.engines import datasets as hf_engine
from modeling_icc.curation.filter_options import FilterOptions
from modeling_icc.curation.filter_plan import FilterPlan
from modeling_icc.curation.job_spec import ScoringOptions
from modeling_icc.curation.selection import KeepRule
from modeling_icc.scoring.load import DEFAULT_MODEL_ID

ray_engine = pytest.importorskip("modeling_icc.curation.engines.ray", reason="the [ray] extra is not installed")

FILTER_ENGINES = {"datasets": hf_engine.filter_by_icc, "ray": ray_engine.filter_by_icc}
#: A value other than the default for every filter option.
CHANGED = {
    "threshold": 0.25,
    "top_fraction": 0.5,
    "top_k": 7,
    "column": "text",
    "score_column": "my_score",
    "level": "node",
    "aggregate": "max",
    "node_columns": ("node_ids",),
    "clip": KeepRule(threshold=0.3),
    "clip_column": "similarity",
    "other_languages": "keep",
}


def test_every_filter_option_has_a_changed_value_here():
    assert set(CHANGED) == {option.name for option in dataclasses.fields(FilterOptions)}


@pytest.mark.parametrize("engine", FILTER_ENGINES.values(), ids=FILTER_ENGINES)
def test_every_filter_option_is_a_keyword_of_each_engine_with_the_specs_default(engine):
    parameters = inspect.signature(engine).parameters
    for option in dataclasses.fields(FilterOptions):
        assert parameters[option.name].default == option.default, option.name


SCORING_ENGINES = {
    "datasets.add_icc_scores": hf_engine.add_icc_scores,
    "datasets.filter_by_icc": hf_engine.filter_by_icc,
    "ray.add_icc_scores": ray_engine.add_icc_scores,
    "ray.filter_by_icc": ray_engine.filter_by_icc,
}


@pytest.mark.parametrize("engine", SCORING_ENGINES.values(), ids=SCORING_ENGINES)
def test_every_scoring_option_is_a_keyword_of_each_engine_with_the_specs_default(engine):
    parameters = inspect.signature(engine).parameters
    for option in dataclasses.fields(ScoringOptions):
        assert parameters[option.name].default == option.default, option.name
        assert parameters[option.name].annotation == option.type, option.name


@pytest.mark.parametrize("engine", [hf_engine.add_icc_scores, ray_engine.add_icc_scores], ids=["datasets", "ray"])
def test_add_icc_scores_takes_the_model_third_by_position_and_the_other_scoring_options_by_keyword(engine):
    """The generated signature keeps the one users call: ``add_icc_scores(dataset, column, model, ...)``."""
    parameters = inspect.signature(engine).parameters
    assert list(parameters)[:3] == ["dataset", "column", "model"]
    assert parameters["model"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    for option in dataclasses.fields(ScoringOptions):
        if option.name != "model":
            assert parameters[option.name].kind is inspect.Parameter.KEYWORD_ONLY, option.name
    assert "scoring_options" not in parameters


def test_the_datasets_engine_keeps_its_positional_order_and_takes_the_model_by_position():
    assert list(inspect.signature(hf_engine.add_icc_scores).parameters)[:5] == [
        *("dataset", "column", "model", "map_batch_size", "output_column"),
    ]
    scored = hf_engine.add_icc_scores(datasets.Dataset.from_dict({"text": ["a dog on a beach"]}), "text", "lite")
    assert scored["icc_model"] == ["lite"]
    filter_parameters = inspect.signature(hf_engine.filter_by_icc).parameters
    assert list(filter_parameters)[:4] == ["dataset", "threshold", "top_fraction", "top_k"]
    assert filter_parameters["model"].kind is inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("engine", [hf_engine.add_icc_scores, hf_engine.filter_by_icc], ids=["add", "filter"])
def test_a_bad_scoring_option_is_refused_by_each_engine_before_any_row_is_read(engine, monkeypatch):
    monkeypatch.setattr(hf_engine, "_check_dataset", lambda dataset: 1 / 0)  # never reached
    rows = datasets.Dataset.from_dict({"caption": ["a dog"]})
    rule = {"threshold": 0.5} if engine is hf_engine.filter_by_icc else {}
    with pytest.raises(ValueError, match="batch_size must be positive, got 0"):
        engine(rows, batch_size=0, **rule)
    with pytest.raises(TypeError, match="batch_size must be a whole number or None, got str '8'"):
        engine(rows, batch_size="8", **rule)
    with pytest.raises(TypeError, match="unexpected keyword argument 'batchsize'"):
        engine(rows, batchsize=8, **rule)


def test_takes_scoring_options_needs_a_keyword_only_slot_and_a_real_parameter_to_put_the_model_after():
    from modeling_icc.scoring.options import takes_scoring_options

    def engine(dataset, scoring_options, column=None): ...

    with pytest.raises(TypeError, match="cannot stand where 'scoring_options' does"):
        takes_scoring_options()(engine)

    def keyword_engine(dataset, *, scoring_options): ...

    with pytest.raises(TypeError, match="no parameter 'colum'"):
        takes_scoring_options(model_after="colum")(keyword_engine)
    wrapped = takes_scoring_options()(lambda dataset, *, scoring_options: scoring_options)
    assert wrapped(None, model="lite", batch_size=2) == ScoringOptions("lite", batch_size=2)


def test_ray_filter_passes_its_scoring_options_to_ray_add_icc_scores():
    parameters = inspect.signature(ray_engine.filter_by_icc).parameters
    assert parameters["model"].default is None
    assert parameters["scoring"].kind is inspect.Parameter.VAR_KEYWORD


def test_without_a_model_the_engines_score_with_the_default_model_mini():
    """``model=None``, every engine's default, is load_scorer's default: mini, which loads offline."""
    assert ScoringOptions().model is None
    scored = hf_engine.add_icc_scores(datasets.Dataset.from_dict({"caption": ["a dog on a beach"]}))
    assert scored["icc_model"] == [DEFAULT_MODEL_ID] == ["mini"]


@pytest.mark.parametrize("engine", FILTER_ENGINES.values(), ids=FILTER_ENGINES)
def test_the_rule_options_also_go_by_position_and_a_wrong_keyword_is_a_type_error(engine, monkeypatch):
    seen = []
    monkeypatch.setattr(FilterOptions, "plan", lambda options, tie_break_column=None: seen.append(options) or 1 / 0)
    for args, options in [
        ((0.5,), {"threshold": 0.5}),
        ((None, 0.3), {"top_fraction": 0.3}),
        ((None, None, 4), {"top_k": 4}),
    ]:
        with pytest.raises(ZeroDivisionError):
            engine(datasets.Dataset.from_dict({"caption": ["a dog"]}), *args)
        assert seen.pop() == FilterOptions(**options)
    if engine is hf_engine.filter_by_icc:  # Ray passes other keywords on to add_icc_scores (**scoring)
        with pytest.raises(TypeError, match="threshhold"):
            engine(datasets.Dataset.from_dict({"caption": ["a dog"]}), threshhold=0.5)


class _Planned(Exception):
    """Stops an engine once it has turned its keywords into options."""


@pytest.mark.parametrize("name", CHANGED)
@pytest.mark.parametrize("engine", FILTER_ENGINES.values(), ids=FILTER_ENGINES)
def test_each_filter_option_given_to_an_engine_reaches_its_plan(engine, name, monkeypatch):
    seen = []

    def plan(options, tie_break_column=None):
        seen.append(options)
        raise _Planned

    monkeypatch.setattr(FilterOptions, "plan", plan)
    rule = {} if name in ("threshold", "top_fraction", "top_k") else {"threshold": 0.5}
    with pytest.raises(_Planned):
        engine(datasets.Dataset.from_dict({"caption": ["a dog"]}), **rule, **{name: CHANGED[name]})
    assert seen == [FilterOptions(**rule, **{name: CHANGED[name]})]


def test_icc_filter_flags_give_the_plan_of_the_same_options(tmp_path):
    """Single-file and sharded jobs both take the plan of the job spec ``cli.common.job_spec`` builds."""
    from modeling_icc.cli.common import job_spec

    def plan_of(*flags: str) -> FilterPlan:
        args = build_parser("filter").parse_args(["filter", "--input", "x.jsonl", *flags])
        return job_spec(args).keep.plan(input_format="jsonl")

    assert plan_of("--threshold", "0.5") == FilterOptions(threshold=0.5).plan()
    given = {
        ("--top-k", "7"): {"top_k": 7},
        ("--top-fraction", "0.5", "--column", "text"): {"top_fraction": 0.5, "column": "text"},
        ("--threshold", "0.5", "--aggregate", "max"): {"threshold": 0.5, "aggregate": "max"},
        ("--threshold", "0.5", "--level", "node", "--node-columns", "node_ids"): {
            "threshold": 0.5,
            "level": "node",
            "node_columns": ("node_ids",),
        },
        ("--threshold", "0.5", "--and-threshold", "0.3"): {"threshold": 0.5, "clip": KeepRule(threshold=0.3)},
        ("--threshold", "0.5", "--and-column", "similarity", "--and-top-k", "2"): {
            "threshold": 0.5,
            "clip": KeepRule(top_k=2),
            "clip_column": "similarity",
        },
        ("--threshold", "0.5", "--other-languages", "keep"): {"threshold": 0.5, "other_languages": "keep"},
    }
    for flags, options in given.items():
        assert plan_of(*flags) == FilterOptions(**options).plan(), flags


def test_the_same_options_keep_the_same_rows_in_datasets_single_file_and_sharded_jobs(tmp_path):
    captions = ["a red car on a street", "a dog on a beach", "freedom and justice", "", "two cats on a sofa"] * 3
    rows = [
        {"uid": index, "text": caption, "similarity": (index * 7 % 10) / 10} for index, caption in enumerate(captions)
    ]
    source = tmp_path / "pool.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    options = {"top_k": 5, "column": "text", "clip": KeepRule(threshold=0.2), "clip_column": "similarity"}
    flags = ["--top-k", "5", "--column", "text", "--and-column", "similarity", "--and-threshold", "0.2"]

    kept = hf_engine.filter_by_icc(datasets.Dataset.from_list(rows), model="lite", **options)
    command = ["filter", "--model", "lite", "--input", str(source), *flags]
    assert main([*command, "--output", str(tmp_path / "kept.jsonl")]) == 0
    assert main([*command, "--output-dir", str(tmp_path / "shards")]) == 0

    def uids(path):
        return [json.loads(line)["uid"] for line in path.read_text(encoding="utf-8").splitlines()]

    assert 0 < len(kept["uid"]) < 5  # the top 5 ICC scores, less those under the similarity rule
    assert uids(tmp_path / "kept.jsonl") == kept["uid"] == uids(tmp_path / "shards" / "pool.jsonl")


#: A value other than the default for every scoring option but the model, which reaches the scorer's loader.
CHANGED_SCORING = {
    "fallback": "lite",
    "device": "cpu",
    "dtype": "float32",
    "batch_size": 3,
    "compile": True,
    "tokenize_workers": 1,
}


@pytest.mark.dtype
@pytest.mark.parametrize("name", CHANGED_SCORING)
def test_each_scoring_option_given_to_the_datasets_engine_reaches_the_scorers_loader(name, monkeypatch):
    from modeling_icc.scoring import options
    from modeling_icc.scoring.load import load_scorer

    calls = []

    def recording_load_scorer(model, device=None, dtype=None, batch_size=None, **options):
        calls.append({"device": device, "dtype": dtype, "batch_size": batch_size, **options})
        return load_scorer("lite")

    monkeypatch.setattr(options, "load_scorer", recording_load_scorer)
    hf_engine.add_icc_scores(
        datasets.Dataset.from_dict({"caption": ["a dog"]}), model="mini", **{name: CHANGED_SCORING[name]}
    )
    assert calls and calls[0][name] == CHANGED_SCORING[name]
    assert set(CHANGED_SCORING) | {"model"} == {option.name for option in dataclasses.fields(ScoringOptions)}
