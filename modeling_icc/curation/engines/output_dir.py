"""Sharded jobs: one output per input shard in an output directory, resumable after any crash.

Layout of an output directory::

    OUT/NAME.EXT            scored or filtered shard (written to a temp file, then renamed)
    OUT/NAME.stats.json     rows, kept, NaN, seconds: written last, it marks the shard done
    OUT/_run.json           the job's settings and inputs (a re-run must match them)
    OUT/_summary.json       totals over all shards, written when every shard is done (with how many
                            were done by earlier runs: shards_done_before, shards_this_run)
    OUT/.icc-work/          raw scores for ranking rules and kept uids, while the job runs;
                            removed once the summary is written
    OUT/.icc.lock           held while a job runs; removed when it ends (on an object store, the
                            job's lease: :mod:`~modeling_icc.utils.leases`)

OUT may be an object store's prefix (``s3://bucket/kept/``, see :mod:`~modeling_icc.utils.locations`):
there every file is uploaded as one object when complete, each shard's stats after its output, so the
stats still mark the shard done; one job at a time holds the prefix's lease, and checks that it still holds
it before each commit (see :func:`~modeling_icc.utils.resumable.locked`).

A directory is reported finished only when what it holds agrees with its record: the summary of a
finished directory must name this job's command, model, rule and shards, and before a job writes the
summary it checks that ``_run.json`` still records its own settings (another job writing there at the same
time, with an older icc or a lapsed lease, would have replaced it). Otherwise the job stops in one line.

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
Top-k / top-fraction rank all shards together (:func:`~.passes.run_passes`): the first pass saves
each shard's raw scores and ranking values (:class:`~.unit_scores.SavedScores`), and the cuts fitted
over every shard's values keep exactly the rows :func:`~modeling_icc.curation.selection.keep_mask`
would over the concatenated input (ties broken by shard order, then row order).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import asdict, replace
from typing import Any

from ...scoring.base import ConcretenessScorer
from ...scoring.options import Notice, warn
from ...utils import resumable
from ...utils.errors import UserInputError
from ...utils.locations import Location, fingerprint, is_dir, is_file, remove_tree
from ...utils.provenance import environment, write_json
from ..filter_plan import FilterPlan
from ..io import datacomp
from . import resume_refusal
from .in_process import InProcess
from .job import Job
from .passes import LazyScorer, run_passes
from .process_pool import ProcessPool
from .progress import shard_bars
from .shard_files import STATS_SUFFIX, WORK_DIR, ShardFiles, check_work_folder, done
from .single_file import held_while_written

SUMMARY_FILE = "_summary.json"


def run_sharded(job: Job, scorer: ConcretenessScorer, notice: Notice = warn) -> dict[str, Any]:
    """Run (or resume) the sharded ``job``; returns the run summary also written to ``_summary.json``.

    ``scorer``: the loaded scorer this process uses (with one worker); worker processes load the model it
    names themselves, once each. ``notice``: told of a remote lease taken over from a job that is gone.
    """
    # recorded, and used by every worker: the model loaded (after any fallback), where and how it runs
    loaded = replace(job.scoring, model=scorer.model_id, fallback=None)
    execution = loaded.execution()
    job = replace(job, scoring=replace(loaded, device=execution.device, dtype=execution.dtype))
    start = time.perf_counter()
    with resumable.locked(job.output_dir, notice) as still_held, ExitStack() as subset_lock:
        if job.datacomp_subset is not None:  # a file outside the directory: held too, as a single file's
            subset_lock.enter_context(held_while_written(job.datacomp_subset))
        check_work_folder(job.output_dir)
        bound = _bind_settings(job)
        resumable.remove_partial_files([job.output_dir, job.output_dir / WORK_DIR])
        pending = [unit for unit in job.units if not done(job, unit)]
        # Shards finished by an earlier run whose output has gone since: they are redone, and reported.
        lost = sum(is_file(ShardFiles.of(job, unit).stats) for unit in pending)
        summary_path = job.output_dir / SUMMARY_FILE
        subset = job.datacomp_subset
        if not pending and is_file(summary_path) and (subset is None or subset.is_file()):
            remove_tree(job.output_dir / WORK_DIR)  # left by an older icc
            finished = json.loads(summary_path.read_text(encoding="utf-8"))
            _check_summary_agrees(job, finished)
            return {**finished, "redone_missing_outputs": 0, **_resumed(len(job.units), 0)}
        if subset is not None:  # the subset is built from every shard's kept uids: redo shards whose uids are gone
            pending = [unit for unit in job.units if not done(job, unit, with_uids=True)]
        scores = {unit: ShardFiles.of(job, unit).scores for unit in job.units}
        with shard_bars(len(job.units), len(job.units) - len(pending), job.progress) as bars:
            local = InProcess(job, LazyScorer(lambda: scorer, scorer.model_id), bars, bars.done, still_held)
            with ProcessPool(job, local) if job.workers > 1 else local as executor:
                run_passes(job, pending, scores, executor)
        summary = _summary(job, time.perf_counter() - start, executor.processes)
        summary["redone_missing_outputs"] = lost
        summary.update(_resumed(len(job.units) - len(pending), len(pending)))
        _check_record_is_this_jobs(job, bound)
        still_held()
        write_json(summary_path, summary)
        remove_tree(job.output_dir / WORK_DIR)  # only a running job needs it
    return summary


def _resumed(before: int, now: int) -> dict[str, int]:
    """What a run says of its shards: done by earlier runs (kept as they were), and done by this one."""
    return {"shards_done_before": before, "shards_this_run": now}


#: Settings a directory records since a later version, with the value every run before had (that version's
#: default): a directory started before still resumes with it.
SETTINGS_ADDED_LATER = {"other_languages": FilterPlan.other_languages}


def settings(job: Job) -> dict[str, Any]:
    """What makes two runs produce the same outputs (recorded in ``_run.json``)."""
    plan, other, scoring = job.plan, job.plan.other, job.scoring
    nodes = {"level": plan.level, "aggregate": plan.aggregate, "node_columns": list(plan.node_columns)}
    return {
        "command": "score" if plan.rule is None else "filter",
        "inputs": [fingerprint(unit.source) for unit in job.units],
        "model": scoring.model,
        "device": scoring.device,  # as used: resolved by run_sharded
        "dtype": scoring.dtype,
        "compile": scoring.compile,
        "column": plan.column,
        "input_format": job.named_input_format,  # as given (None: detected)
        "output_format": job.named_output_format,
        "rule": None if plan.rule is None else asdict(plan.rule),
        "clip_rule": None if other is None else asdict(other.rule),
        "clip_column": None if other is None else other.column,
        "other_languages": plan.other_languages,
        "uid_column": job.uid_column if job.datacomp_subset else None,
        "datacomp_subset": None if job.datacomp_subset is None else str(job.datacomp_subset.resolve()),
        **(nodes if plan.level == "node" or plan.aggregate else {}),  # absent for flat captions
    }


def _summary_facts(job: Job) -> dict[str, Any]:
    """What a summary says of the job that wrote it, which a finished directory's summary must agree with."""
    return {
        "command": "score" if job.plan.rule is None else "filter",
        "model": job.scoring.model,
        "rule": None if job.plan.rule is None else job.plan.describe(),
        "clip_rule": None if job.plan.other is None else job.plan.other.describe(),
        "shards": len(job.units),
    }


