"""The ``icc`` command line: formats, rules, summaries and one-line errors."""

import csv
import json
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from modeling_icc import LiteScorer, load_scorer
from modeling_icc.cli.main import main

CAPTIONS = ["a man with a white shirt", "a great method of quantifying concreteness", "", "a red car on a street"]


def run_cli(*args: str) -> int:
    return main([str(arg) for arg in args])


def _score_stdin_with_the_console_command(data: bytes) -> list[str]:
    """The lines ``python -m modeling_icc score --model lite --input -`` prints for ``data`` on stdin."""
    command = [sys.executable, "-m", "modeling_icc", "score", "--model", "lite", "--input", "-"]
    return subprocess.run(command, input=data, capture_output=True, check=True).stdout.decode().splitlines()


def test_score_text_arguments_prints_tsv(capsys):
    assert run_cli("score", "--model", "lite", *CAPTIONS[:2]) == 0
    rows = list(csv.DictReader(capsys.readouterr().out.splitlines(), delimiter="\t"))
    assert [row["caption"] for row in rows] == CAPTIONS[:2]
    assert float(rows[0]["icc_score"]) > float(rows[1]["icc_score"])
    assert {row["icc_model"] for row in rows} == {"lite"}


def test_stdout_carries_the_documented_columns():
    """Text on stdin written to stdout (``> scored.tsv``): a header, every column, icc_score, icc_model and
    icc_language."""
    lines = _score_stdin_with_the_console_command(b"a red car\na dog\n")
    assert lines[0] == "caption\ticc_score\ticc_model\ticc_language"
    rows = list(csv.DictReader(lines, delimiter="\t"))
    assert [row["caption"] for row in rows] == ["a red car", "a dog"]
    assert [row["icc_model"] for row in rows] == ["lite", "lite"]
    expected = LiteScorer().score(["a red car", "a dog"])
    np.testing.assert_allclose([float(row["icc_score"]) for row in rows], expected, atol=1e-6)


def test_txt_output_only_when_named(tmp_path):
    """``.txt`` output (score TAB caption) is written when asked for; it is the one format without icc_model."""
    source = tmp_path / "in.txt"
    source.write_text("a red car\n", encoding="utf-8")
    assert run_cli("score", "--model", "lite", "-i", source, "-o", tmp_path / "out.txt") == 0
    score, caption = (tmp_path / "out.txt").read_text(encoding="utf-8").rstrip("\n").split("\t")
    assert caption == "a red car" and float(score) == pytest.approx(float(LiteScorer().score([caption])[0]), abs=1e-6)


def test_txt_to_jsonl_keeps_order_and_records_model(tmp_path, capsys):
    source = tmp_path / "captions.txt"
    source.write_text("\n".join(CAPTIONS) + "\n", encoding="utf-8")
    out = tmp_path / "scored.jsonl"
    assert run_cli("score", "--model", "lite", "--input", source, "--output", out) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["caption"] for row in rows] == CAPTIONS
    assert rows[2]["icc_score"] is None
    assert all(row["icc_model"] == "lite" for row in rows)
    expected = LiteScorer().score(CAPTIONS)
    np.testing.assert_allclose(
        [r["icc_score"] for r in rows if r["icc_score"] is not None], expected[~np.isnan(expected)], atol=1e-6
    )
    assert "NaN (blank or non-text captions): 1" in capsys.readouterr().err


def test_csv_round_trip_keeps_other_columns(tmp_path):
    source = tmp_path / "in.csv"
    with source.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "text", "url"])
        for i, caption in enumerate(CAPTIONS):
            writer.writerow([f"{i:03d}", caption, f"http://x/{i}, with comma"])
    out = tmp_path / "out.csv"
    assert run_cli("score", "--model", "lite", "-i", source, "--column", "text", "-o", out) == 0
    with out.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["id"] for row in rows] == ["000", "001", "002", "003"]
    assert rows[1]["url"] == "http://x/1, with comma"
    assert rows[2]["icc_score"] == "" and float(rows[0]["icc_score"]) > float(rows[1]["icc_score"])


