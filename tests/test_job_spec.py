"""The job spec is the one contract: each option has one default, the CLI only turns flags into a spec,
and a spec built in Python runs the same job as the flags."""

import ast
import dataclasses
import inspect
import json
from pathlib import Path

import pytest

import modeling_icc
from modeling_icc.cli.main import main
from modeling_icc.curation.engines.run import run_job
from modeling_icc.curation.filter_options import FilterOptions
from modeling_icc.curation.job_spec import JobSpec, ScoringOptions
from modeling_icc.curation.selection import KeepRule
from modeling_icc.scoring.load import load_scorer
from modeling_icc.utils.errors import UserInputError

PACKAGE = Path(modeling_icc.__file__).parent
#: Every option of a job, by the part of the spec that defines it.
OPTIONS = {
    ScoringOptions: {"model", "fallback", "device", "dtype", "batch_size", "compile", "tokenize_workers"},
    FilterOptions: {
        *("threshold", "top_fraction", "top_k", "column", "score_column", "level", "aggregate", "node_columns"),
        *("clip", "clip_column", "other_languages"),
    },
    JobSpec: {
        *("inputs", "texts", "output", "output_dir", "input_format", "output_format", "keep", "scoring"),
        *("datacomp_subset", "uid_column", "workers", "show", "progress"),
    },
}


def test_the_options_of_a_job_are_these():
    """Adding an option means adding it here, and to every engine (tests/test_engine_options.py)."""
    for spec, names in OPTIONS.items():
        assert {option.name for option in dataclasses.fields(spec)} == names, spec.__name__


