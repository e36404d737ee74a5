"""A job resolved once: its units (each input with its output), its plan, its scoring options and its sink.

:func:`resolve` turns a checked :class:`~..job_spec.JobSpec` into a :class:`Job`: inputs found (globs
expanded, URLs made locations) and their formats detected, each output and its format named, and every
check that needs no row of the input made (an output that is the input, outputs that would clash, a place
that cannot be written, a DataComp subset file), so that a typo costs neither a read nor a model load.
What needs rows (the caption column, whether captions come in lists) is checked on each unit's first
table by :func:`~.passes.open_unit`.

A single file (or stdin, or captions given as arguments) is a job of one unit written to ``--output``;
``--output-dir`` makes a job of one unit per input shard, written into a resumable output directory
(:mod:`.output_dir`). Either runs through the same passes (:mod:`.passes`) on an executor
(:mod:`.in_process`, :mod:`.process_pool`).
"""

from __future__ import annotations

import glob
import sys
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import BinaryIO

from ...scoring.options import Notice, ScoringOptions
from ...scoring.tokenize_workers import usable_cores
from ...utils.caption_text import replace_surrogates
from ...utils.errors import UserInputError
from ...utils.locations import Location, glob_remote, is_pattern, is_remote, kind, location, storage_errors
from ..filter_plan import FilterPlan
from ..io import compression, datacomp
from ..io.formats import default_output_format, detect_format, infer_format, output_suffix
from ..io.outputs import check_writable, refuse_writing_over_input, writes_in_place
from ..io.readers import check_input_file
from ..io.table import TEXT_COLUMN, CaptionTable, Fields
from ..io.tables import CHUNK_ROWS
from ..job_spec import JobSpec
from .workers import worker_count

#: What a unit reads: a file (local or remote), a stream (stdin), or captions given as arguments.
Source = Location | BinaryIO | CaptionTable


@dataclass(frozen=True, eq=False)
class Unit:
    """One input written to one output: the only unit of a single-file job, or one shard of a sharded job.

    Units compare (and key the passes' mappings) by identity: a job's units are made once, by :func:`resolve`.

    ``output`` is a file (written atomically) or a binary stream (stdout, written chunk by chunk); ``name``
    is the stem a sharded job names the unit's files after; ``fields``, every column of an input whose rows
    carry different ones (JSONL, tar), collected by a first read where the output's header must name them all.
    ``apart_output``: where the rows in a language the model does not read are written, in the output's
    format, with ``--other-languages apart`` (:func:`apart_path`; ``None``: not written apart).
    """

    source: Source
    input_format: str
    output: Location | BinaryIO
    output_format: str
    name: str = ""
    fields: Fields | None = None
    apart_output: Location | None = None

    @property
    def reads_a_stream(self) -> bool:
        return hasattr(self.source, "read")

    @property
    def writes_a_file(self) -> bool:
        """Whether the output is a file to write whole (local, or an object uploaded whole), not a stream."""
        return isinstance(self.output, Path) or is_remote(self.output)

    @property
    def renamed_into_place(self) -> bool:
        """Whether the output appears whole when complete: a file, not a FIFO or device written into as it comes
        (``/dev/stdout``, :func:`~..io.outputs.writes_in_place`)."""
        return self.writes_a_file and not (isinstance(self.output, Path) and writes_in_place(self.output))


@dataclass(frozen=True)
class Job:
    """A job, resolved: what to read and write (``units``), what to keep (``plan``), how to score (``scoring``).

    ``output_dir`` set makes it a sharded job: one output per unit in that directory, resumable; else its
    one unit is written to its output, and a rerun starts over. ``chunk_rows``: rows read, scored and
    written at a time by a single-file job (a shard is read whole, so that its output is written as one
    table); ``show``: rows returned for display; ``progress``: bars (``None``: when stderr is a terminal);
    ``named_input_format``/``named_output_format``: the formats the spec named (``None``: detected per unit),
    which a sharded job records with its settings.
    """

    units: tuple[Unit, ...]
    plan: FilterPlan = field(default_factory=FilterPlan)
    scoring: ScoringOptions = field(default_factory=ScoringOptions)
    output_dir: Location | None = None
    datacomp_subset: Path | None = None
    uid_column: str = datacomp.UID_COLUMN
    workers: int = JobSpec.workers
    show: int = JobSpec.show
    progress: bool | None = None
    chunk_rows: int = CHUNK_ROWS
    named_input_format: str | None = None
    named_output_format: str | None = None

    @classmethod
    def of_file(
        cls, source: Source, input_format: str, output: Location | BinaryIO, output_format: str, **settings
    ) -> Job:
        """A single-file job of ``source`` into ``output`` (what ``icc score|filter --input FILE`` resolves to)."""
        return cls((Unit(source, input_format, output, output_format),), **settings)

    @property
    def sharded(self) -> bool:
        return self.output_dir is not None

    @property
    def needs_all_rows(self) -> bool:
        """Whether a first pass scores every unit before any is written (a rule ranks rows against each other)."""
        return self.plan.needs_all_rows


