"""Single-file ``icc score|filter`` jobs stream: bounded memory, output as it is scored, same rows as one pass."""

import csv
import dataclasses
import io
import json
import subprocess
import sys
import tempfile
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from modeling_icc import ConcretenessScorer, LiteScorer, load_scorer
from modeling_icc.cli.main import main
from modeling_icc.curation.engines import passes, pieces
from modeling_icc.curation.engines.job import Job
from modeling_icc.curation.engines.single_file import run_single_file
from modeling_icc.curation.engines.unit_result import ScoreStats
from modeling_icc.curation.filter_plan import ColumnRule, FilterPlan
from modeling_icc.curation.io.tables import CHUNK_ROWS, iter_tables
from modeling_icc.curation.job_spec import ScoringOptions
from modeling_icc.curation.selection import KeepRule, keep_mask
from modeling_icc.utils.errors import UserInputError
from modeling_icc.utils.provenance import synthetic_captions


class LengthScorer(ConcretenessScorer):
    """A cheap stand-in model (score from caption length), so that memory tests measure I/O, not a model."""

    model_id = "length"

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        return (np.fromiter(map(len, texts), dtype=np.float32, count=len(texts)) % 97) / 96


def write_input(path: Path, n: int) -> Path:
    captions = synthetic_captions(n, seed=n)
    if path.suffix == ".txt":
        path.write_text("\n".join(captions) + "\n", encoding="utf-8")
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps({"id": i, "caption": c}) + "\n" for i, c in enumerate(captions)))
    elif path.suffix == ".csv":
        with path.open("w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerows([("id", "caption"), *enumerate(captions)])
    else:
        pq.write_table(pa.table({"id": np.arange(n), "caption": captions}), path, row_group_size=10_000)
    return path


def peak_traced_bytes(args: list[str], stdin: Path | None = None, monkeypatch=None) -> int:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stdin.open("rb")))
    tracemalloc.start()
    try:
        assert main(args) == 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("suffix", "command"),
    [
        (".txt", ["score"]),
        ("stdin.txt", ["score"]),
        (".jsonl", ["filter", "--threshold", "0.5"]),
        (".parquet", ["score"]),
        (".csv", ["filter", "--top-fraction", "0.3"]),
        ("stdin.txt", ["filter", "--top-k", "1000"]),
    ],
)
def test_memory_does_not_grow_with_the_input(tmp_path, monkeypatch, capsys, suffix, command):
    """Peak Python memory for N and 2N rows (tracemalloc: exact, not disturbed by other processes).

    Reading a whole file held about 1 KB per row; a ranking rule held 4 bytes per row (raw
    scores, about 4.4 measured here; more while the cut was made) before they went to disk.
    N is three whole chunks, so that both runs reach the steady state (one chunk being read
    while the previous one is written). The stages run in one thread here: with the reading and writing
    threads, the peak moves by up to a chunk with their timing, whatever the input's size; that they hold
    a bounded number of chunks is held by ``test_background_stages.py``.
    """
    monkeypatch.setattr(ScoringOptions, "load", lambda options, notice=None, cache=False: LengthScorer())
    monkeypatch.setattr(passes, "read_ahead", lambda tables: tables)
    monkeypatch.setattr(passes, "_writes_behind", lambda job, unit: False)
    n = 3 * CHUNK_ROWS
    peaks = []
    for rows in (100, n, 2 * n):  # the first run imports what the job needs
        source = write_input(tmp_path / f"in{rows}{suffix.removeprefix('stdin')}", rows)
        out = tmp_path / f"out{rows}{source.suffix}"
        if suffix.startswith("stdin"):
            args = [*command, "--input", "-", "--output", str(out)]
            peaks.append(peak_traced_bytes(args, stdin=source, monkeypatch=monkeypatch))
        else:
            peaks.append(peak_traced_bytes([*command, "--input", str(source), "--output", str(out)]))
    capsys.readouterr()
    growth_per_row = (peaks[2] - peaks[1]) / n
    assert growth_per_row < 2, (peaks, growth_per_row)


