"""Every piece of advice a job prints leads to a run that finishes (issue 48, items 12, 13 and their siblings).

Each test meets a refusal as a user would, checks that it is one line naming what differs in the terms the
user typed, then does what the line says (the flags it names, the file it names, a new --output-dir, the
directory deleted) and checks that the run then finishes. Before, "changed since its scores were saved;
delete ...raw.npz" led to "holds a run with different inputs; resume with the same command", which led back
to itself; a resume with another model said "this run would use dtype None, device None".
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_run import icc, jsonl_shards, one_line_error, written
from test_object_store import endpoint, s3  # noqa: F401 (the S3 server and a bucket on it)

from modeling_icc.curation.engines import passes

REPO_ROOT = Path(__file__).resolve().parents[1]
ROWS = "".join(
    f'{{"caption": "a dog number {i} on a red sofa", "alt": "idea {i}", "clip": {i / 10}}}\n' for i in range(8)
)


@pytest.fixture
def shards(tmp_path) -> Path:
    return jsonl_shards(tmp_path / "in", ROWS, 3)


def advice(err: str) -> str:
    """The flags a refusal says to resume with (``resume with FLAGS, or use a new --output-dir``)."""
    found = re.search(r"resume with (.*?), or use a new --output-dir", err)
    assert found, err
    return found.group(1)


def following(subcommand: str, base: list, flags: str) -> list:
    """The command that does what the advice ``flags`` say: ``icc COMMAND`` picks the subcommand, ``no --flag``
    leaves the flag out, every other word is passed as it is."""
    words = shlex.split(flags)
    if words[:1] == ["icc"]:
        subcommand, words = words[1], words[2:]
    return [subcommand, *base, *_without_negated(words)]


def _without_negated(words: list[str]) -> list[str]:
    """``words`` without each ``no --flag`` pair."""
    out, index = [], 0
    while index < len(words):
        if words[index] == "no":
            index += 2
            continue
        out.append(words[index])
        index += 1
    return out


# --- a sharded job's recorded settings -------------------------------------------------------------------------

#: What differs between the first run and the resumed one: the subcommands, flags both give, each one's own flags,
#: and what the refusal says.
CHANGES = {
    "rule": ("filter", "filter", [], ["--threshold", "0.5"], ["--top-k", "3"], "--threshold 0.5 (this run: --top-k 3)"),
    "command": (
        "filter",
        "score",
        [],
        ["--top-fraction", "0.5"],
        [],
        "icc filter --top-fraction 0.5 (this run: icc score)",
    ),
    "column": ("score", "score", [], ["--column", "alt"], [], "--column alt (this run: --column caption)"),
    "format": ("score", "score", [], [], ["--format", "jsonl"], "no --format (this run: --format jsonl)"),
    "output format": ("score", "score", [], ["--output-format", "csv"], [], "--output-format csv (this run: no"),
    "other column's rule": (
        "filter",
        "filter",
        ["--threshold", "0", "--and-column", "clip"],
        ["--and-threshold", "0.2"],
        ["--and-top-k", "3"],
        "--and-threshold 0.2 (this run: --and-top-k 3)",
    ),
}


@pytest.mark.parametrize("change", CHANGES)
def test_a_resume_with_other_flags_names_them_and_resuming_with_the_named_flags_finishes(
    tmp_path, shards, capsys, change
):
    first_command, second_command, common, first, second, said = CHANGES[change]
    out = tmp_path / "out"
    base = ["--model", "lite", "-i", shards / "*.jsonl", "--output-dir", out, "--no-progress", *common]
    assert icc(first_command, *base, *first) == 0
    (out / "s1.stats.json").unlink()  # as if killed before finishing that shard
    capsys.readouterr()
    assert icc(second_command, *base, *second) == 2
    err = capsys.readouterr().err
    one_line_error(err, f"{out} holds a run with {said}")
    assert "None" not in err
    assert icc(*following(second_command, base, advice(err))) == 0
    summary = json.loads((out / "_summary.json").read_text())
    assert (summary["rows"], summary["shards_done_before"], summary["shards_this_run"]) == (24, 2, 1)


def test_a_finished_mini_run_resumed_with_lite_names_the_model(tmp_path, shards, capsys):
    """Item 13: the model is named, in the terms typed, and not the dtype and device that follow from it."""
    out = tmp_path / "out"
    base = ["-i", shards / "*.jsonl", "--output-dir", out, "--no-progress"]
    assert icc("score", "--model", "mini", *base) == 0
    capsys.readouterr()
    assert icc("score", "--model", "lite", *base) == 2
    err = capsys.readouterr().err
    one_line_error(err, f"{out} holds a run with --model mini (this run: --model lite): resume with --model mini")
    assert "dtype" not in err and "device" not in err
    assert icc(*following("score", base, advice(err))) == 0


def test_a_resume_with_other_inputs_names_them_and_resuming_with_the_recorded_ones_finishes(tmp_path, shards, capsys):
    out = tmp_path / "out"
    first = ["score", "--model", "lite", "-i", shards / "s[01].jsonl", "--output-dir", out]
    assert icc(*first) == 0
    capsys.readouterr()
    assert icc("score", "--model", "lite", "-i", shards / "*.jsonl", "--output-dir", out) == 2
    err = capsys.readouterr().err
    one_line_error(err, f"{out} holds a run with other inputs (s2.jsonl not in it): resume with the --input it")
    assert [item["path"] for item in json.loads((out / "_run.json").read_text())["inputs"]] == [
        str(shards / "s0.jsonl"),
        str(shards / "s1.jsonl"),
    ]  # where the advice says the files are listed
    assert icc(*first) == 0


@pytest.mark.parametrize("follow", ["new output dir", "delete it"])
def test_an_input_changed_since_the_run_began_gets_advice_that_starts_over(tmp_path, shards, capsys, follow):
    out = tmp_path / "out"
    command = ["filter", "--model", "lite", "-i", shards / "*.jsonl", "--output-dir", out, "--top-k", "4"]
    assert icc(*command) == 0
    written(shards / "s0.jsonl", ROWS.replace("sofa", "couch"))
    refused(
        capsys,
        command,
        f"{out} holds a run with other inputs (s0.jsonl changed since); its outputs come from the inputs as they "
        f"were: use a new --output-dir, or delete {out} to start over",
    )
    assert icc(*_followed(command, out, tmp_path, follow)) == 0


def test_saved_work_without_its_record_gets_advice_that_starts_over(tmp_path, shards, capsys):
    out = tmp_path / "out"
    command = ["score", "--model", "lite", "-i", shards / "*.jsonl", "--output-dir", out]
    assert icc(*command) == 0
    (out / "_run.json").unlink()
    refused(
        capsys,
        command,
        f"{out} holds saved work but no _run.json, so its settings are unknown; use a new --output-dir, or "
        f"delete {out} to start over",
    )
    assert icc(*_followed(command, out, tmp_path, "delete it")) == 0


def refused(capsys, command: list, message: str) -> None:
    """``command`` refused with exit code 2 and the one line ``message``."""
    capsys.readouterr()
    assert icc(*command) == 2
    one_line_error(capsys.readouterr().err, message)


def _followed(command: list, out: Path, tmp_path: Path, follow: str) -> list:
    if follow == "delete it":
        shutil.rmtree(out)
        return command
    return [tmp_path / "new" if part == out else part for part in command]


# --- an input rewritten between the passes of a ranking job (item 12) -----------------------------------------


def rewrite_between_the_passes(monkeypatch, rewrite) -> None:
    """``rewrite()`` runs once, after the scoring pass and before the writing pass."""
    fit_cuts = passes.fit_cuts
    done = []

    def then_fit(*args, **kwargs):
        if not done:
            rewrite()
            done.append(True)
        return fit_cuts(*args, **kwargs)

    monkeypatch.setattr(passes, "fit_cuts", then_fit)


@pytest.mark.parametrize("follow", ["new output dir", "delete it"])
def test_a_shard_rewritten_between_the_passes_gets_advice_that_finishes(tmp_path, shards, capsys, monkeypatch, follow):
    out = tmp_path / "out"
    command = ["filter", "--model", "lite", "-i", shards / "*.jsonl", "--output-dir", out, "--top-k", "4"]
    with monkeypatch.context() as patch:
        rewrite_between_the_passes(patch, lambda: written(shards / "s0.jsonl", ROWS.replace("dog", "cat")))
        assert icc(*command) == 2
    err = capsys.readouterr().err
    one_line_error(err, f"{shards / 's0.jsonl'} changed since its scores were saved")
    assert f"use a new --output-dir, or delete {out} to start over" in err
    assert icc(*_followed(command, out, tmp_path, follow)) == 0


def test_a_remote_shard_rewritten_between_the_passes_gets_advice_that_finishes(capsys, monkeypatch):
    """The same on an object store (``memory://``: fsspec's in-process store; tests/test_object_store.py runs
    the object-store paths against a real S3 server)."""
    fs = fsspec.filesystem("memory")
    for index in range(2):
        fs.pipe(f"/advice/in/s{index}.jsonl", ROWS.encode())
    out = "memory://advice/out"
    command = ["filter", "--model", "lite", "-i", "memory://advice/in/*.jsonl", "--output-dir", out, "--top-k", "4"]
    try:
        with monkeypatch.context() as patch:
            rewrite_between_the_passes(
                patch, lambda: fs.pipe("/advice/in/s0.jsonl", ROWS.replace("dog", "cat").encode())
            )
            assert icc(*command) == 2
        err = capsys.readouterr().err
        one_line_error(err, "changed since its scores were saved")
        assert f"delete {out} to start over" in err
        fs.rm("/advice/out", recursive=True)  # the advice: delete it
        assert icc(*command) == 0
    finally:
        fs.rm("/advice", recursive=True)


def test_an_s3_shard_rewritten_between_the_passes_gets_advice_that_finishes(s3, capsys, monkeypatch):  # noqa: F811
    """On S3 (moto's server, tests/test_object_store.py's fixtures): the advice deletes the prefix."""
    fs, bucket = s3
    for index in range(2):
        fs.pipe(f"{bucket}/in/s{index}.jsonl", ROWS.encode())
    out = f"s3://{bucket}/out"
    command = ["filter", "--model", "lite", "-i", f"s3://{bucket}/in/*.jsonl", "--output-dir", out, "--top-k", "4"]
    with monkeypatch.context() as patch:
        rewrite_between_the_passes(patch, lambda: fs.pipe(f"{bucket}/in/s0.jsonl", ROWS.replace("dog", "cat").encode()))
        assert icc(*command) == 2
    err = capsys.readouterr().err
    one_line_error(err, "changed since its scores were saved")
    assert f"delete {out} to start over" in err
    fs.rm(f"{bucket}/out", recursive=True)  # the advice: delete it
    fs.invalidate_cache()
    assert icc(*command) == 0
    fs.invalidate_cache()
    assert fs.exists(f"{bucket}/out/_summary.json")


def test_a_single_file_rewritten_between_the_passes_gets_advice_that_finishes(tmp_path, capsys, monkeypatch):
    pool = written(tmp_path / "pool.jsonl", ROWS)
    command = ["filter", "--model", "lite", "-i", pool, "-o", tmp_path / "kept.jsonl", "--top-k", "3"]
    with monkeypatch.context() as patch:
        rewrite_between_the_passes(patch, lambda: written(pool, ROWS.replace("dog", "cat")))
        assert icc(*command) == 2
    one_line_error(capsys.readouterr().err, "run the command again once nothing rewrites it")
    assert icc(*command) == 0


# --- the other advice a job prints -------------------------------------------------------------------------------


def test_a_directory_as_input_gets_a_glob_that_matches_its_shards(tmp_path, shards, capsys):
    assert icc("score", "--model", "lite", "-i", shards, "--output-dir", tmp_path / "out") == 2
    err = capsys.readouterr().err
    one_line_error(err, f"{shards} is a directory; pass its shards, e.g. '{shards}/*.jsonl'")
    glob = re.search(r"e\.g\. '(.*)'", err).group(1)
    assert icc("score", "--model", "lite", "-i", glob, "--output-dir", tmp_path / "out") == 0


def test_two_shards_of_one_name_are_run_into_separate_output_dirs(tmp_path, capsys):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        written(tmp_path / folder / "x.jsonl", ROWS)
    assert icc("score", "--model", "lite", "-i", tmp_path / "*" / "x.jsonl", "--output-dir", tmp_path / "out") == 2
    one_line_error(capsys.readouterr().err, "would both write x.*; run them into separate --output-dir")
    for folder in ("a", "b"):
        assert (
            icc(
                "score",
                "--model",
                "lite",
                "-i",
                tmp_path / folder / "x.jsonl",
                "--output-dir",
                tmp_path / f"out-{folder}",
            )
            == 0
        )


def test_an_output_dir_over_its_inputs_is_moved(tmp_path, shards, capsys):
    assert icc("score", "--model", "lite", "-i", shards / "*.jsonl", "--output-dir", shards) == 2
    one_line_error(capsys.readouterr().err, "would overwrite an input shard; choose another --output-dir")
    assert icc("score", "--model", "lite", "-i", shards / "*.jsonl", "--output-dir", tmp_path / "another") == 0


def test_memory_inputs_with_workers_run_with_one(capsys):
    fs = fsspec.filesystem("memory")
    for index in range(2):
        fs.pipe(f"/workers/in/s{index}.jsonl", ROWS.encode())
    command = ["score", "--model", "lite", "-i", "memory://workers/in/*.jsonl", "--output-dir", "memory://workers/out"]
    try:
        assert icc(*command, "--workers", "2") == 2
        one_line_error(capsys.readouterr().err, "use --workers 1")
        assert icc(*command, "--workers", "1") == 0
    finally:
        fs.rm("/workers", recursive=True)


def test_parquet_to_stdout_is_written_to_a_file_or_in_another_format(tmp_path, capsys):
    pool = written(tmp_path / "pool.jsonl", ROWS)
    assert icc("score", "--model", "lite", "-i", pool, "--output-format", "parquet") == 2
    one_line_error(capsys.readouterr().err, "parquet output needs a file (--output FILE), not stdout; or pass another")
    assert (
        icc("score", "--model", "lite", "-i", pool, "--output-format", "parquet", "--output", tmp_path / "o.parquet")
        == 0
    )
    assert icc("score", "--model", "lite", "-i", pool, "--output-format", "jsonl") == 0


def test_a_compressed_parquet_output_name_loses_its_compression_extension(tmp_path, capsys):
    pool = written(tmp_path / "pool.jsonl", ROWS)
    assert icc("score", "--model", "lite", "-i", pool, "-o", tmp_path / "o.parquet.gz") == 2
    err = capsys.readouterr().err
    one_line_error(err, f"drop the .gz from {tmp_path / 'o.parquet.gz'}")
    assert icc("score", "--model", "lite", "-i", pool, "-o", tmp_path / "o.parquet") == 0


@pytest.mark.parametrize("name", ["pool.parquet.gz", "pool.parquet"])
def test_a_compressed_parquet_input_is_decompressed_by_the_command_given(tmp_path, capsys, name):
    import gzip
    import io
    import subprocess

    buffer = io.BytesIO()
    pq.write_table(pa.table({"caption": ["a red car", "an idea"]}), buffer)
    packed = tmp_path / name
    packed.write_bytes(gzip.compress(buffer.getvalue()))
    assert icc("score", "--model", "lite", "-i", packed) == 2
    err = capsys.readouterr().err
    one_line_error(err, "which is read by seeking: decompress it first (")
    command, target = re.search(r"decompress it first \((.*), then pass (\S+)\)", err).groups()
    subprocess.run(command, shell=True, check=True, cwd=tmp_path)
    assert icc("score", "--model", "lite", "-i", tmp_path / target, "-o", tmp_path / "scores.jsonl") == 0


def test_a_binary_file_read_as_text_is_read_with_the_right_format(tmp_path, capsys):
    pq.write_table(pa.table({"caption": ["a red car"]}), tmp_path / "pool.parquet")
    assert icc("score", "--model", "lite", "-i", tmp_path / "pool.parquet", "--format", "csv") == 2
    one_line_error(capsys.readouterr().err, "pass the right --format (or none, to use the extension)")
    assert icc("score", "--model", "lite", "-i", tmp_path / "pool.parquet", "-o", tmp_path / "o.jsonl") == 0  # none
    shutil.copy(tmp_path / "pool.parquet", tmp_path / "pool.txt")
    capsys.readouterr()
    assert icc("score", "--model", "lite", "-i", tmp_path / "pool.txt") == 2
    one_line_error(capsys.readouterr().err, "is a Parquet file, not txt text; pass the right --format")
    assert (
        icc("score", "--model", "lite", "-i", tmp_path / "pool.txt", "--format", "parquet", "-o", tmp_path / "o.jsonl")
        == 0
    )


def test_an_output_extension_without_a_format_gets_one(tmp_path, capsys):
    pool = written(tmp_path / "pool.jsonl", ROWS)
    assert icc("score", "--model", "lite", "-i", pool, "-o", tmp_path / "o.xlsx") == 2
    one_line_error(capsys.readouterr().err, "or pass --output-format")
    assert icc("score", "--model", "lite", "-i", pool, "-o", tmp_path / "o.xlsx", "--output-format", "jsonl") == 0


def test_mixed_types_for_parquet_are_written_as_jsonl(tmp_path, capsys):
    pool = written(tmp_path / "pool.jsonl", '{"caption": "a dog", "x": 1}\n{"caption": "a cat", "x": "one"}\n')
    assert icc("score", "--model", "lite", "-i", pool, "-o", tmp_path / "o.parquet") == 2
    one_line_error(capsys.readouterr().err, "write JSONL or CSV output instead")
    assert icc("score", "--model", "lite", "-i", pool, "-o", tmp_path / "o.jsonl") == 0


def test_a_caption_column_of_numbers_is_named_again(tmp_path, capsys):
    pq.write_table(pa.table({"text": [1, 2], "caption": ["a dog", "a cat"]}), tmp_path / "pool.parquet")
    assert icc("score", "--model", "lite", "-i", tmp_path / "pool.parquet", "--column", "text") == 2
    one_line_error(capsys.readouterr().err, "name the caption column (--column, column=)")
    assert (
        icc(
            "score", "--model", "lite", "-i", tmp_path / "pool.parquet", "--column", "caption", "-o", tmp_path / "o.csv"
        )
        == 0
    )


def test_options_that_need_another_one_get_it(tmp_path, shards, capsys):
    pool = shards / "s0.jsonl"
    assert icc("score", "--model", "lite", "-i", pool, "--workers", "2") == 2
    one_line_error(capsys.readouterr().err, "--workers applies to sharded jobs; add --output-dir DIR")
    assert icc("score", "--model", "lite", "-i", pool, "--workers", "2", "--output-dir", tmp_path / "out") == 0
    capsys.readouterr()
    assert icc("filter", "--model", "lite", "-i", pool, "--threshold", "0.5", "--uid-column", "alt") == 2
    one_line_error(capsys.readouterr().err, "add it or drop --uid-column")
    assert icc("filter", "--model", "lite", "-i", pool, "--threshold", "0.5") == 0


def test_an_output_that_is_the_input_is_written_to_another_file(tmp_path, capsys):
    pool = written(tmp_path / "pool.jsonl", ROWS)
    assert icc("score", "--model", "lite", "-i", pool, "-o", pool) == 2
    one_line_error(capsys.readouterr().err, "is the input file; write to another file")
    assert icc("score", "--model", "lite", "-i", pool, "-o", tmp_path / "other.jsonl") == 0


def test_minis_graph_cache_that_cannot_be_written_is_skipped_as_advised(tmp_path, monkeypatch, capsys):
    """``set ICC_CACHE_DIR to a writable folder, or ICC_MINI_RUNTIME=torch``: the second, which builds nothing.
    The cache holds the graphs of mini with other heads (a mini repository); the shipped mini needs none."""
    from modeling_icc.models.mini import onnx_graph
    from modeling_icc.scoring import hardware

    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv(onnx_graph.CACHE_DIR_ENV, str(tmp_path / "file" / "icc"))
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: False)
    monkeypatch.setattr(hardware, "gpu_may_be_present", lambda: False)
    assert icc("score", "--model", "mini", "a dog") == 0
    repository = str(REPO_ROOT / "hub_cards" / "icc-mini")
    assert icc("score", "--model", repository, "a dog") == 2
    assert "or ICC_MINI_RUNTIME=torch to score on torch" in capsys.readouterr().err
    monkeypatch.setenv(onnx_graph.RUNTIME_ENV, "torch")
    assert icc("score", "--model", repository, "a dog") == 0
    assert os.environ[onnx_graph.RUNTIME_ENV] == "torch"
