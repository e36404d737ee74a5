"""Single-file jobs (``icc score|filter --input FILE|-``): read, score and write in chunks.

Rows are read, scored and written :data:`~modeling_icc.curation.io.tables.CHUNK_ROWS`
at a time, in input order, so memory does not grow with the input. A file output is
written to a temporary name and renamed when complete; stdout gets each chunk as soon as
it is scored. What is held for the whole input is small and stated here:

- top-k / top-fraction rules: nothing per row in memory. A first pass scores every chunk
  and appends, to work files (:func:`spill_place`; removed at the end, also on error), the
  raw score of every caption (4 bytes) and each ranking rule's value per row (the raw ICC
  score or a nested row's aggregate, 4 bytes; another column's value, 8 bytes). The plan
  fits its cuts in a few passes over those files
  (:meth:`~modeling_icc.curation.filter_plan.FilterPlan.fit_in_passes`: the same rows as
  one ``keep_mask`` over the whole input, ties by input order, with one histogram in memory),
  and a second pass re-reads the input and writes the kept rows with the saved scores.
  Every plan kind takes this path: row rules, nested rows by aggregate, node-level rules
  (cut within each row, so only another column's ranking rule spans rows);
- a DataComp subset: 16 bytes per kept row;
- JSONL or tar input written as CSV, TSV or Parquet: a first pass collects every field
  name (and one Arrow schema), since a header must name them all.

A second pass reads the input again, so stdin is then first copied to a work file
(as is Parquet from stdin: its footer comes last). Work files lie beside the output, named
as its temporary file (``.NAME.icc-XXXXXXXX.tmp``, locked while used), so that the next job
writing the same output removes those of a killed job; with stdout (or a FIFO or device) as
output, they are ``TMPDIR/.icc-stream.icc-XXXXXXXX.tmp``, removed likewise by the next such job.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ...scoring.base import ConcretenessScorer
from ...utils.atomic_files import remove_stale_temp_files, temp_file_beside
from ...utils.errors import UserInputError
from ...utils.locations import Location, is_remote
from ...utils.resumable import exclusive
from ..columns import flat_captions
from ..filter_plan import Cuts, FilterPlan
from ..io import compression, datacomp
from ..io.formats import VARYING_FIELDS, open_writer
from ..io.outputs import atomic_output, check_writable, refuse_writing_over_input, writes_in_place
from ..io.readers import is_parquet
from ..io.table import CaptionTable, Fields, missing_column_message
from ..io.tables import CHUNK_ROWS, iter_tables, scan_fields
from ..job_spec import JobSpec
from . import pieces
from .spill import SpilledArrays

#: Work files of jobs writing to stdout (or a FIFO or device) are named after this, in ``TMPDIR``.
STREAM_SPILL = "icc-stream"
#: The lock file a job holds beside its output file (``.NAME.icc.lock``): two jobs never write one output.
OUTPUT_LOCK_SUFFIX = ".icc.lock"
#: Output formats whose header or schema must name every column before the first row.
_FIXED_COLUMNS = frozenset({"csv", "tsv", "parquet"})


@dataclass(frozen=True)
class FileJob:
    """One input (a file, a stream such as stdin, or a ready table) scored into one output.

    ``output`` is a path (written atomically) or a binary stream (written chunk by chunk).
    ``plan`` names the caption column and the rules (none: score without filtering, ``icc score``).
    """

    source: Location | BinaryIO | CaptionTable
    input_format: str
    output: Location | BinaryIO
    output_format: str
    plan: FilterPlan = field(default_factory=FilterPlan)
    uid_column: str = datacomp.UID_COLUMN
    datacomp_subset: Path | None = None
    show: int = JobSpec.show
    chunk_rows: int = CHUNK_ROWS
    progress: bool | None = None

    @property
    def needs_fields(self) -> bool:
        """Whether a first pass must collect every column before writing."""
        return self.input_format in VARYING_FIELDS and self.output_format in _FIXED_COLUMNS


class ScoreStats:
    """Counts and quantiles of clipped scores without keeping them (a histogram of 100,000 bins)."""

    BINS = 100_000

    def __init__(self) -> None:
        self.counts = np.zeros(self.BINS + 1, dtype=np.int64)
        self.rows = 0
        self.nan = 0

    def add(self, scores: np.ndarray) -> None:
        valid = scores[~np.isnan(scores)]
        self.rows += len(scores)
        self.nan += len(scores) - len(valid)
        bins = np.rint(valid.astype(np.float64) * self.BINS).astype(np.int64)
        self.counts += np.bincount(bins, minlength=self.BINS + 1)

    def quantiles(self, qs: list[float]) -> list[float] | None:
        """Linear-interpolated quantiles of the valid scores (as ``numpy.quantile``), to 1e-5."""
        n = self.rows - self.nan
        if n == 0:
            return None
        cumulative = np.cumsum(self.counts)

        def value(k: int) -> float:  # the k-th smallest score (0-based)
            return float(np.searchsorted(cumulative, k, side="right")) / self.BINS

        out = []
        for q in qs:
            position = q * (n - 1)
            low = int(np.floor(position))
            high = min(low + 1, n - 1)
            out.append(value(low) + (position - low) * (value(high) - value(low)))
        return out


@dataclass
class FileJobResult:
    """What a single-file job did, for its summary. ``stats`` counts captions: with lists of
    captions per row, every caption of every row (``kept_captions``: those kept at node level)."""

    model_id: str
    stats: ScoreStats = field(default_factory=ScoreStats)
    rows: int = 0
    kept: int = 0
    kept_captions: int | None = None
    non_text: int = 0
    decode_errors: int = 0
    seconds: float = 0.0
    escaped_line_breaks: int = 0
    base64_columns: list[str] = field(default_factory=list)
    subset_uids: int | None = None
    shown: list[tuple[Any, float, bool]] = field(default_factory=list)


def run_file_job(job: FileJob, load_scorer: Callable[[], ConcretenessScorer]) -> FileJobResult:
    """Score (and filter) ``job.source`` into ``job.output``; see the module docstring for memory.

    ``load_scorer`` is called once the input's first rows and columns have been checked,
    so that a wrong file or column fails before a model is loaded.
    """
    with ExitStack() as stack:
        base = spill_place(job.output)
        remove_stale_temp_files(base)  # a killed job's work files, also when this job needs none

        def work_file() -> Path:
            return stack.enter_context(temp_file_beside(base))

        read, fields, chunks, plan = _open_input(job, work_file)
        if isinstance(job.output, Path) and not writes_in_place(job.output):  # one job per output file at a time
            base.parent.mkdir(parents=True, exist_ok=True)  # as the writer would: check_writable found it may
            stack.enter_context(
                exclusive(
                    base.with_name(f".{base.name}{OUTPUT_LOCK_SUFFIX}"),
                    busy=f"another icc job is writing {job.output}",
                    unwritable=f"cannot write beside {job.output}",
                )
            )
        scorer = load_scorer()
        start = time.perf_counter()
        result = FileJobResult(scorer.model_id)
        progress = stack.enter_context(_progress_bar(job.progress))
        report = progress.update if progress is not None else _ignore
        if progress is not None and not plan.nested:  # the bar counts captions: rows, unless they come in lists
            chunks = _setting_total(chunks, progress, job)
        scored_chunks = _scored(job, scorer, plan, chunks, report)
        scored = (
            _two_passes(plan, scored_chunks, read, work_file)
            if plan.needs_all_rows
            else ((chunk, raw, None) for chunk, raw in scored_chunks)
        )
        stream = stack.enter_context(atomic_output(job.output)) if _is_file(job.output) else job.output
        if _is_file(job.output):  # kept.jsonl.gz: written compressed into the temp file
            stream = stack.enter_context(compression.compressed_output(stream, compression.by_extension(job.output)))
        writer = stack.enter_context(open_writer(stream, job.output_format, fields))
        uid_parts = []
        for chunk, raw, cuts in scored:
            piece = pieces.finish(plan, chunk, raw, scorer.model_id, cuts)
            rows = np.arange(len(chunk)) if piece.keep is None else np.flatnonzero(piece.keep)
            writer.write(piece.table, piece.columns, rows)
            stream.flush()
            if job.datacomp_subset is not None:
                uid_parts.append(_kept_uids(job, chunk, rows))
            _account(result, job, plan, chunk, piece)
            del chunk, raw, piece, rows  # only one chunk is held while the next is read
    if job.datacomp_subset is not None:
        uids, _ = datacomp.subset_array(uid_parts)
        datacomp.save_subset(job.datacomp_subset, uids)
        result.subset_uids = len(uids)
    result.escaped_line_breaks = writer.escaped_line_breaks
    result.base64_columns = list(writer.base64_columns)
    result.seconds = time.perf_counter() - start
    return result


def _open_input(
    job: FileJob, work_file: Callable[[], Path]
) -> tuple[Callable[[], Iterator[CaptionTable]], Fields | None, Iterator[CaptionTable], FilterPlan]:
    """``(read, fields, chunks, plan)``: a reader that can start over, the columns when a first pass
    is needed for them, the chunks of a first read, and the plan checked against its first chunk."""
    source = job.source
    if isinstance(job.output, Path):
        refuse_writing_over_input(source, job.output)
    elif is_remote(job.output) and str(job.output) == str(source):
        raise UserInputError(
            f"--output {job.output} is the input file; write to another file (the input would be lost)"
        )
    if _is_stream(source) and (job.plan.needs_all_rows or job.needs_fields or job.input_format == "parquet"):
        source = _spooled(source, work_file())
    fields = None
    if job.needs_fields and not isinstance(source, CaptionTable):
        fields = scan_fields(source, job.input_format, job.plan.column, arrow_schema=job.output_format == "parquet")
    read = _reader(source, job)
    chunks = read()
    first = next(chunks)
    plan = pieces.bind(job.plan, first, job.output_format, fields.names if fields else None)
    if job.show and plan.nested:
        raise UserInputError("--show prints one caption per row; the captions here come in lists")
    if isinstance(job.output, Path):
        check_writable(job.output)
    if job.datacomp_subset is not None:
        datacomp.check_subset_path(job.datacomp_subset, writable=True)
        names = fields.names if fields else first.fieldnames
        if job.uid_column not in names and (names or len(first)):  # an empty JSONL input has no columns
            raise UserInputError(missing_column_message(job.uid_column, names, first.source or "input"))
    if not _is_file(job.output) and job.output_format in ("parquet", "tar"):
        raise UserInputError(
            f"{job.output_format} output needs a file (--output FILE), not stdout; or pass another --output-format"
        )
    return read, fields, _starting_with(first, chunks), plan


def _starting_with(first: CaptionTable, rest: Iterator[CaptionTable]) -> Iterator[CaptionTable]:
    """``first``, then ``rest``; unlike ``itertools.chain``, ``first`` is not kept to the end."""
    yield first
    del first
    yield from rest


def _scored(
    job: FileJob,
    scorer: ConcretenessScorer,
    plan: FilterPlan,
    chunks: Iterator[CaptionTable],
    report: Callable[[int], Any],
) -> Iterator[tuple[CaptionTable, np.ndarray]]:
    """Each chunk with its raw scores. A file is read ahead of what is written (a scorer on a GPU works on the
    next chunks meanwhile, see :func:`~.pieces.score_tables`); a stream (stdin) is not, so that each chunk's
    rows reach the output once scored, without waiting for the next chunk's rows to arrive."""
    if not _is_stream(job.source):
        yield from pieces.score_tables(scorer, plan, chunks, report)
        return
    for chunk in chunks:
        yield from pieces.score_tables(scorer, plan, [chunk], report)