@pytest.mark.parametrize("model", ["lite", "student"])
def test_stdout_gets_rows_before_the_input_ends(model, request):
    """Piped input is scored and written chunk by chunk, not after reading everything (a neural model, which
    reads a file ahead of what it writes, does not wait for the next chunk of a stream)."""
    name = str(request.getfixturevalue("tiny_student_dir")) if model == "student" else model
    process = subprocess.Popen(
        [sys.executable, "-m", "modeling_icc", "score", "--model", name, "--input", "-", "--device", "cpu"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    lines: list[bytes] = []
    enough = threading.Event()

    def read() -> None:
        for line in process.stdout:
            lines.append(line)
            if len(lines) >= CHUNK_ROWS:
                enough.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    process.stdin.write(b"".join(f"a dog number {i}\n".encode() for i in range(CHUNK_ROWS + 10)))
    process.stdin.flush()
    try:
        assert enough.wait(timeout=120), f"only {len(lines)} rows written while the input was still open"
    finally:
        process.stdin.close()
        process.wait()
        reader.join()
    assert len(lines) == 1 + CHUNK_ROWS + 10 and lines[-1].startswith(b"a dog number 32777\t")


@pytest.fixture
def tied_pool(tmp_path) -> tuple[Path, list[str], np.ndarray]:
    captions = synthetic_captions(60, seed=3)
    captions = captions[:20] + captions[:20] + [""] * 3 + captions[20:37]  # ties and NaNs across chunks
    clip = np.random.default_rng(0).integers(0, 5, len(captions)).astype(float)  # ties in the CLIP rule too
    path = tmp_path / "pool.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": i, "caption": c, "clip": v}) + "\n"
            for i, (c, v) in enumerate(zip(captions, clip, strict=False))
        )
    )
    return path, captions, clip


@pytest.mark.parametrize(
    ("rule", "clip_rule"),
    [
        (KeepRule(top_k=17), None),
        (KeepRule(top_fraction=0.4), None),
        (KeepRule(threshold=0.6), KeepRule(top_k=25)),
        (KeepRule(top_fraction=0.5), KeepRule(threshold=2)),
    ],
)
def test_chunked_ranking_keeps_exactly_the_rows_of_one_pass(tied_pool, tmp_path, rule, clip_rule):
    path, captions, clip = tied_pool
    raw = LiteScorer().score(captions, errors="nan", raw=True)
    expected = keep_mask(np.clip(raw, 0, 1), rule, ranking=raw)
    if clip_rule is not None:
        expected &= keep_mask(clip, clip_rule)
    out = tmp_path / "kept.jsonl"
    other = None if clip_rule is None else ColumnRule("clip", clip_rule)
    job = Job.of_file(path, "jsonl", out, "jsonl", plan=FilterPlan(rule, other=other), chunk_rows=7)
    result = run_single_file(job, LiteScorer)
    kept = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert kept == np.flatnonzero(expected).tolist()
    assert result.rows == len(captions) and result.kept == int(expected.sum()) and result.stats.nan == 3


@pytest.fixture
def nested_pool(tmp_path) -> Path:
    """Rows with lists of captions (GBC-like), tied captions across rows, a blank caption, an empty row."""
    captions = synthetic_captions(12, seed=5)
    rng = np.random.default_rng(5)
    rows = [[captions[j] for j in rng.integers(0, 12, rng.integers(1, 4))] for _ in range(40)]
    rows[7], rows[21] = [], ["", captions[0]]
    path = tmp_path / "nested.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": i, "caption": row, "boxes": list(range(len(row))), "clip": int(rng.integers(0, 4))})
            + "\n"
            for i, row in enumerate(rows)
        )
    )
    return path


def in_memory_rows(path: Path, plan: FilterPlan) -> list[dict]:
    """What one pass over the whole input keeps (``FilterPlan.mask`` of every row at once), as written rows."""
    table = next(iter_tables(path, "jsonl", plan.column, rows=10**6))
    plan = pieces.bind(plan, table, "jsonl")
    [(_, raw, languages)] = pieces.score_tables(LiteScorer(), plan, [table], lambda count: None)
    piece = pieces.finish(plan, table, raw, LiteScorer.model_id, languages=languages)
    rows = []
    for row in np.flatnonzero(piece.keep):
        scores = piece.columns[plan.score_column][row]
        rows.append(
            {
                "id": table.values("id")[row],
                "caption": piece.table.captions[row],
                "icc_score": scores.tolist() if hasattr(scores, "tolist") else scores,
            }
        )
    return rows


