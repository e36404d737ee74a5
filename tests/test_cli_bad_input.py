"""Bad input to ``icc score|filter``: every case is scored and counted, or stops with one line (exit 2).

Each test reproduces a failure of the bad-input audit (issue 14): tracebacks, silently
merged or split rows, garbage cells and temporary files left behind.
"""

import base64
import csv
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_run import icc, icc_process, one_line_error, written

from modeling_icc import LiteScorer

INVALID_TEXT = "with invalid text (non-UTF-8 bytes or lone surrogates), replaced with U+FFFD"


def test_non_utf8_argument_is_replaced_scored_and_counted():
    result = icc_process("score", "--model", "lite", b"caf\xe9 dog", b"a dog", text=False)
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert "Traceback" not in err
    rows = list(csv.DictReader(result.stdout.decode("utf-8").splitlines(), delimiter="\t"))
    assert [row["caption"] for row in rows] == ["caf\ufffd dog", "a dog"]
    assert float(rows[0]["icc_score"]) == pytest.approx(float(LiteScorer().score(["caf\ufffd dog"])[0]), abs=1e-6)
    assert f"arguments {INVALID_TEXT}: 1" in err


@pytest.fixture
def surrogate_jsonl(tmp_path) -> Path:
    lines = '{"caption": "a red car"}\n{"caption": "a dog \\ud800"}\n{"caption": "a cat \\ud83d\\ude00"}\n'
    return written(tmp_path / "lone.jsonl", lines)