def _two_passes(
    plan: FilterPlan,
    scored_chunks: Iterator[tuple[CaptionTable, np.ndarray]],
    read: Callable[[], Iterator[CaptionTable]],
    work_file: Callable[[], Path],
) -> Iterator[tuple[CaptionTable, np.ndarray, Cuts]]:
    """Score every chunk keeping raw scores and ranking values in work files, fit the cuts, re-read the input."""
    raws = SpilledArrays(work_file())
    rankings = {name: SpilledArrays(work_file()) for name in plan.ranked()}
    digests = []
    for chunk, raw in scored_chunks:
        raws.append(raw)
        for name, values in pieces.ranking_values(plan, chunk, raw).items():
            rankings[name].append(values)
        digests.append(pieces.caption_digest(chunk))
        del chunk, raw
    cuts = plan.fit_in_passes(rankings)
    changed = UserInputError(
        "the input changed between the two passes of this job (its captions are not the ones scored); "
        "run the command again once nothing rewrites it"
    )
    saved = iter(raws)
    for index, chunk in enumerate(read()):
        raw = next(saved, None)
        if raw is None or index >= len(digests) or pieces.caption_digest(chunk) != digests[index]:
            raise changed
        yield chunk, raw, cuts[index]
        del chunk, raw
    if next(saved, None) is not None:
        raise changed


