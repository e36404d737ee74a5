"""Sharded jobs: score or filter many shards, one output per input, resumable after any crash.

Layout of an output directory::

    OUT/NAME.EXT            scored or filtered shard (written to a temp file, then renamed)
    OUT/NAME.stats.json     rows, kept, NaN, seconds: written last, it marks the shard done
    OUT/_run.json           the job's settings and inputs (a re-run must match them)
    OUT/_summary.json       totals over all shards, written when every shard is done
    OUT/.icc-work/          raw scores for ranking rules and kept uids, while the job runs;
                            removed once the summary is written
    OUT/.icc.lock           held while a job runs; removed when it ends (a local OUT only)

OUT may be an object store's prefix (``s3://bucket/kept/``, see :mod:`~modeling_icc.utils.locations`):
there every file is uploaded as one object when complete, each shard's stats after its output, so the
stats still mark the shard done; there is no lock (see :func:`~modeling_icc.utils.resumable.locked`).

A finished directory holds the outputs, their stats, ``_run.json`` and ``_summary.json``:
what a re-run needs to see that nothing is left to do (it then changes nothing) and to
refuse other settings. An output deleted after the job finished is redone from its input;
the work files being gone, a ranking rule's scores are then computed again for every shard
(the cuts span all shards), and so are a DataComp subset's kept uids.

Re-running the same command resumes: shards whose stats file and output (as
recorded in the stats: same size) are both present are skipped, anything else is
redone from its input (also an output deleted after the job finished), so no row is
lost or duplicated and every output keeps its input's row order. The settings in
``_run.json`` bind the directory only once some work is saved: a run that failed
before finishing anything (a typo in ``--column``) does not block the corrected one
(the resume protocol shared with teacher scoring: :mod:`~modeling_icc.utils.resumable`).
Top-k / top-fraction rank all shards together: a first phase scores every shard
(saving raw scores and the plan's ranking values), a second phase cuts with the cuts the
:class:`~modeling_icc.curation.filter_plan.FilterPlan` fits over every shard, exactly as
:func:`~modeling_icc.curation.selection.keep_mask` would over the concatenated input
(ties broken by shard order, then row order). The cuts are fitted in passes over the
values saved on disk, one shard at a time: the main process's memory does not grow with rows.
"""

from __future__ import annotations

import glob
import json
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from queue import Empty
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from ...scoring.base import ConcretenessScorer
from ...scoring.devices import FORCE_FP32_ENV
from ...utils import resumable
from ...utils.errors import UserInputError
from ...utils.locations import Location, fingerprint, glob_remote, is_remote, location, remove_tree, storage_errors
from ...utils.parent_death import PARENT_ENV
from ...utils.provenance import environment, write_json
from ..columns import flat_captions
from ..filter_plan import Cuts, FilterPlan
from ..io import datacomp
from ..io.compression import table_stem
from ..io.formats import default_output_format, detect_format, output_suffix
from ..io.tables import atomic_output, read_table, write_table
from ..job_spec import JobSpec, ScoringOptions
from . import pieces
from .workers import device_for_rank, end_with, threads_per_worker, worker_count

SUMMARY_FILE = "_summary.json"
STATS_SUFFIX = ".stats.json"
WORK_DIR = ".icc-work"


