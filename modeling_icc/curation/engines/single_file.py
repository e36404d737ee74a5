"""Single-file jobs (``icc score|filter --input FILE|-``): read, score and write in chunks.

Rows are read, scored and written :data:`~modeling_icc.curation.io.readers.CHUNK_ROWS`
at a time, in input order, so memory does not grow with the input. A file output is
written to a temporary name and renamed when complete; stdout gets each chunk as soon as
it is scored. What is held for the whole input is small and stated here:

- top-k / top-fraction rules: one ranking value per row (the raw ICC score, 4 bytes;
  a CLIP column's value, 8 bytes; about 17 bytes more per row while the cut is made).
  A first pass scores every chunk and keeps only these,
  the cut is made with the sharded jobs' :func:`~modeling_icc.curation.selection.rank_cuts`
  (the same rows as one ``keep_mask`` over the whole input, ties by input order), and a
  second pass re-reads the input and writes the kept rows with the saved scores;
- a DataComp subset: 16 bytes per kept row;
- JSONL or tar input written as CSV, TSV or Parquet: a first pass collects every field
  name (and one Arrow schema), since a header must name them all.

A second pass reads the input again, so stdin is then first copied to a temporary file
(as is Parquet from stdin: its footer comes last).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ...scoring.base import ConcretenessScorer
from ...utils.errors import UserInputError
from ..io import datacomp
from ..io.formats import TEXT_COLUMN, VARYING_FIELDS, missing_column_message
from ..io.readers import CHUNK_ROWS, CaptionTable, Fields, iter_tables, scan_fields
from ..io.writers import atomic_output, open_writer
from ..selection import KeepRule, RankCut, piece_mask, rank_cuts

#: Output formats whose header or schema must name every column before the first row.
_FIXED_COLUMNS = frozenset({"csv", "tsv", "parquet"})


@dataclass(frozen=True)
class FileJob:
    """One input (a file, a stream such as stdin, or a ready table) scored into one output.

    ``output`` is a path (written atomically) or a binary stream (written chunk by chunk).
    ``rule=None`` scores without filtering (``icc score``).
    """

    source: Path | BinaryIO | CaptionTable
    input_format: str
    output: Path | BinaryIO
    output_format: str
    column: str = TEXT_COLUMN
    rule: KeepRule | None = None
    clip_rule: KeepRule | None = None
    clip_column: str = "clip_score"
    uid_column: str = "uid"
    datacomp_subset: Path | None = None
    show: int = 0
    chunk_rows: int = CHUNK_ROWS
    progress: bool | None = None

    @property
    def ranking(self) -> bool:
        """Whether a rule compares each row with all others (two passes)."""
        return any(rule is not None and rule.is_ranking for rule in (self.rule, self.clip_rule))

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
    """What a single-file job did, for its summary."""

    model_id: str
    stats: ScoreStats = field(default_factory=ScoreStats)
    kept: int = 0
    non_text: int = 0
    decode_errors: int = 0
    seconds: float = 0.0
    escaped_line_breaks: int = 0
    base64_columns: list[str] = field(default_factory=list)
    subset_uids: int | None = None
    shown: list[tuple[Any, float, bool]] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return self.stats.rows


def run_file_job(job: FileJob, load_scorer: Callable[[], ConcretenessScorer]) -> FileJobResult:
    """Score (and filter) ``job.source`` into ``job.output``; see the module docstring for memory.

    ``load_scorer`` is called once the input's first rows and columns have been checked,
    so that a wrong file or column fails before a model is loaded.
    """
    with ExitStack() as stack:
        read, fields, chunks = _open_input(job, stack)
        scorer = load_scorer()
        start = time.perf_counter()
        result = FileJobResult(scorer.model_id)
        progress = stack.enter_context(_progress_bar(job.progress))
        pieces = _first_pass(job, scorer, chunks, read, progress) if job.ranking else _scored(scorer, chunks, progress)
        stream = stack.enter_context(atomic_output(job.output)) if isinstance(job.output, Path) else job.output
        writer = stack.enter_context(open_writer(stream, job.output_format, fields))
        uid_parts = []
        for chunk, raw, icc_cut, clip_cut in pieces:
            keep = _keep(job, chunk, raw, icc_cut, clip_cut)
            scores = np.clip(raw, 0.0, 1.0)
            rows = np.arange(len(chunk)) if keep is None else np.flatnonzero(keep)
            writer.write(chunk, {"icc_score": scores, "icc_model": [scorer.model_id] * len(chunk)}, rows)
            stream.flush()
            if job.datacomp_subset is not None:
                uid_parts.append(_kept_uids(job, chunk, rows))
            _account(result, job, chunk, scores, keep)
            del chunk, raw, keep, scores, rows  # only one chunk is held while the next is read
    if job.datacomp_subset is not None:
        uids, _ = datacomp.subset_array(uid_parts)
        datacomp.save_subset(job.datacomp_subset, uids)
        result.subset_uids = len(uids)
    result.escaped_line_breaks = writer.escaped_line_breaks
    result.base64_columns = list(writer.base64_columns)
    result.seconds = time.perf_counter() - start
    return result


def _open_input(
    job: FileJob, stack: ExitStack
) -> tuple[Callable[[], Iterator[CaptionTable]], Fields | None, Iterator[CaptionTable]]:
    """``(read, fields, chunks)``: a reader that can start over, the columns when a first pass is
    needed for them, and the chunks of a first read whose columns are already checked."""
    source = job.source
    if _is_stream(source) and (job.ranking or job.needs_fields or job.input_format == "parquet"):
        source = stack.enter_context(_spooled(source))
    fields = None
    if job.needs_fields and not isinstance(source, CaptionTable):
        fields = scan_fields(source, job.input_format, job.column, arrow_schema=job.output_format == "parquet")
    read = _reader(source, job)
    chunks = read()
    first = next(chunks)
    _check_columns(job, fields.names if fields else first.fieldnames, first)
    if not isinstance(job.output, Path) and job.output_format in ("parquet", "tar"):
        raise UserInputError(
            f"{job.output_format} output needs a file (--output FILE), not stdout; or pass another --output-format"
        )
    return read, fields, _starting_with(first, chunks)


def _starting_with(first: CaptionTable, rest: Iterator[CaptionTable]) -> Iterator[CaptionTable]:
    """``first``, then ``rest``; unlike ``itertools.chain``, ``first`` is not kept to the end."""
    yield first
    del first
    yield from rest


Piece = tuple[CaptionTable, np.ndarray, RankCut | None, RankCut | None]


def _first_pass(
    job: FileJob,
    scorer: ConcretenessScorer,
    chunks: Iterator[CaptionTable],
    read: Callable[[], Iterator[CaptionTable]],
    progress: Any,
) -> Iterator[Piece]:
    """Score every chunk keeping only ranking values, cut, then re-read the input with the saved scores."""
    raw_parts, clip_parts = [], []
    for chunk in chunks:
        raw_parts.append(_score(scorer, chunk, progress))
        if job.clip_rule is not None and job.clip_rule.is_ranking:
            clip_parts.append(_clip_values(job, chunk))
        del chunk
    n = len(raw_parts)
    icc_cuts = rank_cuts(raw_parts, job.rule) if job.rule.is_ranking else [None] * n
    clip_cuts = rank_cuts(clip_parts, job.clip_rule) if clip_parts else [None] * n
    for index, chunk in enumerate(read()):
        if index >= n or len(chunk) != len(raw_parts[index]):
            raise UserInputError("the input changed while it was read; run the command again")
        yield chunk, raw_parts[index], icc_cuts[index], clip_cuts[index]
        del chunk


def _scored(scorer: ConcretenessScorer, chunks: Iterator[CaptionTable], progress: Any) -> Iterator[Piece]:
    for chunk in chunks:
        yield chunk, _score(scorer, chunk, progress), None, None
        del chunk


def _keep(
    job: FileJob, chunk: CaptionTable, raw: np.ndarray, icc_cut: RankCut | None, clip_cut: RankCut | None
) -> np.ndarray | None:
    if job.rule is None:
        return None
    keep = piece_mask(job.rule, np.clip(raw, 0.0, 1.0), raw, icc_cut)
    if job.clip_rule is not None:
        values = _clip_values(job, chunk)
        keep &= piece_mask(job.clip_rule, values, values, clip_cut)
    return keep


def _kept_uids(job: FileJob, chunk: CaptionTable, rows: np.ndarray) -> np.ndarray:
    uids = chunk.values(job.uid_column)
    return datacomp.uids_to_array(uids[row] for row in rows)


def _clip_values(job: FileJob, chunk: CaptionTable) -> np.ndarray:
    from ..columns import to_float_array

    return to_float_array(chunk.values(job.clip_column))


def _score(scorer: ConcretenessScorer, chunk: CaptionTable, progress: Any) -> np.ndarray:
    raw = scorer.score(chunk.captions, errors="nan", raw=True)
    if progress is not None:
        progress.update(len(chunk))
    return raw


def _account(result: FileJobResult, job: FileJob, chunk: CaptionTable, scores: np.ndarray, keep: Any) -> None:
    result.stats.add(scores)
    result.kept += len(chunk) if keep is None else int(keep.sum())
    result.non_text += sum(1 for caption in chunk.captions if not isinstance(caption, str))
    result.decode_errors += chunk.decode_errors
    wanted = job.show - len(result.shown)
    if wanted > 0:
        kept = np.ones(len(chunk), dtype=bool) if keep is None else keep
        result.shown += zip(chunk.captions[:wanted], scores[:wanted].tolist(), kept[:wanted].tolist(), strict=True)


def _check_columns(job: FileJob, names: list[str], first: CaptionTable) -> None:
    """Columns the rules and the subset need, checked before any row is scored."""
    needed = []
    if job.clip_rule is not None:
        needed.append(job.clip_column)
    if job.datacomp_subset is not None:
        datacomp.check_subset_path(job.datacomp_subset)
        needed.append(job.uid_column)
    for name in needed:
        if name not in names:
            raise UserInputError(missing_column_message(name, names, first.source or "input"))


def _reader(source: Path | BinaryIO | CaptionTable | None, job: FileJob) -> Callable[[], Iterator[CaptionTable]]:
    if isinstance(source, CaptionTable):
        return lambda: iter([source])
    return lambda: iter_tables(source, job.input_format, job.column, job.chunk_rows)


def _is_stream(source: object) -> bool:
    return hasattr(source, "read")


@contextmanager
def _spooled(stream: BinaryIO) -> Iterator[Path]:
    """``stream`` (stdin) copied to a temporary file, removed afterwards, so it can be read twice."""
    with tempfile.TemporaryDirectory(prefix="icc-stdin-") as directory:
        path = Path(directory) / "stdin"
        with path.open("wb") as copy:
            shutil.copyfileobj(stream, copy)
        yield path


def _progress_bar(show: bool | None) -> Any:
    """A row counter on stderr (by default only when stderr is a terminal)."""
    if show is False or (show is None and not sys.stderr.isatty()):
        return nullcontext(None)
    from tqdm.auto import tqdm

    return tqdm(unit="row", desc="icc rows")
