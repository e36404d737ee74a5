"""A single-file job reads its next table and writes its last one in background threads while it scores: the
same bytes as one thread, a bounded number of tables held, and an error anywhere (Ctrl-C too) raised as itself,
with no output, no work file and no thread left behind."""

import errno
import json
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from modeling_icc import LiteScorer
from modeling_icc.curation.engines import passes, pieces
from modeling_icc.curation.engines.background import AHEAD, read_ahead
from modeling_icc.curation.engines.job import Job
from modeling_icc.curation.engines.single_file import run_single_file
from modeling_icc.curation.filter_plan import FilterPlan
from modeling_icc.curation.io import writers
from modeling_icc.curation.io.tables import iter_tables
from modeling_icc.curation.selection import KeepRule
from modeling_icc.scoring.progress import current_report
from modeling_icc.utils.errors import UserInputError
from modeling_icc.utils.provenance import synthetic_captions

ROWS, CHUNK = 60, 7  # 9 tables


@pytest.fixture
def captions_jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "in.jsonl"
    captions = synthetic_captions(ROWS, seed=3)
    path.write_text("".join(json.dumps({"id": i, "caption": c, "w": i % 5}) + "\n" for i, c in enumerate(captions)))
    return path


def background_threads() -> list[str]:
    return [thread.name for thread in threading.enumerate() if thread.name.startswith("icc-")]


def left_beside(path: Path) -> list[str]:
    """What a job left in the folder of its input ``path`` besides the input."""
    return sorted(item.name for item in path.parent.iterdir() if item != path)