def test_tsv_and_jsonl_with_null_captions(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    records = [{"uid": "a", "caption": "a dog"}, {"uid": "b", "caption": None}, {"uid": "c", "caption": 7}]
    source.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    out = tmp_path / "out.tsv"
    assert run_cli("score", "--model", "lite", "-i", source, "-o", out) == 0
    with out.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert [row["uid"] for row in rows] == ["a", "b", "c"]
    assert rows[1]["icc_score"] == "" and rows[2]["icc_score"] == ""
    assert "of which non-text: 2" in capsys.readouterr().err


def test_parquet_round_trip_keeps_schema(tmp_path):
    source = tmp_path / "in.parquet"
    table = pa.table({"key": pa.array([10, 11, 12, 13], pa.int64()), "caption": CAPTIONS})
    pq.write_table(table, source)
    out = tmp_path / "out.parquet"
    assert run_cli("score", "--model", "lite", "-i", source, "-o", out) == 0
    result = pq.read_table(out)
    assert result.column("key").type == pa.int64()
    assert result.column("key").to_pylist() == [10, 11, 12, 13]
    assert result.column("icc_score").type == pa.float32()
    assert result.column("icc_model").to_pylist() == ["lite"] * 4


def test_filter_threshold_and_top_k(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(json.dumps({"i": i, "caption": c}) for i, c in enumerate(CAPTIONS)) + "\n")
    out = tmp_path / "kept.jsonl"
    assert run_cli("filter", "--model", "lite", "-i", source, "-o", out, "--top-k", "2") == 0
    kept = [json.loads(line) for line in out.read_text().splitlines()]
    scores = LiteScorer().score(CAPTIONS)
    top2 = sorted(np.argsort(-np.nan_to_num(scores, nan=-1))[:2])
    assert [row["i"] for row in kept] == list(top2)
    err = capsys.readouterr().err
    assert "rows in: 4, kept: 2, dropped: 2" in err and "quantiles" in err
    assert run_cli("filter", "--model", "lite", "-i", source, "-o", out, "--threshold", "0.5") == 0
    kept = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(row["icc_score"] >= 0.5 for row in kept)


def test_non_utf8_lines_are_replaced_and_counted(tmp_path, capsys):
    source = tmp_path / "bad.txt"
    source.write_bytes(b"a red car\nbad \xff\xfe bytes\na dog\n")
    out = tmp_path / "out.jsonl"
    assert run_cli("score", "--model", "lite", "-i", source, "-o", out) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 3 and "\ufffd" in rows[1]["caption"]
    assert "lines with invalid text (non-UTF-8 bytes or lone surrogates), replaced with U+FFFD: 1" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["score", "--model", "lite", "-i", "missing.txt"], "input file not found"),
        (["score", "--model", "lite", "-i", "{csv}", "--column", "nope"], "no column 'nope'; available columns: text"),
        (["score", "--model", "lite", "-i", "{xyz}"], "cannot tell the format"),
        (["score", "--model", "lite", "-i", "{bad_jsonl}"], "line 2 is not valid JSON"),
        (["score", "--model", "lite", "-i", "{bad_parquet}"], "not a readable Parquet file"),
        (["filter", "--model", "lite", "-i", "{csv}", "--column", "text", "--top-fraction", "2"], "top_fraction"),
        (["score", "--model", "/no/such/model/dir", "a dog"], "Could not load the ICC model"),
    ],
)
def test_user_errors_are_one_line_without_traceback(tmp_path, capsys, args, message):
    files = {
        "csv": tmp_path / "t.csv",
        "xyz": tmp_path / "t.xyz",
        "bad_jsonl": tmp_path / "t.jsonl",
        "bad_parquet": tmp_path / "t.parquet",
    }
    files["csv"].write_text("text\na dog\n")
    files["xyz"].write_text("a dog\n")
    files["bad_jsonl"].write_text('{"caption": "ok"}\n{broken\n')
    files["bad_parquet"].write_bytes(b"PAR1 not really")
    args = [arg.format(**files) for arg in args]
    assert run_cli(*args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_without_model_the_command_scores_with_mini_offline(capsys):
    assert run_cli("score", *CAPTIONS[:2]) == 0  # no --model: mini, shipped in the package (the Hub is off here)
    captured = capsys.readouterr()
    rows = list(csv.DictReader(captured.out.splitlines(), delimiter="\t"))
    assert [row["icc_model"] for row in rows] == ["mini", "mini"]
    expected = load_scorer("mini", cache=True).score(CAPTIONS[:2])
    np.testing.assert_allclose([float(row["icc_score"]) for row in rows], expected, atol=1e-6)
    assert "Could not load" not in captured.err and "notice" not in captured.err


def test_an_unavailable_model_is_an_error_naming_the_offline_options(capsys):
    assert run_cli("score", "--model", "moranyanuka/icc", "a dog on a beach") == 2  # not in the cache here
    captured = capsys.readouterr()
    assert captured.out == "" and "icc: error: Could not load the ICC model 'moranyanuka/icc'" in captured.err
    assert "`icc score --model mini`" in captured.err and "`--fallback mini`" in captured.err


def test_fallback_is_explicit_reported_and_recorded(capsys, tmp_path):
    source, out = tmp_path / "captions.txt", tmp_path / "scored.jsonl"
    source.write_text("a dog on a beach\n", encoding="utf-8")
    assert run_cli("score", "--model", "moranyanuka/icc", "--fallback", "lite", "--input", source, "--output", out) == 0
    captured = capsys.readouterr()
    assert "icc: notice: the ICC model 'moranyanuka/icc' cannot be loaded here" in captured.err
    assert "scoring with the fallback model 'lite' instead" in captured.err
    assert json.loads(out.read_text())["icc_model"] == "lite"


def test_console_script_reads_stdin_and_helps():
    lines = _score_stdin_with_the_console_command(b"a red car\n\na dog\n")
    # a header, then the blank caption's NaN and its language (none) as empty cells
    assert len(lines) == 4 and lines[2] == "\t\tlite\t"
    for command in ("score", "filter"):
        helptext = subprocess.run(
            [sys.executable, "-m", "modeling_icc", command, "--help"], capture_output=True, text=True, check=True
        ).stdout
        assert "examples:" in helptext