def test_lone_surrogate_in_jsonl_is_replaced_and_counted(surrogate_jsonl, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert icc("score", "--model", "lite", "-i", surrogate_jsonl, "-o", out) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [row["caption"] for row in rows] == ["a red car", "a dog \ufffd", "a cat \U0001f600"]
    assert all(row["icc_score"] is not None for row in rows)
    assert f"lines {INVALID_TEXT}: 1" in capsys.readouterr().err
    kept = tmp_path / "kept.csv"
    assert icc("filter", "--model", "lite", "-i", surrogate_jsonl, "-o", kept, "--top-k", "3") == 0
    with kept.open(encoding="utf-8") as handle:
        assert [row["caption"] for row in csv.DictReader(handle)] == ["a red car", "a dog \ufffd", "a cat \U0001f600"]


def test_lone_surrogate_in_a_sharded_job(surrogate_jsonl, tmp_path):
    assert icc("score", "--model", "lite", "-i", surrogate_jsonl, "--output-dir", tmp_path / "scored") == 0
    stats = json.loads((tmp_path / "scored" / "lone.stats.json").read_text())
    assert stats["rows"] == 3 and stats["decode_errors"] == 1
    rows = (tmp_path / "scored" / "lone.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(rows[1])["caption"] == "a dog \ufffd"


def test_a_directory_is_named_as_such(tmp_path, capsys):
    (tmp_path / "d.txt").mkdir()
    assert icc("score", "--model", "lite", "--input", tmp_path / "d.txt") == 2
    one_line_error(capsys.readouterr().err, "is a directory")


def test_line_breaks_in_captions_never_split_txt_output(tmp_path, capsys):
    source = tmp_path / "in.csv"
    with source.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(
            [["id", "caption"], ["1", "a dog\non a beach"], ["2", "a cat\r\n"], ["3", "a car"]]
        )
    out = tmp_path / "out.txt"
    assert icc("score", "--model", "lite", "-i", source, "-o", out) == 0
    lines = out.read_bytes().decode("utf-8").split("\n")
    assert [line.split("\t", 1)[1] for line in lines[:3]] == ["a dog\\non a beach", "a cat\\r\\n", "a car"]
    assert lines[3:] == [""]
    assert "captions with line breaks, written as \\n in .txt output: 2" in capsys.readouterr().err


def test_txt_input_splits_rows_at_newlines_only(tmp_path):
    captions = ["a\fb", "c\x1cd\x1de\x1ef", "caf\x85x", "a\u2028line separator", "v\vtab", "\u2029para"]
    source = tmp_path / "in.txt"
    source.write_bytes(("\n".join(captions[:3]) + "\r\n" + "\n".join(captions[3:]) + "\n").encode("utf-8"))
    out = tmp_path / "out.jsonl"
    assert icc("score", "--model", "lite", "-i", source, "-o", out) == 0
    rows = [json.loads(line) for line in out.read_bytes().decode("utf-8").split("\n") if line]
    assert [row["caption"] for row in rows] == captions


@pytest.mark.parametrize("position", [300, 8_000, 100_000])
def test_a_nul_byte_is_a_caption_character_wherever_it_is(tmp_path, capsys, position):
    lines = [f"a red car number {index}" for index in range(6_000)]
    data = bytearray("\n".join(lines).encode() + b"\n")
    data[position] = 0  # a NUL inside a caption
    end = data.index(b"\n", position)
    data[end + 1 : end + 1] = b"\x00\n"  # and a caption that is only a NUL
    source = tmp_path / "in.txt"
    source.write_bytes(bytes(data))
    out = tmp_path / "out.jsonl"
    assert icc("score", "--model", "lite", "-i", source, "-o", out) == 0, capsys.readouterr().err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == len(lines) + 1
    with_nul = [row for row in rows if "\x00" in row["caption"]]
    assert len(with_nul) == 2 and with_nul[1]["caption"] == "\x00"
    assert np.isfinite(with_nul[0]["icc_score"]) and with_nul[1]["icc_score"] is None


@pytest.mark.parametrize(
    ("head", "kind"),
    [(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "a PNG image"), (b"PK\x03\x04\x14\x00", "a zip archive")],
)
def test_binary_files_are_known_by_their_first_bytes(tmp_path, capsys, head, kind):
    source = tmp_path / "in.txt"
    source.write_bytes(head + b"a dog\n" * 10)
    assert icc("score", "--model", "lite", "-i", source) == 2
    one_line_error(capsys.readouterr().err, f"is {kind}, not txt text")


def test_unterminated_csv_quote_stops_with_its_line(tmp_path, capsys):
    lines = ["id,caption"] + [f"{i},caption {i}" for i in range(1, 6)] + ['6,"unterminated caption']
    lines += [f"{i},caption {i}" for i in range(7, 11)]
    source = tmp_path / "in.csv"
    source.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.csv"
    assert icc("score", "--model", "lite", "-i", source, "-o", out) == 2
    one_line_error(capsys.readouterr().err, "line 7: a quoted field opened here is never closed")
    assert not out.exists()
    assert icc("filter", "--model", "lite", "-i", source, "--threshold", "0.1") == 2
    one_line_error(capsys.readouterr().err, "line 7")


def test_csv_row_with_more_fields_than_the_header_is_refused(tmp_path, capsys):
    source = tmp_path / "in.csv"
    source.write_text("id,caption\n1,a dog\n2,a dog, on a beach\n")
    assert icc("score", "--model", "lite", "-i", source) == 2
    one_line_error(capsys.readouterr().err, "line 3 has 3 fields but the header names 2")


def duplicate_columns_parquet(path: Path) -> Path:
    arrays = [pa.array(["an abstract idea"]), pa.array(["a dog on a beach"]), pa.array(["1"])]
    pq.write_table(pa.Table.from_arrays(arrays, names=["caption", "caption", "x"]), path)
    return path


@pytest.mark.parametrize(
    ("name", "write"),
    [
        ("in.csv", lambda path: path.write_text("caption,caption,x\nan abstract idea,a dog on a beach,1\n")),
        ("in.tsv", lambda path: path.write_text("caption\tx\tcaption\nan abstract idea\t1\ta dog\n")),
        ("in.parquet", duplicate_columns_parquet),
    ],
    ids=["csv", "tsv", "parquet"],
)
def test_a_header_naming_a_column_twice_is_refused(tmp_path, capsys, name, write):
    source = tmp_path / name
    write(source)
    for command in (["score"], ["filter", "--threshold", "0.1"]):
        assert icc(*command, "--model", "lite", "-i", source, "-o", tmp_path / "out.jsonl") == 2
        one_line_error(capsys.readouterr().err, f"{source}: the header names the column 'caption' more than once")
        assert not (tmp_path / "out.jsonl").exists()


@pytest.fixture
def binary_parquet(tmp_path) -> Path:
    path = tmp_path / "images.parquet"
    images = [b"\xff\xd8\xff\xe0 jpeg", b"\x00\x01\x02"]
    pq.write_table(pa.table({"caption": ["a dog on a beach", "a red car"], "jpg": images}), path)
    return path


def test_binary_columns_are_base64_in_text_outputs(binary_parquet, tmp_path, capsys):
    images = pq.read_table(binary_parquet).column("jpg").to_pylist()
    out = tmp_path / "out.jsonl"
    assert icc("score", "--model", "lite", "-i", binary_parquet, "-o", out) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [base64.b64decode(row["jpg"]) for row in rows] == images
    assert "binary columns written as base64 text: jpg" in capsys.readouterr().err
    out = tmp_path / "out.csv"
    assert icc("score", "--model", "lite", "-i", binary_parquet, "-o", out) == 0
    with out.open(encoding="utf-8") as handle:
        assert [base64.b64decode(row["jpg"]) for row in csv.DictReader(handle)] == images
    out = tmp_path / "out.parquet"
    assert icc("score", "--model", "lite", "-i", binary_parquet, "-o", out) == 0
    assert pq.read_table(out).column("jpg").to_pylist() == images


def test_parquet_read_as_csv_gives_a_clean_message(binary_parquet, capsys):
    assert icc("score", "--model", "lite", "-i", binary_parquet, "--format", "csv") == 2
    err = capsys.readouterr().err
    one_line_error(err, "is a Parquet file, not csv text")
    assert "PAR1" not in err and "\\x" not in err


def test_datacomp_subset_without_uid_column_fails_before_any_output(tmp_path, capsys):
    source = tmp_path / "pool.jsonl"
    source.write_text('{"caption": "a dog"}\n{"caption": "a red car"}\n')
    out, subset = tmp_path / "kept.jsonl", tmp_path / "subset.npy"
    assert (
        icc("filter", "--model", "lite", "-i", source, "-o", out, "--threshold", "0.5", "--datacomp-subset", subset)
        == 2
    )
    one_line_error(capsys.readouterr().err, "no column 'uid'")
    assert not out.exists() and not subset.exists()
    args = ("-i", source, "-o", out, "--threshold", "0.5", "--uid-column", "caption", "--datacomp-subset")
    assert icc("filter", "--model", "lite", *args, tmp_path / "subset.txt") == 2
    one_line_error(capsys.readouterr().err, "must end in .npy")
    assert not out.exists()
    sharded = ("-i", source, "--output-dir", tmp_path / "kept", "--threshold", "0.5", "--datacomp-subset", subset)
    assert icc("filter", "--model", "lite", *sharded) == 2
    one_line_error(capsys.readouterr().err, "no column 'uid'")
    assert not (tmp_path / "kept" / "pool.jsonl").exists() and not subset.exists()


def _writer_process(out: Path, then: str) -> tuple[Path, subprocess.Popen]:
    """The temporary file of a process inside ``atomic_output(out)`` that then dies or waits (returned too)."""
    before = set(out.parent.glob(f".{out.name}.*.tmp"))
    code = textwrap.dedent(
        f"""
        import os, signal, sys, time
        from modeling_icc.curation.io.tables import atomic_output
        with atomic_output({str(out)!r}) as stream:
            stream.write(b"half a row")
            stream.flush()
            print("ready", flush=True)
            if {then!r} == "die":
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(60)
        """
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "ready" or process.wait() == -signal.SIGKILL
    (temp,) = set(out.parent.glob(f".{out.name}.*.tmp")) - before
    return temp, process


def test_next_run_removes_the_temp_file_of_a_killed_run_and_only_that(tmp_path):
    out = tmp_path / "out.jsonl"
    stale, killed = _writer_process(out, "die")
    assert killed.wait() == -signal.SIGKILL and stale.is_file()
    in_use, running = _writer_process(out, "wait")
    notes = tmp_path / ".out.jsonl.notes.tmp"
    notes.write_text("a user's file")
    try:
        source = tmp_path / "in.txt"
        source.write_text("a dog\n")
        assert icc("score", "--model", "lite", "-i", source, "-o", out) == 0
        assert not stale.exists()
        assert in_use.is_file() and notes.is_file()
        assert len(out.read_text().splitlines()) == 1
    finally:
        running.send_signal(signal.SIGKILL)
        running.wait()


def test_output_file_gets_normal_permissions(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a dog\n")
    out = tmp_path / "out.jsonl"
    assert icc("score", "--model", "lite", "-i", source, "-o", out) == 0
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask
    assert sorted(path.name for path in tmp_path.iterdir()) == ["in.txt", "out.jsonl"]


def test_jsonl_rows_with_different_fields_keep_them_all_in_csv_and_parquet(tmp_path):
    source = tmp_path / "in.jsonl"
    records = [{"caption": "a dog", "a": 1}, {"caption": "a cat", "b": "x"}, {"caption": None, "a": 2.5}]
    source.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    out = tmp_path / "out.csv"
    assert icc("score", "--model", "lite", "-i", source, "-o", out) == 0
    with out.open(encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
    assert reader.fieldnames == ["caption", "a", "b", "icc_score", "icc_model", "icc_language"]
    assert [(row["a"], row["b"]) for row in rows] == [("1", ""), ("", "x"), ("2.5", "")]
    out = tmp_path / "out.parquet"
    assert icc("score", "--model", "lite", "-i", source, "-o", out) == 0
    table = pq.read_table(out)
    assert table.column("a").to_pylist() == [1.0, None, 2.5] and table.column("b").to_pylist() == [None, "x", None]
    assert np.isnan(table.column("icc_score").to_numpy(zero_copy_only=False)[2])


def test_rule_column_cells_blank_are_never_kept_and_words_are_refused(tmp_path, capsys):
    source = tmp_path / "pairs.csv"
    source.write_text("caption,clip_score\na red car on a street,0.4\na brown dog on the grass,\n")
    out = tmp_path / "kept.csv"
    assert icc("filter", "--model", "lite", "-i", source, "-o", out, "--threshold", "0", "--clip-threshold", "0") == 0
    assert [row["caption"] for row in csv.DictReader(out.open())] == ["a red car on a street"]
    capsys.readouterr()
    source.write_text("caption,related\na red car on a street,maybe\n")
    assert (
        icc(
            "filter", "--model", "lite", "-i", source, "--threshold", "0", "--and-column", "related", "--and-top-k", "1"
        )
        == 2
    )
    one_line_error(capsys.readouterr().err, "column 'related' holds 'maybe', not a number or true/false")


@pytest.mark.parametrize("chunked", [False, True])
def test_a_lone_caption_in_a_column_of_caption_lists_is_refused_not_split_into_characters(tmp_path, capsys, chunked):
    """A string among lists would be read as a list of its characters, each scored as a caption."""
    rows = [{"caption": ["a dog on a beach", "a red car"]}] * (40_000 if chunked else 1) + [{"caption": "a cat"}]
    path = tmp_path / "nested.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert icc("score", "--model", "lite", "--input", path, "--output", tmp_path / "out.jsonl") == 2
    err = capsys.readouterr().err
    assert "holds lists of captions, but a row holds str 'a cat'" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out.jsonl").exists()


def test_a_binary_parquet_caption_column_is_read_as_utf8_text(tmp_path, capsys):
    """Spark and Impala write strings as binary unless told otherwise: the captions are still text."""
    captions = ["a red car parked on a street", "the meaning of life", None, "a café on a street in Paris"]
    as_text, as_binary = tmp_path / "text.parquet", tmp_path / "binary.parquet"
    pq.write_table(pa.table({"caption": captions}), as_text)
    encoded = [None if caption is None else caption.encode("utf-8") for caption in captions]
    pq.write_table(pa.table({"caption": pa.array(encoded, type=pa.binary())}), as_binary)
    for path in (as_text, as_binary):
        assert icc("score", "--model", "lite", "--input", path, "--output", path.with_suffix(".jsonl")) == 0
    scores = [
        [json.loads(line)["icc_score"] for line in path.with_suffix(".jsonl").read_text().splitlines()]
        for path in (as_text, as_binary)
    ]
    assert scores[0] == scores[1] and sum(score is not None for score in scores[1]) == 3


def test_a_caption_column_that_holds_no_text_is_refused(tmp_path, capsys):
    path = tmp_path / "numbers.parquet"
    pq.write_table(pa.table({"caption": [1, 2, 3]}), path)
    assert (
        icc("filter", "--model", "lite", "--input", path, "--output", tmp_path / "kept.parquet", "--threshold", "0.5")
        == 2
    )
    one_line_error(capsys.readouterr().err, "column 'caption' holds int64, not text")
    assert not (tmp_path / "kept.parquet").exists()