@dataclass(frozen=True)
class ShardJob:
    """Settings of one sharded run. A ``plan`` without rules scores without filtering (``icc score``).

    ``scoring.model`` names the model every process loads (the model actually loaded, after any fallback).
    ``workers`` processes score shards in parallel; ``scoring.tokenize_workers`` are the tokenizer processes of
    each one's scorer (by default, with several shard workers on GPUs, each gets its share of the cores).
    """

    inputs: tuple[Location, ...]
    output_dir: Location
    scoring: ScoringOptions
    plan: FilterPlan = field(default_factory=FilterPlan)
    input_format: str | None = None
    output_format: str | None = None
    uid_column: str = datacomp.UID_COLUMN
    datacomp_subset: Path | None = None
    workers: int = JobSpec.workers
    progress: bool | None = None

    def settings(self) -> dict[str, Any]:
        """What makes two runs produce the same outputs (recorded in ``_run.json``)."""
        plan, other = self.plan, self.plan.other
        nodes = {"level": plan.level, "aggregate": plan.aggregate, "node_columns": list(plan.node_columns)}
        return {
            "command": "score" if plan.rule is None else "filter",
            "inputs": [fingerprint(path) for path in self.inputs],
            "model": self.scoring.model,
            "device": self.scoring.device,  # as used: resolved by run_shard_job
            "dtype": self.scoring.dtype,
            "compile": self.scoring.compile,
            "column": plan.column,
            "input_format": self.input_format,
            "output_format": self.output_format,
            "rule": None if plan.rule is None else asdict(plan.rule),
            "clip_rule": None if other is None else asdict(other.rule),
            "clip_column": None if other is None else other.column,
            "uid_column": self.uid_column if self.datacomp_subset else None,
            "datacomp_subset": None if self.datacomp_subset is None else str(self.datacomp_subset.resolve()),
            **(nodes if plan.level == "node" or plan.aggregate else {}),  # absent for flat captions
        }


@dataclass(frozen=True)
class Shard:
    """One input shard and the files the job writes for it."""

    input: Location
    input_format: str
    output: Location
    output_format: str
    stats: Location
    raw_scores: Location
    kept_uids: Location

    def done(self, with_uids: bool = False) -> bool:
        """Finished: stats written, and the output (and kept uids, ``with_uids``) still there as written."""
        if not (self.stats.is_file() and self.output.is_file()) or (with_uids and not self.kept_uids.is_file()):
            return False
        recorded = json.loads(self.stats.read_text(encoding="utf-8")).get("output_bytes")
        return recorded is None or recorded == self.output.stat().st_size


@dataclass(frozen=True)
class ShardTask:
    """Work for one shard: ``phase="score"`` only saves raw scores and ranking values; ``"write"`` finishes it."""

    shard: Shard
    phase: str
    cuts: Cuts | None = None


@dataclass
class _Progress:
    rows: tqdm
    shards: tqdm
    report: Callable[[int], None] = field(init=False)

    def __post_init__(self) -> None:
        self.report = self.rows.update


def expand_inputs(patterns: Sequence[str]) -> list[Location]:
    """Files named by paths, URLs and glob patterns (``**`` allowed), sorted per pattern, duplicates dropped."""
    found: list[Location] = []
    for pattern in patterns:
        place = location(pattern)
        if is_remote(place):
            found.extend(_remote_inputs(place, pattern))
        elif glob.has_magic(pattern):
            matches = sorted(Path(p) for p in glob.glob(pattern, recursive=True) if Path(p).is_file())
            if not matches:
                raise UserInputError(f"no file matches {pattern!r}")
            found.extend(matches)
        elif Path(pattern).is_dir():
            raise UserInputError(f"{pattern} is a directory; pass its shards, e.g. '{pattern}/*.parquet'")
        elif not Path(pattern).is_file():
            raise UserInputError(f"input file not found: {pattern}")
        else:
            found.append(Path(pattern))
    return list(dict.fromkeys(found))


def _remote_inputs(place: Location, pattern: str) -> list[Location]:
    """The files a remote path or glob names (a bucket's prefix is a directory, as a local one)."""
    with storage_errors(pattern):
        place.fs.invalidate_cache()  # what is there now, not what this process listed before
        if glob.has_magic(place.path):
            matches = glob_remote(place)
            if not matches:
                raise UserInputError(f"no file matches {pattern!r}")
            return matches
        if place.is_dir():
            raise UserInputError(f"{pattern} is a directory; pass its shards, e.g. '{pattern}/*.parquet'")
        if not place.is_file():
            raise UserInputError(f"input file not found: {pattern}")
        return [place]


def _same_file_key(place: Location) -> object:
    """What names one file whatever the spelling: the resolved path, or the URL."""
    return str(place) if is_remote(place) else place.resolve()