def _check_summary_agrees(job: Job, summary: dict[str, Any]) -> None:
    """Refuse to report a finished directory whose summary is of another job than its ``_run.json`` (two jobs
    wrote there at once: the outputs may be either's)."""
    differ = [(key, value) for key, value in _summary_facts(job).items() if summary.get(key) != value]
    if differ:
        said = ", ".join(f"{key} {summary.get(key)!r} (this job: {value!r})" for key, value in differ)
        raise UserInputError(
            f"{job.output_dir} holds a summary of another job than the one its {resumable.RUN_FILE} records: "
            f"{said}; two jobs wrote there at once (or it was edited), so its outputs cannot be trusted: "
            f"delete {job.output_dir} and run this command again, or use a new --output-dir"
        )


def _check_record_is_this_jobs(job: Job, bound: dict[str, Any]) -> None:
    """Before the summary: ``_run.json`` must still record the settings this job ``bound``, or another job
    wrote the directory meanwhile and its outputs may mix both runs."""
    recorded = resumable.recorded_settings(job.output_dir, SETTINGS_ADDED_LATER) or {}
    changed = [key for key, value in bound.items() if recorded.get(key) != value]
    if changed:
        raise UserInputError(
            f"{job.output_dir}/{resumable.RUN_FILE} no longer records this job's settings ({', '.join(changed)} "
            f"differ): another job wrote to {job.output_dir} while this one ran, so its outputs may mix both "
            f"runs: delete {job.output_dir} and run this command again, or use a new --output-dir"
        )