def _defaults_in(path: Path) -> list[tuple[str, int, ast.expr]]:
    """``(name, line, default)`` of every parameter and class field with a default in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            positional = node.args.posonlyargs + node.args.args
            with_default = positional[len(positional) - len(node.args.defaults) :]
            pairs = [*zip(with_default, node.args.defaults, strict=True)]
            pairs += zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True)
            found += [(arg.arg, node.lineno, default) for arg, default in pairs if default is not None]
        elif isinstance(node, ast.ClassDef):
            found += [
                (item.target.id, item.lineno, item.value)
                for item in node.body
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None
            ]
    return found


def test_each_option_has_its_default_written_once_in_the_job_layer():
    """In ``curation/``, ``cli/`` and ``scoring/options.py`` a parameter or field named as an option defaults to
    ``None`` (the spec's choice), to a named constant or the spec's own attribute, or is not defaulted; a written
    value (a number, a string, a tuple) appears once per option."""
    names = set().union(*OPTIONS.values())
    written: dict[str, list[str]] = {}
    layer = [
        *(PACKAGE / "curation").rglob("*.py"),
        *(PACKAGE / "cli").rglob("*.py"),
        PACKAGE / "scoring" / "options.py",
    ]
    for path in sorted(layer):
        for name, line, default in _defaults_in(path):
            literal = isinstance(default, ast.Constant | ast.Tuple | ast.List) and not (
                isinstance(default, ast.Constant) and default.value is None
            )
            if name in names and literal:
                written.setdefault(name, []).append(f"{path.relative_to(PACKAGE)}:{line} {ast.unparse(default)}")
    assert {name: places for name, places in written.items() if len(places) > 1} == {}
    assert set(written) == {"compile", "level", "other_languages", "node_columns", "inputs", "texts", "workers", "show"}


def test_load_scorer_takes_the_scoring_options_with_their_defaults():
    """``load_scorer`` (the scoring layer, below the spec) has the same defaults: a test, not an import, ties
    them, since the scoring room may not import the curation room."""
    parameters = inspect.signature(load_scorer).parameters
    for option in dataclasses.fields(ScoringOptions):
        name = "name_or_path" if option.name == "model" else option.name
        assert parameters[name].default == option.default, option.name


def test_the_cli_package_imports_no_reader_writer_or_format_module():
    imported = set()
    for path in (PACKAGE / "cli").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(("." * node.level + node.module, path.name))
            elif isinstance(node, ast.Import):
                imported.update((alias.name, path.name) for alias in node.names)
    assert [pair for pair in imported if "curation.io" in pair[0]] == []
    assert ("..curation.engines.run", "filter.py") in imported and ("..curation.engines.run", "score.py") in imported


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (dict(), "nothing to score"),
        (dict(inputs=("a.txt",), texts=("a dog",)), "as arguments or --input, not both"),
        (dict(texts=("a dog",), keep=FilterOptions(column="text")), "need neither"),
        (dict(inputs=("a.txt", "b.txt")), "need --output-dir"),
        (dict(inputs=("*.txt",)), "need --output-dir"),
        (dict(inputs=("a.txt",), workers=2), "--workers applies to sharded jobs"),
        (dict(inputs=("a.txt",), output="b.txt", output_dir="out"), "not both"),
        (dict(inputs=("-",), output_dir="out"), "not stdin"),
        (dict(output_dir="out"), "needs --input shards"),
        (dict(inputs=("a.txt",), output_dir="out", workers=0), "--workers must be >= 1"),
        (dict(inputs=("a.txt",), output_dir="out", show=3), "--show prints the rows of one file"),
        (dict(inputs=("a.txt",), uid_column="id"), "--uid-column names the uids"),
        (dict(inputs=("a.txt",), datacomp_subset="s.npy"), "needs a filter rule"),
        (dict(inputs=("a.txt",), output_format="docx"), "--output-format must be one of"),
        (dict(inputs=("a.txt",), scoring=ScoringOptions("lite", dtype="bfloat16")), "dtype does not apply"),
    ],
)
def test_a_contradictory_spec_is_one_line_before_anything_is_read(fields, message):
    with pytest.raises(UserInputError, match=message) as error:
        JobSpec(**fields)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (dict(inputs=b"a.txt"), "inputs must be a list of strings"),
        (dict(inputs=(1,)), "inputs must hold strings"),
        (dict(inputs=("a.txt",), keep={"threshold": 0.5}), "keep must be a FilterOptions"),
        (dict(inputs=("a.txt",), scoring={"model": "lite"}), "scoring must be a ScoringOptions"),
        (dict(inputs=("a.txt",), show="3"), "show must be a whole number"),
        (dict(inputs=("a.txt",), workers=True), "workers must be a whole number"),
        (dict(inputs=("a.txt",), output=3), "output must be a path"),
        (dict(inputs=("a.txt",), progress="yes"), "progress must be True, False or None"),
    ],
)
def test_a_spec_of_the_wrong_types_is_refused_when_made(fields, message):
    with pytest.raises(TypeError, match=message):
        JobSpec(**fields)


def test_one_input_or_caption_may_be_given_alone_and_paths_as_paths(tmp_path):
    assert JobSpec(inputs="pool/x.parquet").inputs == ("pool/x.parquet",)
    assert JobSpec(inputs=(tmp_path / "x.jsonl",), output=tmp_path / "y.jsonl").inputs == (str(tmp_path / "x.jsonl"),)
    assert JobSpec(texts="a dog on a beach").texts == ("a dog on a beach",)
    with pytest.raises(UserInputError, match="--show must be 0 or more"):
        JobSpec(texts=("a dog",), show=-1)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"batch_size": 0}, "batch_size must be positive, got 0"),
        ({"tokenize_workers": -1}, "tokenize_workers must be 0 or more, got -1"),
    ],
)
def test_scoring_options_out_of_range_are_one_line_as_they_are_built(options, message):
    with pytest.raises(UserInputError, match=message) as error:
        JobSpec(inputs=("a.txt",), scoring=ScoringOptions(**options))
    assert "\n" not in str(error.value)


def test_a_spec_without_a_rule_scores_every_row_and_a_filter_engine_refuses_it():
    assert JobSpec(inputs=("a.txt",)).filters is False
    assert FilterOptions().plan().rule is None
    with pytest.raises(UserInputError, match="exactly one of threshold, top_fraction or top_k"):
        FilterOptions().filter_plan()
    assert FilterOptions(top_k=3).filter_plan().rule == KeepRule(top_k=3)


def test_the_caption_column_is_the_formats_unless_given():
    assert FilterOptions(threshold=0.5).plan(input_format="jsonl").column == "caption"
    gbc = FilterOptions(threshold=0.5, level="node").plan(input_format="gbc")
    assert (gbc.column, gbc.node_columns) != ("caption", ())
    assert FilterOptions(threshold=0.5).plan(input_format="gbc").node_columns == ()  # aligned lists: nodes only
    assert FilterOptions(threshold=0.5, column="TEXT").plan(input_format="gbc").column == "TEXT"


def _rows(count: int) -> list[dict]:
    captions = ["a red car on a street", "freedom and justice", "two cats on a sofa", "", "a dog on a beach"]
    return [{"uid": index, "caption": captions[index % 5] + f" {index}" * (index % 3)} for index in range(count)]


def test_a_spec_built_in_python_writes_what_the_same_flags_write(tmp_path, capsys):
    source = tmp_path / "pool.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in _rows(40)), encoding="utf-8")
    flags = ["filter", "--model", "lite", "--input", str(source), "--top-fraction", "0.3", "--output"]
    assert main([*flags, str(tmp_path / "cli.jsonl")]) == 0
    spec = JobSpec(
        inputs=(str(source),),
        output=str(tmp_path / "python.jsonl"),
        keep=FilterOptions(top_fraction=0.3),
        scoring=ScoringOptions("lite"),
    )
    result = run_job(spec)
    assert (tmp_path / "python.jsonl").read_bytes() == (tmp_path / "cli.jsonl").read_bytes()
    kept_lines = (tmp_path / "python.jsonl").read_text(encoding="utf-8").splitlines()
    assert (result.rows, result.kept) == (40, len(kept_lines)) and 0 < len(kept_lines) < 40

    shards = tmp_path / "shards"
    shards.mkdir()
    for part in range(2):
        rows = _rows(40)[part * 20 : (part + 1) * 20]
        (shards / f"part-{part}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    pattern = str(shards / "*.jsonl")
    assert main(["filter", "--model", "lite", "-i", pattern, "--top-k", "7", "--output-dir", str(tmp_path / "a")]) == 0
    summary = run_job(
        JobSpec(inputs=(pattern,), output_dir=str(tmp_path / "b"), keep=FilterOptions(top_k=7), scoring=spec.scoring)
    )
    assert summary["kept"] == 7
    for part in range(2):
        name = f"part-{part}.jsonl"
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    capsys.readouterr()
