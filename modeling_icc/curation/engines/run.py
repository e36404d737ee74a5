"""Run a job spec: resolve it once into a :class:`~.job.Job`, then run its passes on an executor.

The spec was checked when made; its inputs are found and their formats detected, and only then is the
model loaded, so a typo costs no model load. A single file (or stdin, or given captions) is a job of one
unit (:func:`~.single_file.run_single_file`); ``--output-dir`` makes one unit per shard, resumable
(:func:`~.output_dir.run_sharded`).
"""

from __future__ import annotations

from typing import Any

from ...scoring.languages import forget_languages
from ...scoring.options import Notice, warn
from ...utils.locations import is_url, storage_errors
from ..job_spec import JobSpec
from .job import resolve
from .output_dir import run_sharded
from .single_file import run_single_file
from .unit_result import UnitResult


def run_job(spec: JobSpec, notice: Notice = warn) -> UnitResult | dict[str, Any]:
    """Run ``spec``: a single-file job's :class:`~.unit_result.UnitResult`, or a sharded job's
    summary (also written to the output directory's ``_summary.json``)."""
    remote = [name for name in (spec.output_dir, spec.output, *spec.inputs) if name and is_url(name)]
    try:
        with storage_errors(remote[0] if remote else None):
            job = resolve(spec, notice)
            if job.sharded:
                return run_sharded(job, spec.scoring.load(notice), notice)
            return run_single_file(job, lambda: spec.scoring.load(notice), notice)
    finally:
        forget_languages()  # a job leaves none of its captions held in memory
