"""Single-file jobs (``icc score|filter --input FILE|-``): a job of one unit, written to ``--output``, not resumed.

Rows are read, scored and written :data:`~modeling_icc.curation.io.tables.CHUNK_ROWS`
at a time, in input order (:mod:`.passes`), so memory does not grow with the input; a file's next chunk
is read, and a file output's last chunk written, in background threads while one is scored
(:mod:`.background`). A file output is written to a temporary name and renamed when complete; stdout gets
each chunk as soon as it is scored. What is held for the whole input is small and stated here:

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
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO

from ...scoring.base import ConcretenessScorer
from ...scoring.options import Notice, warn
from ...utils.atomic_files import open_work_file, remove_stale_temp_files, temp_file_beside
from ...utils.leases import leased
from ...utils.locations import is_remote
from ...utils.redaction import public_url
from ...utils.resumable import exclusive
from ..io import datacomp
from ..io.formats import VARYING_FIELDS
from ..io.outputs import writes_in_place
from ..io.table import CaptionTable
from ..io.tables import scan_fields
from .in_process import InProcess
from .job import Job, Unit
from .passes import LazyScorer, run_passes
from .progress import row_bar
from .unit_result import UnitResult
from .unit_scores import WorkFileScores

#: Work files of jobs writing to stdout (or a FIFO or device) are named after this, in ``TMPDIR``.
STREAM_SPILL = "icc-stream"
#: The lock file a job holds beside its output file and its DataComp subset file (``.NAME.icc.lock``): two jobs
#: never write one file. Beside an object store's output, a lease object of that name (:mod:`..utils.leases`).
OUTPUT_LOCK_SUFFIX = ".icc.lock"
#: Output formats whose header or schema must name every column before the first row.
_FIXED_COLUMNS = frozenset({"csv", "tsv", "parquet"})


def run_single_file(job: Job, open_scorer: Callable[[], ConcretenessScorer], notice: Notice = warn) -> UnitResult:
    """Score (and filter) the one unit of ``job`` into its output; see the module docstring for memory.

    ``open_scorer`` is called once the input's first rows and columns have been checked,
    so that a wrong file or column fails before a model is loaded. ``notice``: told of a remote output's
    lease taken over from a job that is gone.
    """
    (unit,) = job.units
    before_commit = None
    with ExitStack() as stack:
        base = spill_place(unit.output)
        remove_stale_temp_files(base)  # a killed job's work files, also when this job needs none

        def work_file() -> Path:
            return stack.enter_context(temp_file_beside(base))

        if isinstance(unit.output, Path) and not writes_in_place(unit.output):  # one job per output file at a time
            stack.enter_context(held_while_written(unit.output))
        if is_remote(unit.output):  # one job per output object: a lease beside it (utils/leases.py)
            lease_place = unit.output.with_name(f".{unit.output.name}{OUTPUT_LOCK_SUFFIX}")
            lease = leased(lease_place, public_url(str(unit.output)), notice, guards=unit.output)
            before_commit = stack.enter_context(lease).check
        if job.datacomp_subset is not None:  # and per subset file: two jobs never write one either
            stack.enter_context(held_while_written(job.datacomp_subset))
        unit = _readable_twice(job, unit, work_file)
        job = replace(job, units=(unit,))
        scorer = LazyScorer(open_scorer)
        exact = len(unit.source) if isinstance(unit.source, CaptionTable) else None
        progress = stack.enter_context(row_bar(job.progress, exact))
        scores = {unit: WorkFileScores(work_file)} if job.needs_all_rows else {}
        start = time.perf_counter()
        [result] = run_passes(job, [unit], scores, InProcess(job, scorer, progress, before_commit=before_commit))
        if job.datacomp_subset is not None:
            uids, _ = datacomp.subset_array(result.kept_uids)
            datacomp.save_subset(job.datacomp_subset, uids)
            result.subset_uids = len(uids)
    result.seconds = time.perf_counter() - (scorer.loaded_at or start)  # from the model load on
    return result


def held_while_written(path: Path) -> AbstractContextManager[None]:
    """One job writing the local file ``path`` at a time (a job's output, its DataComp subset): the lock file
    ``.NAME.icc.lock`` held beside where it is written (beside a symlink's target, which is what is written)."""
    place = Path(os.path.realpath(path))
    place.parent.mkdir(parents=True, exist_ok=True)  # as the writer would: resolve checked it may
    return exclusive(
        place.with_name(f".{place.name}{OUTPUT_LOCK_SUFFIX}"),
        busy=f"another icc job is writing {path}",
        unwritable=f"cannot write beside {path}",
    )


def _readable_twice(job: Job, unit: Unit, work_file: Callable[[], Path]) -> Unit:
    """``unit`` ready for its passes: a stream copied to a work file where it is read more than once (a first
    pass, the fields of its rows, Parquet's footer), and the fields collected where the output needs them."""
    needs_fields = unit.input_format in VARYING_FIELDS and unit.output_format in _FIXED_COLUMNS
    if unit.reads_a_stream and (job.needs_all_rows or needs_fields or unit.input_format == "parquet"):
        unit = replace(unit, source=_spooled(unit.source, work_file()))
    if needs_fields and not isinstance(unit.source, CaptionTable):
        fields = scan_fields(
            unit.source, unit.input_format, job.plan.column, arrow_schema=unit.output_format == "parquet"
        )
        unit = replace(unit, fields=fields)
    return unit


def spill_place(output: Path | BinaryIO) -> Path:
    """The name a job's work files are made beside (see :func:`~modeling_icc.utils.atomic_files.temp_file_beside`).

    Beside a file output, named after it; for stdout and outputs written in place (a FIFO,
    ``/dev/stdout``), :data:`STREAM_SPILL` in the system's temporary directory. Either way the
    next job with the same output removes what a killed job left there.
    """
    if isinstance(output, Path) and not writes_in_place(output):
        return Path(os.path.realpath(output))  # where atomic_output writes (through a symlink)
    return Path(tempfile.gettempdir()) / STREAM_SPILL


def _spooled(stream: BinaryIO, path: Path) -> Path:
    """``stream`` (stdin) copied to the work file ``path``, so it can be read twice."""
    with open_work_file(path, "wb") as copy:
        shutil.copyfileobj(stream, copy)
    return path