def spill_place(output: Path | BinaryIO) -> Path:
    """The name a job's work files are made beside (see :func:`~modeling_icc.utils.atomic_files.temp_file_beside`).

    Beside a file output, named after it; for stdout and outputs written in place (a FIFO,
    ``/dev/stdout``), :data:`STREAM_SPILL` in the system's temporary directory. Either way the
    next job with the same output removes what a killed job left there.
    """
    if isinstance(output, Path) and not writes_in_place(output):
        return Path(os.path.realpath(output))  # where atomic_output writes (through a symlink)
    return Path(tempfile.gettempdir()) / STREAM_SPILL


def _ignore(count: int) -> None:
    """No progress bar to report to."""


def _kept_uids(job: FileJob, chunk: CaptionTable, rows: np.ndarray) -> np.ndarray:
    uids = chunk.values(job.uid_column)
    return datacomp.uids_to_array(uids[row] for row in rows)


def _account(
    result: FileJobResult, job: FileJob, plan: FilterPlan, chunk: CaptionTable, piece: pieces.ScoredPiece
) -> None:
    result.stats.add(piece.scores)
    result.rows += len(chunk)
    result.kept += len(chunk) if piece.keep is None else int(piece.keep.sum())
    if plan.level == "node":
        kept_rows = range(len(chunk)) if piece.keep is None else np.flatnonzero(piece.keep)
        kept_captions = sum(len(piece.table.captions[row] or ()) for row in kept_rows)
        result.kept_captions = (result.kept_captions or 0) + kept_captions
    result.non_text += sum(not isinstance(caption, str) for caption in flat_captions(chunk.captions, plan.nested))
    result.decode_errors += chunk.decode_errors
    wanted = job.show - len(result.shown)
    if wanted > 0:
        kept = np.ones(len(chunk), dtype=bool) if piece.keep is None else piece.keep
        shown = zip(chunk.captions[:wanted], piece.scores[:wanted].tolist(), kept[:wanted].tolist(), strict=True)
        result.shown += shown