@pytest.mark.parametrize(
    ("pool", "plan"),
    [
        ("tied_pool", FilterPlan(KeepRule(top_k=17))),
        ("tied_pool", FilterPlan(KeepRule(top_fraction=0.3))),
        ("tied_pool", FilterPlan(KeepRule(top_fraction=0.5), other=ColumnRule("clip", KeepRule(top_k=30)))),
        ("nested_pool", FilterPlan(KeepRule(top_k=9), aggregate="mean")),
        (
            "nested_pool",
            FilterPlan(KeepRule(top_fraction=0.4), aggregate="max", other=ColumnRule("clip", KeepRule(top_k=25))),
        ),
        (
            "nested_pool",
            FilterPlan(
                KeepRule(top_k=1),
                level="node",
                node_columns=("boxes",),
                other=ColumnRule("clip", KeepRule(top_fraction=0.3)),
            ),
        ),
    ],
)
@pytest.mark.parametrize("stdin", [False, True])
def test_every_plan_kind_keeps_the_rows_scores_and_order_of_one_pass(request, tmp_path, monkeypatch, pool, plan, stdin):
    """Chunks of 4 rows (ties straddle them), from a file or a stream; never ``FilterPlan.fit`` (values in memory)."""
    path = request.getfixturevalue(pool)
    if pool == "tied_pool":
        path = path[0]
    expected = in_memory_rows(path, plan)
    monkeypatch.setattr(FilterPlan, "fit", lambda *args, **kwargs: pytest.fail("per-row values held in memory"))
    out = tmp_path / "kept.jsonl"
    source = io.BytesIO(path.read_bytes()) if stdin else path
    result = run_single_file(Job.of_file(source, "jsonl", out, "jsonl", plan=plan, chunk_rows=4), LiteScorer)
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["id"] for row in got] == [row["id"] for row in expected] and result.kept == len(expected)
    assert [row["caption"] for row in got] == [row["caption"] for row in expected]
    for row, want in zip(got, expected, strict=True):
        np.testing.assert_allclose(
            np.array(row["icc_score"], dtype=float), np.array(want["icc_score"], dtype=float), atol=1e-6
        )


class FailingScorer(LiteScorer):
    """Fails on the third chunk it scores, noting how many work files lay beside the output ``out`` then."""

    calls = 0
    out: Path
    seen = 0

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        FailingScorer.calls += 1
        if FailingScorer.calls == 3:
            FailingScorer.seen = len(work_files(FailingScorer.out))
            raise RuntimeError("scorer failed")
        return super()._score_valid(texts)


class ShrinkingScorer(LiteScorer):
    """Replaces its Parquet input by its first two row groups once it has scored the last one (before pass 2)."""

    path: Path
    calls = 0

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        ShrinkingScorer.calls += 1
        if ShrinkingScorer.calls == 9:  # 60 rows in row groups (and chunks) of 7
            pq.write_table(pq.read_table(self.path).slice(0, 14), self.path.with_suffix(".new"), row_group_size=7)
            self.path.with_suffix(".new").replace(self.path)
        return super()._score_valid(texts)


class ReorderingScorer(LiteScorer):
    """Rewrites its JSONL input in reverse row order (same rows, same count) once it has scored its last chunk:
    an upstream job regenerating the file in place between the two passes of a top-k job."""

    path: Path
    chunks = 0
    calls = 0

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        ReorderingScorer.calls += 1
        if ReorderingScorer.calls == ReorderingScorer.chunks:
            lines = ReorderingScorer.path.read_text(encoding="utf-8").splitlines(keepends=True)
            ReorderingScorer.path.write_text("".join(reversed(lines)), encoding="utf-8")
        return super()._score_valid(texts)


