"""The passes of a file job, written once: score, fit the cuts over every row, write what is kept.

Every file job (a single file, stdin or given captions, or shards into an output directory) runs
:func:`run_passes` on an executor, which only runs the tasks it is handed (:mod:`.in_process`,
:mod:`.process_pool`):

1. where a rule ranks rows against each other (top-k, top-fraction), a ``score`` task per unit scores it
   and keeps its raw scores and ranking values (:mod:`.unit_scores`); units whose scores are kept already
   (a resumed job) are not scored again;
2. the cuts are fitted over the ranking values of every unit, in unit then row order, in a few passes over
   the kept values (:meth:`~..filter_plan.FilterPlan.fit_in_passes`: memory does not grow with rows);
3. a ``write`` task per unit reads it again (or for the first time, where no rule ranks), takes the kept
   scores (checking it reads the captions scored) or scores it, cuts it and writes it
   (:func:`write_unit`).

A unit is read in tables of ``job.chunk_rows`` rows (a shard as one table), each checked against the plan
on the first (:func:`open_unit`), and written as it is scored, so memory holds a few tables at a time: a file's
next table is read, and a file output's last table written, in background threads while one is scored
(:mod:`.background`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, closing
from dataclasses import dataclass
from typing import Any, BinaryIO, Literal, Protocol

import numpy as np

from ...scoring.base import ConcretenessScorer
from ...utils.errors import UserInputError
from ...utils.locations import Location
from ..columns import flat_captions, is_arrow, is_nested, to_float_array, to_pylist
from ..filter_plan import Cuts, FilterPlan
from ..io import compression, datacomp
from ..io.formats import open_writer
from ..io.outputs import atomic_output
from ..io.table import CaptionTable, missing_column_message
from ..io.tables import iter_tables, read_table
from ..io.writers import TableWriter
from . import pieces
from .background import read_ahead, written_behind
from .job import Job, Unit
from .progress import Progress
from .shard_files import commit_unit
from .unit_result import UnitResult
from .unit_scores import ChainedRanking, UnitScores, languages_array

#: A table read, with the raw score and the language of every caption (flat; languages ``None`` where they are
#: to be named when the table is written: scores an older icc kept from a first pass).
Scored = tuple[CaptionTable, np.ndarray, list[str | None] | None]


class LazyScorer:
    """A job's scorer, loaded when a task first needs it (after the unit's first table is checked, so a
    wrong column costs no model load), and the id its scores record, known without loading where given."""

    def __init__(self, load: Callable[[], ConcretenessScorer], model_id: str | None = None) -> None:
        self._load, self._model_id = load, model_id
        self._scorer: ConcretenessScorer | None = None
        #: When the scorer was loaded (``time.perf_counter``): a job's time is counted from then.
        self.loaded_at: float | None = None

    def __call__(self) -> ConcretenessScorer:
        if self._scorer is None:
            self._scorer = self._load()
            self.loaded_at = time.perf_counter()
        return self._scorer

    @property
    def model_id(self) -> str:
        return self._model_id if self._model_id is not None else self().model_id


@dataclass(frozen=True)
class Task:
    """Work on one unit: ``"score"`` keeps its scores in ``scores``; ``"write"`` writes it, with the ``cuts`` of
    each of its tables (ranking rules; ``None``: none), taking the kept ``scores`` where they are saved."""

    unit: Unit
    phase: Literal["score", "write"]
    scores: UnitScores | None = None
    cuts: Sequence[Cuts] | None = None


class Executor(Protocol):
    """Runs tasks: in this process, or on worker processes. Results come back in task order."""

    def run(self, tasks: list[Task]) -> list[UnitResult | None]: ...


def run_passes(
    job: Job, pending: Sequence[Unit], scores: Mapping[Unit, UnitScores], executor: Executor
) -> list[UnitResult | None]:
    """Write the ``pending`` units of ``job`` (see the module docstring); ``scores`` of every unit."""
    cuts: Mapping[Unit, Sequence[Cuts]] = {}
    if job.needs_all_rows and pending:
        ranked = job.plan.ranked()
        executor.run([Task(unit, "score", scores[unit]) for unit in job.units if not scores[unit].saved(ranked)])
        cuts = fit_cuts(job.plan, [scores[unit] for unit in job.units], job.units)
    return executor.run([Task(unit, "write", scores.get(unit), cuts.get(unit)) for unit in pending])


def fit_cuts(plan: FilterPlan, kept: Sequence[UnitScores], units: Sequence[Unit]) -> dict[Unit, list[Cuts]]:
    """Each unit's cuts, table by table, fitted over the kept ranking values of every unit (ties by unit, then
    row order); the values are read back one table at a time for each pass."""
    flat = plan.fit_in_passes({name: ChainedRanking(kept, name) for name in plan.ranked()})
    cuts, start = {}, 0
    for unit, scores in zip(units, kept, strict=True):
        cuts[unit] = flat[start : start + scores.tables]
        start += scores.tables
    return cuts


def run_task(
    job: Job, task: Task, scorer: LazyScorer, progress: Progress, before_commit: Callable[[], None] | None = None
) -> UnitResult | None:
    """One task in this process; a ``write`` task's :class:`UnitResult` (``before_commit``: see :func:`write_unit`)."""
    start = time.perf_counter()
    opened = open_unit(job, task.unit)
    with closing(opened.tables):  # a reading thread stops with the task, also on an error
        if task.phase == "score":
            plan = opened.plan
            with closing(_scored(opened, scorer, progress)) as scored:
                kept = (
                    (raw, pieces.ranking_values(plan, table, raw), pieces.caption_digest(table), languages_array(codes))
                    for table, raw, codes in scored
                )
                task.scores.save(kept, before_commit)
            return None
        result = write_unit(opened, task, job, scorer, progress, before_commit)
    result.seconds = time.perf_counter() - start
    if job.sharded:
        commit_unit(job, task.unit, result, before_commit)
    return result