def resolve(spec: JobSpec, notice: Notice) -> Job:
    """``spec`` (checked) as a :class:`Job`; nothing is read beyond the first bytes of inputs (their format)."""
    subset = None if spec.datacomp_subset is None else datacomp.check_subset_path(spec.datacomp_subset, writable=True)
    subset_options = {"datacomp_subset": subset, **({"uid_column": spec.uid_column} if spec.uid_column else {})}
    options = {
        **subset_options,
        "scoring": spec.scoring,
        "progress": spec.progress,
        "named_input_format": spec.input_format,
        "named_output_format": spec.output_format,
    }
    if spec.sharded:
        return _sharded_job(spec, notice, options)
    unit = _single_unit(spec)
    plan = spec.keep.plan(input_format=unit.input_format)
    if plan.writes_apart:
        unit = replace(unit, apart_output=_apart_output_of(unit))
    return Job((unit,), plan, show=spec.show, **options)


#: What the file of rows written apart (``--other-languages apart``) adds to its output's name, before the
#: format's extension: ``kept.jsonl.gz`` -> ``kept.other-languages.jsonl.gz``.
APART_INFIX = ".other-languages"


def apart_path(output: Location) -> Location:
    """The file beside ``output`` that receives the rows in a language the model does not read."""
    stem = compression.table_stem(output.name)
    return output.with_name(stem + APART_INFIX + output.name[len(stem) :])


def _apart_output_of(unit: Unit) -> Location:
    """The single unit's file of rows written apart, checked like its output: a second file needs a file output."""
    if not unit.renamed_into_place:
        raise UserInputError(
            "--other-languages apart writes those rows to a second file beside the output: pass --output FILE "
            "(or --output-dir), or use --other-languages keep and split on the icc_language column"
        )
    apart = apart_path(unit.output)
    if not is_remote(apart):
        refuse_writing_over_input(unit.source, apart, "the file of rows apart (--other-languages apart)")
        check_writable(apart)
    return apart


def given_captions(texts: tuple[str, ...]) -> tuple[list[str], int]:
    """Captions given as arguments, with lone surrogates (an argument's invalid bytes) replaced by U+FFFD,
    as invalid bytes in files are, and how many captions had them."""
    captions = [replace_surrogates(text) for text in texts]
    return captions, sum(text != original for text, original in zip(captions, texts, strict=True))


def _single_unit(spec: JobSpec) -> Unit:
    """The unit of a single-file job: its input (a file, stdin or given captions) and its output, checked."""
    path = None
    if spec.texts:
        texts, _ = given_captions(spec.texts)
        records = [{TEXT_COLUMN: text} for text in texts]
        source: Source = CaptionTable("txt", TEXT_COLUMN, texts, records=records, fieldnames=[TEXT_COLUMN])
        fmt = "txt"
    elif spec.inputs == ("-",):
        source, fmt = sys.stdin.buffer, spec.input_format or "txt"
    else:
        (name,) = spec.inputs
        with storage_errors(name):
            source = path = check_input_file(name)
            fmt = detect_format(path, spec.input_format)
    output = None if spec.to_stdout else location(spec.output)
    out_fmt = spec.output_format or _output_format(output, fmt, path)
    if output is None:
        return Unit(source, fmt, sys.stdout.buffer, out_fmt)
    if out_fmt in ("parquet", "tar") and compression.by_extension(output):
        raise UserInputError(
            f"{out_fmt} output is not compressed as a whole (Parquet compresses its columns, tar members are "
            f"copied): drop the {Path(output).suffix} from {output}"
        )
    if is_remote(output):
        if str(output) == str(source):
            raise UserInputError(
                f"--output {output} is the input file; write to another file (the input would be lost)"
            )
    else:
        refuse_writing_over_input(source, output)
        check_writable(output)
    return Unit(source, fmt, output, out_fmt)