def plan_shards(job: ShardJob) -> list[Shard]:
    """Output, stats and work paths of every input; refuses name clashes and writing over an input."""
    shards, names = [], {}
    inputs = {_same_file_key(path) for path in job.inputs}
    for path in job.inputs:
        fmt = detect_format(path, job.input_format)
        scores_only = fmt == "tar" and job.plan.rule is None  # scores of tar samples, without their images
        out_fmt = job.output_format or ("parquet" if scores_only else default_output_format(fmt, path))
        name = table_stem(path)  # a.jsonl.gz -> a (outputs are not compressed)
        if name in names:
            raise UserInputError(
                f"{names[name]} and {path} would both write {name}.*; run them into separate --output-dir"
            )
        names[name] = path
        output = job.output_dir / f"{name}{output_suffix(out_fmt)}"
        if _same_file_key(output) in inputs:
            raise UserInputError(f"output {output} would overwrite an input shard; choose another --output-dir")
        work = job.output_dir / WORK_DIR
        shards.append(
            Shard(
                path,
                fmt,
                output,
                out_fmt,
                job.output_dir / f"{name}{STATS_SUFFIX}",
                work / f"{name}.raw.npz",
                work / f"{name}.uids.npy",
            )
        )
    return shards


def run_shard_job(job: ShardJob, scorer: ConcretenessScorer | None = None) -> dict[str, Any]:
    """Run (or resume) ``job``; returns the run summary also written to ``_summary.json``.

    ``scorer``: an already loaded scorer to use in this process (``workers=1``);
    worker processes load ``job.scoring.model`` themselves, once each. The job's settings are those of a
    checked :class:`~modeling_icc.curation.job_spec.JobSpec` (:func:`~modeling_icc.curation.engines.jobs.run_job`).
    """
    job = replace(job, workers=worker_count(job.workers, len(job.inputs)))
    if job.datacomp_subset is not None:
        datacomp.check_subset_path(job.datacomp_subset, writable=True)
    shards = plan_shards(job)
    scoring = job.scoring
    execution = scoring.execution()
    job = replace(
        job, scoring=replace(scoring, device=execution.device, dtype=execution.dtype)
    )  # recorded, used by all
    start = time.perf_counter()
    with resumable.locked(job.output_dir):
        _bind_settings(job)
        resumable.remove_partial_files([job.output_dir, job.output_dir / WORK_DIR])
        pending = [shard for shard in shards if not shard.done()]
        # Shards finished by an earlier run whose output has gone since: they are redone, and reported.
        lost = sum(shard.stats.is_file() for shard in pending)
        summary_path = job.output_dir / SUMMARY_FILE
        subset = job.datacomp_subset
        if not pending and summary_path.is_file() and (subset is None or subset.is_file()):
            remove_tree(job.output_dir / WORK_DIR)  # left by an older icc
            return {**json.loads(summary_path.read_text(encoding="utf-8")), "redone_missing_outputs": 0}
        if subset is not None:  # the subset is built from every shard's kept uids: redo shards whose uids are gone
            pending = [shard for shard in shards if not shard.done(with_uids=True)]
        with (
            _progress_bars(len(shards), len(shards) - len(pending), job.progress) as progress,
            _TaskRunner(job, scorer, progress) as runner,
        ):
            tasks = [ShardTask(shard, "write") for shard in pending]
            if job.plan.needs_all_rows and pending:
                unscored = [ShardTask(shard, "score") for shard in shards if not _ranked(shard, job.plan)]
                progress.shards.total += len(unscored)
                runner.run(unscored)
                tasks = _with_cuts(job, shards, pending)
            runner.run(tasks)
        summary = _summary(job, shards, time.perf_counter() - start, runner.processes)
        summary["redone_missing_outputs"] = lost
        write_json(summary_path, summary)
        remove_tree(job.output_dir / WORK_DIR)  # only a running job needs it
    return summary