def serially(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every table read, scored and written in the calling thread, as before the stages overlapped."""
    monkeypatch.setattr(passes, "read_ahead", lambda tables: tables)
    monkeypatch.setattr(passes, "_writes_behind", lambda job, unit: False)


def test_read_ahead_reads_the_next_item_in_a_thread_while_one_is_used_and_no_further():
    read_by: list[str] = []
    second_read = threading.Event()

    def items():
        for index in range(6):
            read_by.append(threading.current_thread().name)
            if index == 1:
                second_read.set()
            yield index

    got = []
    for index, item in enumerate(read_ahead(items())):
        got.append(item)
        if index == 0:
            assert second_read.wait(60), "the next item was not read while this one was used"
        assert len(read_by) <= index + 1 + AHEAD  # items read: the ones given, then at most AHEAD more
    assert got == list(range(6))
    assert all(name.startswith("icc-read") for name in read_by)
    assert background_threads() == []


def test_closing_read_ahead_stops_its_thread_and_closes_the_reader():
    closed = threading.Event()

    def items():
        try:
            yield from range(100)
        finally:
            closed.set()

    ahead = read_ahead(items())
    assert next(ahead) == 0
    ahead.close()
    assert closed.is_set() and background_threads() == []


@pytest.mark.parametrize("output", ["out.jsonl", "out.parquet", "out.csv", "out.jsonl.gz"])
@pytest.mark.parametrize("plan", [FilterPlan(), FilterPlan(KeepRule(top_fraction=0.4))], ids=["score", "top"])
def test_the_bytes_are_those_of_one_thread(captions_jsonl, tmp_path, monkeypatch, output, plan):
    """Every table after the first read by the reading thread and written by the writing thread, in order: the
    file is byte for byte the serial run's."""
    written_by: set[str] = set()
    read_by: list[str] = []

    def recorded_tables(*args):
        for table in iter_tables(*args):
            read_by.append(threading.current_thread().name)
            yield table

    def recording(cls):
        original = cls.write

        def record(self, *args):
            written_by.add(threading.current_thread().name)
            return original(self, *args)

        return record

    fmt = output.split(".")[1]
    for cls in (writers.JsonlWriter, writers.ParquetTableWriter, writers.CsvWriter):
        monkeypatch.setattr(cls, "write", recording(cls))
    monkeypatch.setattr(passes, "iter_tables", recorded_tables)
    overlapped = tmp_path / "overlapped" / output
    run_single_file(Job.of_file(captions_jsonl, "jsonl", overlapped, fmt, plan=plan, chunk_rows=CHUNK), LiteScorer)
    assert written_by and all(name.startswith("icc-write") for name in written_by)
    passes_read = 2 if plan.rules() else 1  # a top fraction reads the input twice
    here = [name for name in read_by if not name.startswith("icc-read")]
    assert here == [threading.main_thread().name] * passes_read  # each pass's first table: checked here
    assert len(read_by) == passes_read * -(-ROWS // CHUNK)
    serially(monkeypatch)
    serial = tmp_path / "serial" / output
    run_single_file(Job.of_file(captions_jsonl, "jsonl", serial, fmt, plan=plan, chunk_rows=CHUNK), LiteScorer)
    assert overlapped.read_bytes() == serial.read_bytes()
    assert background_threads() == []


def test_the_tables_held_at_once_are_bounded(captions_jsonl, tmp_path, monkeypatch):
    """Memory stays bounded: when a table starts to be written, at most one more is finished (waiting to be
    written) and at most 2 + AHEAD more are read (that one, one being scored, AHEAD read ahead)."""
    read, finished, written = [0], [0], [0]
    finished_ahead, read_ahead_of_writes = [], []
    finish, write = pieces.finish, writers.ParquetTableWriter.write

    def counted_tables(*args):
        for table in iter_tables(*args):
            read[0] += 1
            yield table

    def counting_finish(*args, **kwargs):
        finished[0] += 1
        return finish(*args, **kwargs)

    def counting_write(self, *args):
        finished_ahead.append(finished[0] - written[0] - 1)
        read_ahead_of_writes.append(read[0] - written[0] - 1)
        write(self, *args)
        written[0] += 1

    monkeypatch.setattr(passes, "iter_tables", counted_tables)
    monkeypatch.setattr(pieces, "finish", counting_finish)
    monkeypatch.setattr(writers.ParquetTableWriter, "write", counting_write)
    out = tmp_path / "out.parquet"
    run_single_file(Job.of_file(captions_jsonl, "jsonl", out, "parquet", chunk_rows=CHUNK), LiteScorer)
    assert written[0] == -(-ROWS // CHUNK) and pq.read_table(out)["id"].to_pylist() == list(range(ROWS))
    assert max(finished_ahead) <= 1 and max(read_ahead_of_writes) <= 2 + AHEAD


def test_an_error_reading_a_later_table_is_raised_as_the_reader_raises_it(captions_jsonl, tmp_path):
    lines = captions_jsonl.read_text().splitlines(keepends=True)
    lines[4 * CHUNK + 2] = '{"id": 30, "caption": "a broken line\n'
    captions_jsonl.write_text("".join(lines))
    with pytest.raises(UserInputError) as serial:
        list(iter_tables(captions_jsonl, "jsonl", rows=CHUNK))
    out = tmp_path / "out.parquet"
    with pytest.raises(UserInputError) as overlapped:
        run_single_file(Job.of_file(captions_jsonl, "jsonl", out, "parquet", chunk_rows=CHUNK), LiteScorer)
    assert str(overlapped.value) == str(serial.value)
    assert left_beside(captions_jsonl) == [] and background_threads() == []


@pytest.mark.parametrize("output", ["out.jsonl", "out.parquet"])
def test_an_error_writing_a_later_table_is_raised_as_itself_and_leaves_nothing(
    captions_jsonl, tmp_path, monkeypatch, output
):
    calls = [0]
    full = OSError(errno.ENOSPC, "No space left on device")

    def failing_write(self, *args):
        calls[0] += 1
        if calls[0] == 3:
            raise full
        return original(self, *args)

    cls = writers.JsonlWriter if output.endswith("jsonl") else writers.ParquetTableWriter
    original = cls.write
    monkeypatch.setattr(cls, "write", failing_write)
    fmt = output.split(".")[1]
    with pytest.raises(OSError) as raised:
        run_single_file(Job.of_file(captions_jsonl, "jsonl", tmp_path / output, fmt, chunk_rows=CHUNK), LiteScorer)
    assert raised.value is full
    assert left_beside(captions_jsonl) == [] and background_threads() == []
    assert current_report() is None  # the job's bar no longer takes the scorers' reports


class InterruptedScorer(LiteScorer):
    """Ctrl-C while the fourth table is scored (three read, two written or being written)."""

    calls = 0

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        InterruptedScorer.calls += 1
        if InterruptedScorer.calls == 4:
            raise KeyboardInterrupt
        return super()._score_valid(texts)


@pytest.mark.parametrize("output", ["out.jsonl", "out.parquet"])
def test_ctrl_c_stops_both_threads_and_leaves_nothing(captions_jsonl, tmp_path, output):
    InterruptedScorer.calls = 0
    fmt = output.split(".")[1]
    with pytest.raises(KeyboardInterrupt):
        run_single_file(
            Job.of_file(captions_jsonl, "jsonl", tmp_path / output, fmt, chunk_rows=CHUNK), InterruptedScorer
        )
    assert left_beside(captions_jsonl) == [] and background_threads() == []


def test_a_parquet_input_read_ahead_keeps_every_row_once_in_order(tmp_path):
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": np.arange(50), "caption": synthetic_captions(50, seed=5)}), path, row_group_size=6)
    out = tmp_path / "out.jsonl"
    run_single_file(Job.of_file(path, "parquet", out, "jsonl", chunk_rows=CHUNK), LiteScorer)
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == list(range(50))