@dataclass
class OpenedUnit:
    """A unit being read: its plan, checked on its first table, and its tables (the first one included)."""

    unit: Unit
    plan: FilterPlan
    tables: Iterator[CaptionTable]


def open_unit(job: Job, unit: Unit) -> OpenedUnit:
    """``unit`` opened for one read, its first table checked: the plan's columns, whether captions come in
    lists, and the DataComp uid column (before any model is loaded or any row scored)."""
    tables = _tables(job, unit)
    first = next(tables)
    names = unit.fields.names if unit.fields else None
    plan = pieces.bind(job.plan, first, unit.output_format, names)
    if job.show and plan.nested:
        raise UserInputError("--show prints one caption per row; the captions here come in lists")
    if job.datacomp_subset is not None:
        available = names or first.fieldnames
        if job.uid_column not in available and (available or len(first)):  # an empty JSONL input has no columns
            raise UserInputError(missing_column_message(job.uid_column, available, first.source or "input"))
    if not unit.writes_a_file and unit.output_format in ("parquet", "tar"):
        raise UserInputError(
            f"{unit.output_format} output needs a file (--output FILE), not stdout; or pass another --output-format"
        )
    if _in_chunks(job, unit) and not unit.reads_a_stream:  # a stream's rows are read as they come
        tables = read_ahead(tables)
    return OpenedUnit(unit, plan, _starting_with(first, tables))


def _in_chunks(job: Job, unit: Unit) -> bool:
    """Whether ``unit`` is read in tables of ``job.chunk_rows`` rows (not given captions, nor a shard read whole)."""
    return not isinstance(unit.source, CaptionTable) and not job.sharded


def _tables(job: Job, unit: Unit) -> Iterator[CaptionTable]:
    """The unit's tables: captions given as arguments, a shard whole, a file or stream in chunks."""
    if isinstance(unit.source, CaptionTable):
        return iter([unit.source])
    if job.sharded:
        return iter([read_table(unit.source, unit.input_format, column=job.plan.column)])
    return iter_tables(unit.source, unit.input_format, job.plan.column, job.chunk_rows)