def _summary(job: Job, wall_seconds: float, workers: int) -> dict[str, Any]:
    """Totals over every shard; ``workers``: the processes that scored shards in this run."""
    stats = [json.loads(ShardFiles.of(job, unit).stats.read_text(encoding="utf-8")) for unit in job.units]
    rows = sum(item["rows"] for item in stats)
    busy = sum(item["seconds"] for item in stats)
    summary: dict[str, Any] = {
        **_summary_facts(job),
        "rows": rows,
        "kept": sum(item["kept"] for item in stats),
        "nan": sum(item["nan"] for item in stats),
        "not_read": sum(item.get("not_read", 0) for item in stats),
        "languages": dict(sum((Counter(item.get("languages", {})) for item in stats), Counter()).most_common()),
        "decode_errors": sum(item["decode_errors"] for item in stats),
        **({"apart": sum(item.get("apart", 0) for item in stats)} if job.plan.writes_apart else {}),
        "seconds_in_shards": round(busy, 3),
        "rows_per_second_per_worker": round(rows / busy, 1) if busy else None,
        "this_run_wall_seconds": round(wall_seconds, 3),
        "workers": workers,
        "environment": environment(job.scoring.device or "auto"),
    }
    if job.datacomp_subset is not None:
        kept = (datacomp.load_subset(ShardFiles.of(job, unit).kept_uids) for unit in job.units)
        uids, duplicates = datacomp.subset_array(kept)
        datacomp.save_subset(job.datacomp_subset, uids)
        summary["datacomp_subset"] = {
            "path": str(job.datacomp_subset),
            "uids": len(uids),
            "duplicates_dropped": duplicates,
        }
    return summary


def _bind_settings(job: Job) -> dict[str, Any]:
    """Record the job's settings, and return them; a re-run must use the same ones once some work is saved
    (see :mod:`~modeling_icc.utils.resumable`)."""
    recorded = settings(job)
    resumable.bind_settings(
        job.output_dir,
        recorded,
        holds_work=_holds_work(job.output_dir),
        advice=f"use a new --output-dir, or delete {job.output_dir} to start over",
        explain=lambda previous, changed: resume_refusal.explain(job.output_dir, previous, recorded, changed),
        added_later=SETTINGS_ADDED_LATER,
    )
    return recorded


def _holds_work(output_dir: Location) -> bool:
    """Whether a run saved anything here: a finished shard, a summary, or saved scores or uids."""
    saved = [*output_dir.glob(f"*{STATS_SUFFIX}"), output_dir / SUMMARY_FILE]
    work = output_dir / WORK_DIR
    return any(is_file(path) for path in saved) or (is_dir(work) and any(work.iterdir()))