def test_an_input_rewritten_between_the_passes_with_the_same_row_count_is_refused(tied_pool, tmp_path):
    """The first pass's scores would otherwise be pinned to other captions, and the job would exit 0."""
    path, captions, _ = tied_pool
    out = tmp_path / "kept.jsonl"
    ReorderingScorer.path, ReorderingScorer.calls = path, 0
    ReorderingScorer.chunks = -(-len(captions) // 7)  # one scorer call per chunk of 7 rows (lite, no batches)
    job = Job.of_file(path, "jsonl", out, "jsonl", plan=FilterPlan(KeepRule(top_k=5)), chunk_rows=7)
    with pytest.raises(UserInputError, match="the input changed between the two passes"):
        run_single_file(job, ReorderingScorer)
    assert not out.exists() and work_files(out) == []


def test_temporary_files_are_removed_after_success_and_errors(tied_pool, tmp_path, monkeypatch):
    path, _, _ = tied_pool
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    out = tmp_path / "kept.jsonl"
    FailingScorer.calls, FailingScorer.out = 0, out
    job = Job.of_file(path, "jsonl", out, "jsonl", plan=FilterPlan(KeepRule(top_k=5)), chunk_rows=7)
    assert run_single_file(job, LiteScorer).kept == 5
    assert list(temp.iterdir()) == [] and work_files(out) == []
    out.unlink()
    with pytest.raises(RuntimeError, match="scorer failed"):
        run_single_file(
            dataclasses.replace(job, units=(dataclasses.replace(job.units[0], source=io.BytesIO(path.read_bytes())),)),
            FailingScorer,
        )
    assert FailingScorer.seen == 4  # stdin's copy, raw scores, languages, ranking values (pass 2 opens the output)
    assert list(temp.iterdir()) == [] and work_files(out) == [] and not out.exists()
    shrinking = tmp_path / "pool.parquet"
    pq.write_table(
        pa.Table.from_pylist([json.loads(line) for line in path.read_text().splitlines()]), shrinking, row_group_size=7
    )
    ShrinkingScorer.path, ShrinkingScorer.calls = shrinking, 0
    with pytest.raises(UserInputError, match="the input changed between the two passes"):  # not 14 rows as if whole
        run_single_file(
            dataclasses.replace(
                job, units=(dataclasses.replace(job.units[0], source=shrinking, input_format="parquet"),)
            ),
            ShrinkingScorer,
        )
    assert list(temp.iterdir()) == [] and work_files(out) == [] and not out.exists()


def work_files(out: Path) -> list[Path]:
    """The temporary and work files of jobs writing ``out`` (``.NAME.icc-XXXXXXXX.tmp``)."""
    return sorted(out.parent.glob(f".{out.name}.icc-*.tmp"))


def test_chunks_keep_order_and_scores(tied_pool, tmp_path):
    path, captions, _ = tied_pool
    out = tmp_path / "scored.csv"
    run_single_file(Job.of_file(path, "jsonl", out, "csv", chunk_rows=5), LiteScorer)
    with out.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(row["id"]) for row in rows] == list(range(len(captions)))
    expected = LiteScorer().score(captions, errors="nan")
    got = np.array([float(row["icc_score"]) if row["icc_score"] else np.nan for row in rows])
    np.testing.assert_allclose(got, expected, atol=1e-6)


def test_stdin_with_a_ranking_rule_is_read_twice_from_a_copy(tied_pool):
    path, captions, _ = tied_pool
    result = subprocess.run(
        [sys.executable, "-m", "modeling_icc", *"filter --model lite -i - --format jsonl --top-fraction 0.25".split()],
        input=path.read_bytes(),
        capture_output=True,
        check=True,
    )
    raw = LiteScorer().score(captions, errors="nan", raw=True)
    expected = np.flatnonzero(keep_mask(np.clip(raw, 0, 1), KeepRule(top_fraction=0.25), ranking=raw))
    assert [json.loads(line)["id"] for line in result.stdout.decode().splitlines()] == expected.tolist()


def test_score_quantiles_match_numpy():
    scores = np.random.default_rng(1).random(10_001).astype(np.float32)
    scores[::50] = np.nan
    stats = ScoreStats()
    for part in np.array_split(scores, 7):
        stats.add(part)
    qs = [0.05, 0.25, 0.5, 0.75, 0.95]
    np.testing.assert_allclose(stats.quantiles(qs), np.nanquantile(scores, qs), atol=1e-5)
    assert stats.rows == len(scores) and stats.nan == np.isnan(scores).sum()
    assert ScoreStats().quantiles(qs) is None


def test_a_neural_student_scores_a_file(tiny_student_dir, tied_pool, tmp_path):
    path, captions, _ = tied_pool
    out = tmp_path / "scored.jsonl"
    args = ["--model", str(tiny_student_dir), "--dtype", "float32", "--device", "cpu", "-i", str(path), "-o", str(out)]
    assert main(["score", *args]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["id"] for row in rows] == list(range(len(captions)))
    assert {row["icc_model"] for row in rows} == {str(tiny_student_dir)}
    expected = load_scorer(tiny_student_dir, device="cpu", dtype="float32").score(captions, errors="nan")
    got = np.array([np.nan if row["icc_score"] is None else row["icc_score"] for row in rows])
    np.testing.assert_allclose(got, expected, atol=1e-5)