def _starting_with(first: CaptionTable, rest: Iterator[CaptionTable]) -> Iterator[CaptionTable]:
    """``first``, then ``rest``; unlike ``itertools.chain``, ``first`` is not kept to the end."""
    yield first
    del first
    yield from rest


def _scored(opened: OpenedUnit, scorer: LazyScorer, progress: Progress) -> Iterator[Scored]:
    """Each table with its raw scores and languages. A file is read ahead of what is written (a scorer on a GPU
    works on the next tables meanwhile, see :func:`~.pieces.score_tables`); a stream (stdin) is not, so that each
    table's rows reach the output once scored, without waiting for the next table's rows to arrive."""
    tables = opened.tables if opened.plan.nested else _told(opened.tables, progress)  # bars count rows
    if not opened.unit.reads_a_stream:
        yield from pieces.score_tables(scorer(), opened.plan, tables, progress.update)
        return
    for table in tables:
        yield from pieces.score_tables(scorer(), opened.plan, [table], progress.update)


def _told(tables: Iterator[CaptionTable], progress: Progress) -> Iterator[CaptionTable]:
    """``tables``, telling ``progress`` of each as it is read."""
    for table in tables:
        progress.read(table)
        yield table
        del table  # not held while the next one is read


def _with_kept_scores(opened: OpenedUnit, scores: UnitScores) -> Iterator[Scored]:
    """Each table with the scores and languages the first pass kept, refusing captions other than those scored."""
    kept = scores.scores()
    changed = scores.changed(opened.unit.source)
    for table in opened.tables:
        raw, digest, languages = next(kept, (None, None, None))
        n_captions = len(flat_captions(table.captions, opened.plan.nested))
        if raw is None or (digest is not None and digest != pieces.caption_digest(table)) or len(raw) != n_captions:
            raise changed
        yield table, raw, languages
        del table, raw, languages
    if next(kept, None) is not None:
        raise changed


def write_unit(
    opened: OpenedUnit,
    task: Task,
    job: Job,
    scorer: LazyScorer,
    progress: Progress,
    before_commit: Callable[[], None] | None = None,
) -> UnitResult:
    """Cut and write every table of ``opened`` as it comes, to a file that appears when complete (or a stream,
    written table by table); ``before_commit`` runs right before the file is renamed into place. Rows in a
    language the model does not read go to the unit's ``apart_output`` where it has one, which appears first."""
    plan, unit = opened.plan, opened.unit
    scored = (
        _with_kept_scores(opened, task.scores)
        if task.scores is not None and task.scores.saved(plan.ranked())
        else _scored(opened, scorer, progress)
    )
    result = UnitResult(scorer.model_id)
    with ExitStack() as stack:
        outputs = [_writer(stack, unit, unit.output, before_commit)]
        if unit.apart_output is not None:  # renamed into place before the output, which marks the unit written
            outputs.append(_writer(stack, unit, unit.apart_output, before_commit))
        submit = stack.enter_context(written_behind()) if _writes_behind(job, unit) else _now
        stack.enter_context(closing(scored))  # on an error here, the scoring generators end now (their settings too)
        for index, (table, raw, languages) in enumerate(scored):
            cuts = None if task.cuts is None else task.cuts[index]
            piece = pieces.finish(plan, table, raw, result.model_id, cuts, languages)
            rows = np.arange(len(table)) if piece.keep is None else np.flatnonzero(piece.keep)
            submit(_write, *outputs[0], piece, rows)
            if len(outputs) > 1:
                apart = np.flatnonzero(piece.apart)
                submit(_write, *outputs[1], piece, apart)
                result.apart += len(apart)
            _account(result, job, plan, table, piece, rows)
            del table, raw, languages, piece, rows  # not held here while the next is read
    result.escaped_line_breaks = sum(writer.escaped_line_breaks for writer, _ in outputs)
    result.base64_columns = list(dict.fromkeys(name for writer, _ in outputs for name in writer.base64_columns))
    return result