def _reader(source: Path | BinaryIO | CaptionTable | None, job: FileJob) -> Callable[[], Iterator[CaptionTable]]:
    if isinstance(source, CaptionTable):
        return lambda: iter([source])
    return lambda: iter_tables(source, job.input_format, job.plan.column, job.chunk_rows)


def _is_stream(source: object) -> bool:
    return hasattr(source, "read")


def _is_file(output: object) -> bool:
    """Whether ``output`` is a file to write whole (local, or an object uploaded whole), not a stream."""
    return isinstance(output, Path) or is_remote(output)


def _spooled(stream: BinaryIO, path: Path) -> Path:
    """``stream`` (stdin) copied to the work file ``path``, so it can be read twice."""
    with path.open("wb") as copy:
        shutil.copyfileobj(stream, copy)
    return path


def _progress_bar(show: bool | None) -> Any:
    """A bar over the rows on stderr (by default only when stderr is a terminal); it moves as the
    scorer finishes batches, several times a second, and gets a total from :func:`_setting_total`."""
    if show is False or (show is None and not sys.stderr.isatty()):
        return nullcontext(None)
    from tqdm.auto import tqdm

    return tqdm(unit="row", desc="icc rows")


def _setting_total(chunks: Iterator[CaptionTable], bar: Any, job: FileJob) -> Iterator[CaptionTable]:
    """``chunks``, giving ``bar`` its total (and so an ETA) as they are read: exact for a ready table and
    for Parquet (its metadata), estimated for a text file from the bytes read so far and its size
    (exact once it is read to the end); none for a stream."""
    rows = 0
    exact = len(job.source) if isinstance(job.source, CaptionTable) else None
    for chunk in chunks:
        rows += len(chunk)
        if exact is None and chunk.source is not None and chunk.fmt != "txt" and is_parquet(chunk.source):
            import pyarrow.parquet as pq

            exact = pq.ParquetFile(chunk.source).metadata.num_rows
        total = exact
        if total is None and chunk.bytes_read and chunk.source is not None:
            total = max(rows, round(rows * chunk.source.stat().st_size / chunk.bytes_read))
        if total is not None and total != bar.total:
            bar.total = total
            bar.refresh()
        yield chunk
        del chunk  # not held while the next one is read
