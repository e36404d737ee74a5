"""Command-line defaults are those of what the flags feed (as tests/test_training_scripts.py holds the scripts
to the pipeline config): ``icc bench`` to the suite, the bootstrap and the baselines' options; ``icc filter`` to
the engines' FilterOptions; ``--model`` to ``load_scorer``'s default model."""

import argparse
import dataclasses
import inspect

from modeling_icc.cli.common import job_spec, keywords_for, open_scorer
from modeling_icc.cli.main import COMMANDS, build_parser
from modeling_icc.curation.filter_options import FilterOptions
from modeling_icc.curation.job_spec import JobSpec, ScoringOptions
from modeling_icc.evaluation import Bootstrap, load_benchmarks, run_suite
from modeling_icc.evaluation.baselines.registry import ModelOptions
from modeling_icc.scoring.load import DEFAULT_MODEL_ID, load_scorer

#: ``icc bench`` flags whose None means the target's choice: the device (run_suite's "auto").
BENCH_NONE_MEANS_THE_TARGETS = {"device"}
#: ``icc filter`` flags whose None means the target's choice: the other rule's default column.
FILTER_NONE_MEANS_THE_TARGETS = {"and_column"}


def _defaults(target) -> dict[str, object]:
    return {
        name: parameter.default
        for name, parameter in inspect.signature(target).parameters.items()
        if parameter.default is not inspect.Parameter.empty
    }


def _parsed(command: str, *argv: str) -> dict[str, object]:
    return vars(build_parser(command).parse_args([command, *argv]))


def test_bench_command_line_defaults_are_the_suite_and_model_defaults():
    parsed = _parsed("bench")
    compared = set()
    for target in (load_benchmarks, run_suite, ModelOptions, Bootstrap):
        for name, expected in _defaults(target).items():
            if name not in parsed:
                continue
            value = parsed[name]
            ok = value == expected or (value is None and name in BENCH_NONE_MEANS_THE_TARGETS)
            assert ok, (target.__name__, name, value, expected)
            compared.add(name)
    assert {"n_bootstrap", "seed", "caption_column", "label_column", "published_column", "norm_split"} <= compared
    assert {"output_dir", "name", "clip_model", "llm_scale", "images_per_caption", "text_to_image"} <= compared


def test_bench_passes_its_flags_to_load_benchmarks_and_model_options_by_name():
    args = build_parser("bench").parse_args(
        ["bench", "--column", "text", "--format", "csv", "--t2i-model", "t2i", "--llm-scale", "3", "--seed", "2"]
    )
    assert keywords_for(load_benchmarks, args) == {
        "data": None,
        "fmt": "csv",
        "caption_column": "text",
        "label_column": "concreteness_annotation",
        "published_column": "icc_score",
        "norm_split": "test",
    }
    options = ModelOptions(**keywords_for(ModelOptions, args))
    assert (options.text_to_image, options.llm_scale, options.seed) == ("t2i", 3, 2)


def test_filter_command_line_defaults_are_the_job_specs_defaults():
    parsed = _parsed("filter", "--threshold", "0.5", "--input", "x.txt")
    compared = set()
    for spec in (FilterOptions, ScoringOptions, JobSpec):
        for option in dataclasses.fields(spec):
            if option.name not in parsed or option.name in ("threshold", "top_fraction", "top_k", "texts"):
                continue
            value = parsed[option.name]
            assert value == option.default or (value is None and option.name in FILTER_NONE_MEANS_THE_TARGETS), option
            compared.add(option.name)
    assert compared == {
        *("column", "level", "aggregate", "node_columns", "other_languages"),
        *("model", "fallback", "device", "dtype", "batch_size", "compile", "tokenize_workers"),
        *("output", "output_dir", "input_format", "output_format", "datacomp_subset", "uid_column"),
        *("workers", "show", "progress"),
    }
    args = build_parser("filter").parse_args(["filter", "--threshold", "0.5", "--input", "x.txt"])
    assert job_spec(args) == JobSpec(inputs=("x.txt",), keep=FilterOptions(threshold=0.5))
    with_clip = build_parser("filter").parse_args(["filter", "--threshold", "0.5", "-i", "x", "--and-threshold", "1"])
    assert job_spec(with_clip).keep.plan().other.column == FilterOptions.clip_column


def _options(command: str) -> dict[str, argparse.Action]:
    """``command``'s options by ``dest``."""
    (commands,) = [
        action for action in build_parser(command)._actions if isinstance(action, argparse._SubParsersAction)
    ]
    return {action.dest: action for action in commands.choices[command]._actions}


def test_every_model_flag_leaves_the_default_to_load_scorer():
    """No ``--model`` is ``load_scorer(None)``: the default model is defined once, as DEFAULT_MODEL_ID."""
    assert inspect.signature(load_scorer).parameters["name_or_path"].default is None
    scoring = [command for command in COMMANDS if "fallback" in _options(command)]  # add_model_options' commands
    assert scoring == ["score", "filter", "explain"]
    for command in scoring:
        model = _options(command)["model"]
        assert model.default is None and model.help.endswith(f"(default: {DEFAULT_MODEL_ID})"), command
    args = build_parser("explain").parse_args(["explain", "a dog"])
    assert open_scorer(args).model_id == DEFAULT_MODEL_ID == "mini"