def _writer(
    stack: ExitStack, unit: Unit, place: Location | BinaryIO, before_commit: Callable[[], None] | None
) -> tuple[TableWriter, BinaryIO]:
    """A writer of the unit's format into ``place`` (see :func:`_output`), and the stream it writes to."""
    stream = _output(stack, unit, place, before_commit)
    return stack.enter_context(open_writer(stream, unit.output_format, unit.fields)), stream


def _writes_behind(job: Job, unit: Unit) -> bool:
    """Whether ``unit``'s tables are written in a background thread, in order, while the next are scored: those
    of a file read in chunks and written whole. A stream written into (stdout, a FIFO) gets each table from the
    scoring thread as soon as it is scored; a shard is one table."""
    return _in_chunks(job, unit) and unit.renamed_into_place


def _write(writer: TableWriter, stream: BinaryIO, piece: pieces.ScoredPiece, rows: np.ndarray) -> None:
    writer.write(piece.table, piece.columns, rows)
    stream.flush()


def _now(call: Callable[..., object], *args: object) -> None:
    call(*args)


def _output(
    stack: ExitStack, unit: Unit, place: Location | BinaryIO, before_commit: Callable[[], None] | None
) -> BinaryIO:
    """Where rows go: a file written atomically (compressed as its name says), or the unit's stream as it is."""
    if not unit.writes_a_file:
        return place
    stream = stack.enter_context(atomic_output(place, before_rename=before_commit))
    # kept.jsonl.gz: written compressed into the temporary file
    return stack.enter_context(compression.compressed_output(stream, compression.by_extension(place)))


def _account(
    result: UnitResult, job: Job, plan: FilterPlan, table: CaptionTable, piece: pieces.ScoredPiece, rows: np.ndarray
) -> None:
    result.stats.add(piece.scores, piece.languages)
    result.rows += len(table)
    result.kept += len(rows)
    if plan.level == "node":
        result.kept_captions = (result.kept_captions or 0) + sum(len(piece.table.captions[row] or ()) for row in rows)
    result.non_text += sum(not isinstance(caption, str) for caption in flat_captions(table.captions, plan.nested))
    result.decode_errors += table.decode_errors
    if job.datacomp_subset is not None:
        uids = table.values(job.uid_column)
        result.kept_uids.append(datacomp.uids_to_array(uids[row] for row in rows))
    wanted = job.show - len(result.shown)
    if wanted > 0:
        kept = np.ones(len(table), dtype=bool) if piece.keep is None else piece.keep
        result.shown += zip(
            table.captions[:wanted], piece.scores[:wanted].tolist(), kept[:wanted].tolist(), strict=True
        )


def gather(batches: Iterable[Mapping[str, Any]], names: Collection[str]) -> dict[str, Any]:
    """Columns ``names`` of every batch, joined in batch order: what an engine whose rows are Python objects
    (``datasets``, Ray) ranks on one machine (about 8 bytes a row). Arrow columns stay Arrow; others become a
    float array, or a list of rows where they hold lists."""
    parts: dict[str, list[Any]] = {}
    for batch in batches:
        for name in names & batch.keys():
            parts.setdefault(name, []).append(batch[name])
    return {name: _joined(values) for name, values in parts.items()}


def _joined(parts: list[Any]) -> Any:
    if all(is_arrow(part) for part in parts):
        import pyarrow as pa  # imported already: the parts are Arrow arrays

        return pa.chunked_array([chunk for part in parts for chunk in getattr(part, "chunks", [part])])
    rows = [item for part in parts for item in to_pylist(part)]
    return rows if is_nested(rows) else to_float_array(rows)


def fit_in_memory(plan: FilterPlan, columns: Mapping[str, Any], *, ordered: bool = True) -> Cuts:
    """The ranking rules' cuts over every row of ``columns`` (:func:`gather`): ties by row order (``ordered``),
    by the plan's tie-break ids, or else all kept (an engine without a row order, such as Ray)."""
    ids = [columns[plan.tie_break_column]] if plan.tie_break_column else None
    return plan.fit([plan.ranking_values(columns)], ids=ids, ordered=ordered)[0]