@pytest.mark.parametrize("tokenize_workers", [0, 2])
def test_a_file_read_ahead_keeps_rows_order_and_the_scores_of_each_part(
    tiny_student_dir, tied_pool, tmp_path, monkeypatch, tokenize_workers
):
    """A neural scorer reads a file ahead of what is written (chunks of rows, parts of chunks, one stream):
    every row once, in order, each part scored bit-for-bit as its own call scores it."""
    monkeypatch.setattr(pieces, "PROGRESS_CHUNK", 7)
    path, captions, _ = tied_pool
    out = tmp_path / "scored.parquet"
    scorer = load_scorer(tiny_student_dir, device="cpu", dtype="float32", tokenize_workers=tokenize_workers)
    run_single_file(Job.of_file(path, "jsonl", out, "parquet", chunk_rows=16), lambda: scorer)
    table = pq.read_table(out)
    assert table["id"].to_pylist() == list(range(len(captions)))
    parts = [
        captions[low : min(low + 7, chunk + 16)]
        for chunk in range(0, 60, 16)
        for low in range(chunk, min(chunk + 16, 60), 7)
    ]
    expected = np.concatenate([scorer.score(part, errors="nan") for part in parts])
    np.testing.assert_array_equal(table["icc_score"].to_numpy(zero_copy_only=False).astype(np.float32), expected)


@pytest.mark.parametrize("tokenize_workers", [0, 2])
def test_a_file_read_ahead_names_each_caption_once(tiny_student_dir, tmp_path, monkeypatch, tokenize_workers):
    """The scorer names the captions of the parts it reads ahead; the writer of each chunk reads those names
    back: a chunk's end forgets its own captions only, not the next chunk's (named once: ~1-5 us a caption)."""
    from modeling_icc.scoring import languages

    named, as_read = [], languages._as_read
    monkeypatch.setattr(languages, "_as_read", lambda text, read: named.append(text) or as_read(text, read))
    monkeypatch.setattr(pieces, "PROGRESS_CHUNK", 7)
    captions = [f"{caption} number {index}" for index, caption in enumerate(synthetic_captions(60, seed=5))]
    path = tmp_path / "distinct.jsonl"
    path.write_text("".join(json.dumps({"caption": caption}) + "\n" for caption in captions), encoding="utf-8")
    scorer = load_scorer(tiny_student_dir, device="cpu", dtype="float32", tokenize_workers=tokenize_workers)
    out = tmp_path / "scored.parquet"
    languages.forget_languages()
    run_single_file(Job.of_file(path, "jsonl", out, "parquet", chunk_rows=16), lambda: scorer)
    assert sorted(named) == sorted(captions)
    languages.forget_languages()
    assert pq.read_table(out)["icc_language"].to_pylist() == [languages.caption_language(c) for c in captions]


class WaitingScorer(LiteScorer):
    """Scores only once ``release`` is set, so that a second job can start while this one writes."""

    started = threading.Event()
    release = threading.Event()

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        WaitingScorer.started.set()
        assert WaitingScorer.release.wait(60)
        return super()._score_valid(texts)


def test_a_second_job_writing_the_same_output_at_once_is_refused(tied_pool, tmp_path):
    """Both would exit 0 and the file would hold only the last one's rows."""
    path, captions, _ = tied_pool
    out = tmp_path / "scored.jsonl"
    job = Job.of_file(path, "jsonl", out, "jsonl")
    first: dict = {}
    worker = threading.Thread(target=lambda: first.update(result=run_single_file(job, WaitingScorer)))
    worker.start()
    try:
        assert WaitingScorer.started.wait(60)
        with pytest.raises(UserInputError, match=f"another icc job is writing {out}"):
            run_single_file(job, LiteScorer)
    finally:
        WaitingScorer.release.set()
        worker.join(60)
    assert first["result"].rows == len(captions) and len(out.read_text().splitlines()) == len(captions)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pool.jsonl", "scored.jsonl"]  # the lock is gone too


def test_an_output_in_a_folder_that_does_not_exist_yet_is_written(tied_pool, tmp_path):
    """As `make demo` writes outputs/demo_kept.jsonl on a fresh clone."""
    path, captions, _ = tied_pool
    out = tmp_path / "new" / "deeper" / "scored.jsonl"
    assert run_single_file(Job.of_file(path, "jsonl", out, "jsonl"), LiteScorer).rows == len(captions)
    assert len(out.read_text().splitlines()) == len(captions) and sorted(p.name for p in out.parent.iterdir()) == [
        "scored.jsonl"
    ]
