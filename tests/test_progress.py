"""Progress bars: totals and steady updates where they help, nothing on a stderr that is not a terminal."""

import subprocess
import sys
import textwrap
from typing import ClassVar

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_run import icc

from modeling_icc import load_scorer
from modeling_icc.scoring import chunks
from modeling_icc.scoring.progress import PROGRESS_DELAY
from modeling_icc.utils.provenance import synthetic_captions

#: What a tqdm bar leaves in a stream: carriage returns, and the bar's frame and rate.
BAR_MARKS = ("\r", "%|", "it/s", "s/it", "Loading weights", "Writing model shards", "first pass over the stream")


class RecordingBar:
    """Stands in for tqdm: records its options, every update and every total it was given."""

    made: ClassVar[list["RecordingBar"]] = []

    def __init__(self, iterable=None, **options) -> None:
        self.options, self.total, self.updates, self.totals = options, options.get("total"), [], []
        RecordingBar.made.append(self)

    def update(self, count: int = 1) -> None:
        self.updates.append(count)

    def refresh(self) -> None:
        self.totals.append(self.total)

    def __enter__(self) -> "RecordingBar":
        return self

    def __exit__(self, *exc_info: object) -> None:
        pass


@pytest.fixture
def bars(monkeypatch) -> list[RecordingBar]:
    RecordingBar.made = []
    monkeypatch.setattr("tqdm.auto.tqdm", RecordingBar)
    monkeypatch.setattr(chunks, "tqdm", RecordingBar)
    return RecordingBar.made


def test_a_parquet_input_gives_the_bar_its_row_count(tmp_path, bars):
    captions = synthetic_captions(50, seed=1)
    table = pa.table({"caption": captions})
    pq.write_table(table, tmp_path / "in.parquet", row_group_size=20)  # three row groups: the total comes first
    assert (
        icc("score", "--model", "lite", "-i", tmp_path / "in.parquet", "-o", tmp_path / "out.jsonl", "--progress") == 0
    )
    (bar,) = bars
    assert bar.totals[0] == 50 and sum(bar.updates) == 50


def test_a_text_input_gets_a_total_estimated_from_its_size(tmp_path, bars):
    lines = [f"a dog number {i:03d} on a beach" for i in range(35)]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    from modeling_icc.curation.engines.job import Job
    from modeling_icc.curation.engines.single_file import run_single_file

    job = Job.of_file(tmp_path / "in.txt", "txt", tmp_path / "out.tsv", "tsv", chunk_rows=10, progress=True)
    run_single_file(job, lambda: load_scorer("lite"))
    (bar,) = bars
    assert bar.totals[0] == pytest.approx(35, abs=3)  # from the first 10 rows and the bytes they took
    assert bar.totals[-1] == 35 and sum(bar.updates) == 35


def test_a_job_bar_moves_batch_by_batch(tiny_student_dir, tmp_path, bars):
    """A slow model's rows are reported as its batches finish, not once per chunk of 16,384 captions."""
    (tmp_path / "in.txt").write_text("\n".join(synthetic_captions(120, seed=2)) + "\n", encoding="utf-8")
    args = ["score", "--model", tiny_student_dir, "--batch-size", "8", "-i", tmp_path / "in.txt"]
    assert icc(*args, "-o", tmp_path / "out.jsonl", "--progress") == 0
    (bar,) = [bar for bar in bars if bar.options.get("desc") == "icc rows"]
    assert len(bar.updates) >= 120 // 8 and sum(bar.updates) == 120 and bar.totals[0] == 120


@pytest.mark.parametrize("terminal", [True, False])
def test_score_shows_a_bar_on_a_terminal_once_a_call_runs_two_seconds(tiny_student_dir, monkeypatch, terminal):
    """The Python API: any input may get a bar (it appears after PROGRESS_DELAY seconds), updated per batch."""
    scorer = load_scorer(tiny_student_dir, "cpu", "float32", batch_size=4)
    RecordingBar.made = []
    monkeypatch.setattr(chunks, "tqdm", RecordingBar)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal)
    scorer.score(synthetic_captions(40, seed=3))
    (bar,) = RecordingBar.made
    if terminal:
        assert bar.options["disable"] is False and bar.options["delay"] == PROGRESS_DELAY
        assert len(bar.updates) >= 10 and sum(bar.updates) == 40
    else:
        assert bar.options["disable"] is True


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True)


def assert_no_bars(err: str) -> None:
    for mark in BAR_MARKS:
        assert mark not in err, (mark, err)


def test_cli_stderr_that_is_not_a_terminal_holds_no_bars(tiny_student_dir, published_format_dir, tmp_path):
    """Library bars (transformers' loading and saving) and the job's own stay out of a redirected stderr."""
    command = [sys.executable, "-m", "modeling_icc"]
    pipes = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Two fresh CLI processes, run side by side: each is mostly a single-threaded start-up.
    with (
        subprocess.Popen(
            [*command, "score", "--model", str(tiny_student_dir), "--input", "-"], stdin=subprocess.PIPE, **pipes
        ) as scoring,
        subprocess.Popen(
            [*command, "convert", "--model", str(published_format_dir), "--output", str(tmp_path / "converted")],
            stdin=subprocess.DEVNULL,
            **pipes,
        ) as converting,
    ):
        _, scored = scoring.communicate("a dog\na cat\n")
        _, converted = converting.communicate()
    assert scoring.returncode == 0, scored
    assert_no_bars(scored)
    assert all(line.startswith("icc: ") for line in scored.splitlines())
    assert converting.returncode == 0, converted
    assert_no_bars(converted)


def test_datasets_helpers_write_no_bars_into_a_redirected_stderr():
    """map bars and the stream's first-pass bar appear on a terminal only."""
    done = run_python(
        """
        import datasets
        from modeling_icc import add_icc_scores, filter_by_icc
        pool = datasets.Dataset.from_dict({"caption": ["a red car", "the meaning of life", "a dog"]})
        add_icc_scores(pool, model="lite")
        filter_by_icc(pool, threshold=0.5, model="lite")
        stream = pool.to_iterable_dataset()
        print(len(list(filter_by_icc(stream, top_k=2, model="lite"))))
        """
    )
    assert done.stdout.strip() == "2"
    assert_no_bars(done.stderr)
