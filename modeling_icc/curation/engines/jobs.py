"""Run a job spec: one file (or stdin, or given captions) into one output, or one output per shard.

The spec is checked first, then the input is found and its format detected, and only then is the
model loaded, so a typo costs no model load. Single files go to
:func:`~.single_file.run_file_job`, shards to :func:`~.shards.run_shard_job`.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...utils.errors import UserInputError
from ...utils.locations import is_remote, is_url, location, storage_errors
from ..io import compression
from ..io.formats import default_output_format, detect_format, infer_format
from ..io.readers import check_input_file
from ..io.table import TEXT_COLUMN, CaptionTable
from ..io.text import replace_surrogates
from ..job_spec import JobSpec, Notice, warn

if TYPE_CHECKING:
    from .single_file import FileJob, FileJobResult


def run_job(spec: JobSpec, notice: Notice = warn) -> FileJobResult | dict[str, Any]:
    """Run ``spec``: a single-file job's :class:`~.single_file.FileJobResult`, or a sharded job's
    summary (also written to the output directory's ``_summary.json``)."""
    spec.check()
    remote = [name for name in (spec.output_dir, spec.output, *spec.inputs) if name and is_url(name)]
    with storage_errors(remote[0] if remote else None):
        if spec.sharded:
            return _run_shards(spec, notice)
        from .single_file import run_file_job

        return run_file_job(file_job(spec), lambda: spec.scoring.load(notice))


def given_captions(texts: tuple[str, ...]) -> tuple[list[str], int]:
    """Captions given as arguments, with lone surrogates (an argument's invalid bytes) replaced by U+FFFD,
    as invalid bytes in files are, and how many captions had them."""
    captions = [replace_surrogates(text) for text in texts]
    return captions, sum(text != original for text, original in zip(captions, texts, strict=True))


def file_job(spec: JobSpec) -> FileJob:
    """The single-file job of ``spec``: its input (a file, stdin or given captions) checked, nothing loaded."""
    from .single_file import FileJob

    path = None
    if spec.texts:
        texts, _ = given_captions(spec.texts)
        records = [{TEXT_COLUMN: text} for text in texts]
        source: Any = CaptionTable("txt", TEXT_COLUMN, texts, records=records, fieldnames=[TEXT_COLUMN])
        fmt = "txt"
    elif spec.inputs == ("-",):
        source, fmt = sys.stdin.buffer, spec.input_format or "txt"
    else:
        (name,) = spec.inputs
        source = path = check_input_file(name)
        fmt = detect_format(path, spec.input_format)
    output = None if spec.to_stdout else spec.output
    out_fmt = spec.output_format or _output_format(output, fmt, path)
    if output is not None and out_fmt in ("parquet", "tar") and compression.by_extension(output):
        raise UserInputError(
            f"{out_fmt} output is not compressed as a whole (Parquet compresses its columns, tar members are "
            f"copied): drop the {Path(output).suffix} from {output}"
        )
    return FileJob(
        source,
        fmt,
        sys.stdout.buffer if output is None else location(output),
        out_fmt,
        plan=spec.keep.plan(input_format=fmt),
        **_subset_options(spec),
        show=spec.show,
        progress=spec.progress,
    )


def _output_format(output: str | None, input_format: str, path: Path | None) -> str:
    """From the output's extension; stdout, and a FIFO or device without one (``/dev/stdout``), as the input."""
    from ..io.outputs import writes_in_place

    if output is not None:
        try:
            return infer_format(output, option="--output-format")
        except UserInputError:
            if not writes_in_place(Path(output)):
                raise
    return default_output_format(input_format, path)


def _subset_options(spec: JobSpec) -> dict[str, Any]:
    """The DataComp subset file and uid column of the engines' jobs (their own default column unless given)."""
    subset = None if spec.datacomp_subset is None else Path(spec.datacomp_subset)
    return {"datacomp_subset": subset, **({"uid_column": spec.uid_column} if spec.uid_column else {})}


def _run_shards(spec: JobSpec, notice: Notice) -> dict[str, Any]:
    """One output per input shard, resumable: the model is loaded once the shards are found."""
    from ...scoring.tokenize_workers import usable_cores
    from .shards import ShardJob, expand_inputs, run_shard_job
    from .workers import worker_count

    inputs = tuple(expand_inputs(spec.inputs))
    workers = worker_count(spec.workers, len(inputs))
    if workers < spec.workers:
        notice(
            f"--workers {spec.workers} lowered to {workers} ({len(inputs)} shard"
            f"{'s' * (len(inputs) != 1)}; this process may use {usable_cores()} CPU cores)"
        )
    output_dir = location(spec.output_dir)
    in_memory = [str(place) for place in (*inputs, output_dir) if is_remote(place) and place.protocol == "memory"]
    if workers > 1 and in_memory:
        raise UserInputError(
            f"{in_memory[0]} is in this process's memory, which worker processes do not share: use --workers 1"
        )
    plan = spec.keep.plan(input_format=detect_format(inputs[0], spec.input_format))
    scorer = spec.scoring.load(notice)
    job = ShardJob(
        inputs=inputs,
        output_dir=output_dir,
        scoring=replace(spec.scoring, model=scorer.model_id, fallback=None),
        plan=plan,
        input_format=spec.input_format,
        output_format=spec.output_format,
        workers=workers,
        progress=spec.progress,
        **_subset_options(spec),
    )
    return run_shard_job(job, scorer=scorer)