def _output_format(output: Location | None, input_format: str, path: Location | None) -> str:
    """From the output's extension; stdout, and a FIFO or device without one (``/dev/stdout``), as the input."""
    if output is not None:
        try:
            return infer_format(output, option="--output-format")
        except UserInputError:
            if is_remote(output) or not writes_in_place(output):
                raise
    return default_output_format(input_format, path)


def _sharded_job(spec: JobSpec, notice: Notice, options: dict) -> Job:
    """One unit per input shard, each written into ``spec.output_dir`` under its own name."""
    inputs = expand_inputs(spec.inputs)
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
    units = _shard_units(inputs, output_dir, spec, plan)
    return Job(units, plan, output_dir=output_dir, workers=workers, **options)


def _shard_units(inputs: list[Location], output_dir: Location, spec: JobSpec, plan: FilterPlan) -> tuple[Unit, ...]:
    """Each shard's unit; refuses two shards writing one name and an output that is an input."""
    units, names = [], {}
    known_inputs = {_same_file_key(path) for path in inputs}
    for path in inputs:
        fmt = detect_format(path, spec.input_format)
        scores_only = fmt == "tar" and plan.rule is None  # scores of tar samples, without their images
        out_fmt = spec.output_format or ("parquet" if scores_only else default_output_format(fmt, path))
        name = compression.table_stem(path)  # a.jsonl.gz -> a (outputs are not compressed)
        if name in names:
            raise UserInputError(
                f"{names[name]} and {path} would both write {name}.*; run them into separate --output-dir"
            )
        names[name] = path
        output = output_dir / f"{name}{output_suffix(out_fmt)}"
        apart = apart_path(output) if plan.writes_apart else None
        for written in (output, apart):
            if written is not None and _same_file_key(written) in known_inputs:
                raise UserInputError(f"output {written} would overwrite an input shard; choose another --output-dir")
        units.append(Unit(path, fmt, output, out_fmt, name, apart_output=apart))
    _refuse_apart_clashes(units)
    return tuple(units)


def _refuse_apart_clashes(units: list[Unit]) -> None:
    """A shard whose output is another's file of rows written apart (``a.jsonl`` and ``a.other-languages.jsonl``)
    would have one overwrite the other."""
    outputs = {str(unit.output): unit.source for unit in units}
    for unit in units:
        other = outputs.get(str(unit.apart_output))
        if unit.apart_output is not None and other is not None:
            raise UserInputError(
                f"{other} would write {unit.apart_output}, where --other-languages apart writes the rows of "
                f"{unit.source} in other languages; run them into separate --output-dir"
            )


def expand_inputs(patterns: tuple[str, ...]) -> list[Location]:
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
            raise _a_directory(pattern, Path(pattern))
        elif not Path(pattern).is_file():
            raise UserInputError(f"input file not found: {pattern}")
        else:
            found.append(Path(pattern))
    return list(dict.fromkeys(found))


def _remote_inputs(place: Location, pattern: str) -> list[Location]:
    """The files a remote path or glob names (a bucket's prefix is a directory, as a local one)."""
    with storage_errors(pattern):
        place.fs.invalidate_cache()  # what is there now, not what this process listed before
        if is_pattern(pattern):
            matches = glob_remote(place)
            if not matches:
                raise UserInputError(f"no file matches {pattern!r}")
            return matches
        found = kind(place)  # a failure (timeout, offline Hub) is raised, not taken for "not found"
        if found == "directory":
            raise _a_directory(pattern, place)
        if found != "file":
            raise UserInputError(f"input file not found: {pattern}")
        return [place]


def _a_directory(pattern: str, place: Location) -> UserInputError:
    """The error for a directory given as an input: its shards named by a glob of the extension most of its
    files have among the formats read (the example given is one that works)."""
    suffixes: Counter[str] = Counter()
    for file in place.iterdir():
        if file.name.startswith(".") or not file.is_file():
            continue
        try:
            infer_format(file.name)
        except UserInputError:
            continue
        suffixes[
            compression.table_suffix(file.name) + (file.suffix if compression.by_extension(file.name) else "")
        ] += 1
    if not suffixes:
        return UserInputError(f"{pattern} is a directory with no file in a format icc reads; pass the files to read")
    suffix = suffixes.most_common(1)[0][0]
    return UserInputError(f"{pattern} is a directory; pass its shards, e.g. '{pattern.rstrip('/')}/*{suffix}'")


def _same_file_key(place: Location) -> object:
    """What names one file whatever the spelling: the resolved path, or the URL."""
    return str(place) if is_remote(place) else place.resolve()