class _TaskRunner:
    """Runs shard tasks in this process (``workers=1``) or on one process pool kept for the whole job.

    Workers fork from a forkserver that imported this package once, so each
    starts in a fraction of a second and loads its scorer once.
    """

    def __init__(self, job: ShardJob, scorer: ConcretenessScorer | None, progress: _Progress) -> None:
        self.job, self.scorer, self.progress = job, scorer, progress
        self.pool: ProcessPoolExecutor | None = None
        self.reports: Any = None
        #: Processes that scored shards: this one alone, or the most the pool ever ran at once.
        self.processes = 1

    def __enter__(self) -> _TaskRunner:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc_info: object) -> None:
        if self.pool is not None:
            if exc_type is not None and issubclass(exc_type, KeyboardInterrupt):
                # Ctrl-C: stop the shards being written now (each removes its temp files), not after them
                for process in list(self.pool._processes.values()):
                    process.terminate()
            self.pool.shutdown(wait=True, cancel_futures=True)

    def run(self, tasks: list[ShardTask]) -> None:
        if self.job.workers == 1 or len(tasks) <= 1:
            for task in tasks:
                process_shard(self.job, task, self.scorer or self.job.scoring.model, self.progress.report)
                self.progress.shards.update(1)
            return
        pool = self._pool()
        with _sigint_deferred():  # submitting starts workers: none may be left half-started by Ctrl-C
            futures: set[Future] = {pool.submit(_process_in_worker, self.job, task) for task in tasks}
        self.processes = max(self.processes, len(pool._processes))
        while futures:
            finished, futures = wait(futures, timeout=0.2, return_when=FIRST_COMPLETED)
            self._drain()
            for future in finished:
                future.result()
                self.progress.shards.update(1)
        self._drain()

    def _pool(self) -> ProcessPoolExecutor:
        if self.pool is None:
            context = multiprocessing.get_context("forkserver")
            # By name: importing the guard here would tie this process to its own parent.
            context.set_forkserver_preload([f"{__package__}.forkserver_guard", __name__])
            # The server, and the workers it forks, leave Ctrl-C to this process, and die with it.
            with _sigint_ignored(), _environment(PARENT_ENV, str(os.getpid())):
                multiprocessing.forkserver.ensure_running()
            self.reports = context.Queue()
            ranks = context.Value("i", 0)
            self.pool = ProcessPoolExecutor(
                self.job.workers,
                mp_context=context,
                initializer=_init_worker,
                initargs=(ranks, self.reports, self.job.workers, os.getpid()),
            )
        return self.pool

    def _drain(self) -> None:
        while True:
            try:
                self.progress.report(self.reports.get_nowait())
            except Empty:
                return


_WORKER: dict[str, Any] = {}


@contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    """``name=value`` in this process's environment for the block (processes started in it inherit it)."""
    previous = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Processes started in the block ignore Ctrl-C (SIGINT) for their whole life (the disposition
    survives ``exec``). Only for blocks of a few milliseconds: a Ctrl-C during them is lost."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Ctrl-C (SIGINT) during the block is raised as ``KeyboardInterrupt`` once the block is done
    (in the main thread; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    except Exception:
        if received:  # what failed was stopped by the same Ctrl-C (a worker dying as it started)
            raise KeyboardInterrupt from None
        raise
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt


def _exit_on_terminate(signum: int, frame: object) -> None:
    """SIGTERM in a worker: exit through Python, so a shard being written removes its temp file."""
    raise SystemExit(128 + signum)


def _init_worker(ranks: Any, reports: Any, n_workers: int, main_pid: int) -> None:
    _WORKER["commit_check"] = end_with(main_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles Ctrl-C and stops the workers
    signal.signal(signal.SIGTERM, _exit_on_terminate)
    with ranks.get_lock():
        _WORKER["rank"] = ranks.value % n_workers
        ranks.value += 1
    _WORKER["report"] = reports.put
    torch.set_num_threads(threads_per_worker(n_workers))


def _process_in_worker(job: ShardJob, task: ShardTask) -> None:
    device = device_for_rank(job.scoring.device, _WORKER["rank"])
    tokenize_workers = job.scoring.tokenize_workers
    if tokenize_workers is None and device is not None and device.startswith("cuda"):
        tokenize_workers = threads_per_worker(job.workers)  # this process's share of the cores
    job = replace(job, scoring=replace(job.scoring, device=device, tokenize_workers=tokenize_workers))
    process_shard(job, task, job.scoring.model, _WORKER["report"], _WORKER["commit_check"])


def process_shard(
    job: ShardJob,
    task: ShardTask,
    model: str | ConcretenessScorer,
    report: Callable[[int], None],
    commit_check: Callable[[], None] | None = None,
) -> None:
    """Read one shard, score it (or load its saved raw scores), and write what ``task.phase`` asks for.

    ``commit_check`` runs right before each file is renamed into place (a worker: it ends the
    process if the job's main process, holding the lock, is gone).
    """
    shard = task.shard
    start = time.perf_counter()
    table = read_table(shard.input, shard.input_format, column=job.plan.column)
    plan = pieces.bind(job.plan, table, shard.output_format)
    uid_values = table.values(job.uid_column) if job.datacomp_subset is not None else None  # checked before scoring
    digest = pieces.caption_digest(table)
    if shard.raw_scores.is_file():
        with shard.raw_scores.open("rb") as stream, np.load(stream, allow_pickle=False) as saved:
            raw = saved["icc_raw"]
            scored = str(saved["captions_digest"]) if "captions_digest" in saved.files else None
        if scored is not None and scored != digest:  # rewritten in place since: the scores are other captions'
            raise UserInputError(f"{shard.input} changed since its scores were saved; delete {shard.raw_scores}")
        report(len(raw))
    else:
        scorer = replace(job.scoring, model=model).load(cache=True)
        raw = pieces.score(scorer, plan, table, report)
    if len(raw) != len(flat_captions(table.captions, plan.nested)):
        raise UserInputError(f"{shard.input} changed since its scores were saved; delete {shard.raw_scores}")
    if task.phase == "score":
        ranking = {f"rank_{name}": values for name, values in pieces.ranking_values(plan, table, raw).items()}
        with atomic_output(shard.raw_scores, before_rename=commit_check) as stream:
            np.savez(stream, icc_raw=raw, captions_digest=np.array(digest), **ranking)
        return
    model_id = model.model_id if isinstance(model, ConcretenessScorer) else job.scoring.model
    piece = pieces.finish(plan, table, raw, model_id, task.cuts)
    write_table(piece.table, shard.output, shard.output_format, piece.columns, piece.keep, before_rename=commit_check)
    if job.datacomp_subset is not None:
        uids = datacomp.uids_to_array(_kept(uid_values, piece.keep))
        with atomic_output(shard.kept_uids, before_rename=commit_check) as stream:
            np.save(stream, uids, allow_pickle=False)
    stats = {
        "input": str(shard.input),
        "output": str(shard.output),
        "rows": len(table),
        "kept": len(table) if piece.keep is None else int(piece.keep.sum()),
        "nan": int(np.isnan(piece.scores).sum()),
        "decode_errors": table.decode_errors,
        "output_bytes": shard.output.stat().st_size,
        "model": model_id,
        "seconds": round(time.perf_counter() - start, 3),
    }
    if commit_check is not None:
        commit_check()
    write_json(shard.stats, stats)


def _kept(values: list[Any], keep: np.ndarray | None) -> list[Any]:
    return values if keep is None else [values[row] for row in np.flatnonzero(keep)]


def _ranked(shard: Shard, plan: FilterPlan) -> bool:
    """Whether the shard's raw scores and ranking values are saved (an older run may have saved scores only)."""
    if not shard.raw_scores.is_file():
        return False
    with shard.raw_scores.open("rb") as stream, np.load(stream, allow_pickle=False) as saved:
        return all(f"rank_{name}" in saved.files for name in plan.ranked())


def _with_cuts(job: ShardJob, shards: list[Shard], pending: list[Shard]) -> list[ShardTask]:
    """Write tasks carrying each shard's cuts, fitted over the ranking values saved for every shard.

    The values are read back one shard at a time for each pass of
    :meth:`~modeling_icc.curation.filter_plan.FilterPlan.fit_in_passes`, so this process
    holds one shard's values and a histogram, however many rows the job has.
    """
    saved = {name: SavedRankingValues(shards, name) for name in job.plan.ranked()}
    cuts = dict(zip(shards, job.plan.fit_in_passes(saved), strict=True))
    return [ShardTask(shard, "write", cuts[shard]) for shard in pending]


@dataclass(frozen=True)
class SavedRankingValues:
    """One ranking rule's values of every shard, in shard order, read from disk on each iteration."""

    shards: Sequence[Shard]
    name: str

    def __iter__(self) -> Iterator[np.ndarray]:
        for shard in self.shards:
            with shard.raw_scores.open("rb") as stream, np.load(stream, allow_pickle=False) as arrays:
                yield arrays[f"rank_{self.name}"]


def _summary(job: ShardJob, shards: list[Shard], wall_seconds: float, workers: int) -> dict[str, Any]:
    """Totals over every shard; ``workers``: the processes that scored shards in this run."""
    stats = [json.loads(shard.stats.read_text(encoding="utf-8")) for shard in shards]
    rows = sum(item["rows"] for item in stats)
    busy = sum(item["seconds"] for item in stats)
    summary: dict[str, Any] = {
        "command": "score" if job.plan.rule is None else "filter",
        "model": job.scoring.model,
        "rule": None if job.plan.rule is None else job.plan.describe(),
        "clip_rule": None if job.plan.other is None else job.plan.other.describe(),
        "shards": len(shards),
        "rows": rows,
        "kept": sum(item["kept"] for item in stats),
        "nan": sum(item["nan"] for item in stats),
        "decode_errors": sum(item["decode_errors"] for item in stats),
        "seconds_in_shards": round(busy, 3),
        "rows_per_second_per_worker": round(rows / busy, 1) if busy else None,
        "this_run_wall_seconds": round(wall_seconds, 3),
        "workers": workers,
        "environment": environment(job.scoring.device or "auto"),
    }
    if job.datacomp_subset is not None:
        uids, duplicates = datacomp.subset_array(datacomp.load_subset(shard.kept_uids) for shard in shards)
        datacomp.save_subset(job.datacomp_subset, uids)
        summary["datacomp_subset"] = {
            "path": str(job.datacomp_subset),
            "uids": len(uids),
            "duplicates_dropped": duplicates,
        }
    return summary


def _bind_settings(job: ShardJob) -> None:
    """Record the job's settings; a re-run must use the same ones once some work is saved
    (see :mod:`~modeling_icc.utils.resumable`)."""

    def explain(previous: dict[str, Any], changed: list[str]) -> str | None:
        precision = [key for key in ("dtype", "device") if key in changed]
        if not precision:
            return None
        was = ", ".join(f"{key} {previous.get(key) or '(not recorded)'}" for key in precision)
        now = ", ".join(f"{key} {settings[key]}" for key in precision)
        return (
            f"{job.output_dir} holds shards scored with {was}; this run would use {now} (from --dtype, "
            f"--device, {FORCE_FP32_ENV} or the hardware), and mixed shards would not agree: resume with the "
            "settings it was started with, or use a new --output-dir"
        )

    settings = job.settings()
    resumable.bind_settings(
        job.output_dir,
        settings,
        holds_work=_holds_work(job.output_dir),
        advice="resume with the same command, or use a new --output-dir",
        explain=explain,
    )


def _holds_work(output_dir: Location) -> bool:
    """Whether a run saved anything here: a finished shard, a summary, or saved scores or uids."""
    saved = [*output_dir.glob(f"*{STATS_SUFFIX}"), output_dir / SUMMARY_FILE]
    work = output_dir / WORK_DIR
    return any(path.is_file() for path in saved) or (work.is_dir() and any(work.iterdir()))


@contextmanager
def _progress_bars(n_shards: int, n_done: int, show: bool | None) -> Iterator[_Progress]:
    disable = None if show is None else not show  # None: only when stderr is a terminal
    with (
        tqdm(total=n_shards, initial=n_done, unit="shard", desc="icc shards", position=0, disable=disable) as shards,
        tqdm(unit="row", desc="icc rows", position=1, disable=disable) as rows,
    ):
        yield _Progress(rows, shards)
