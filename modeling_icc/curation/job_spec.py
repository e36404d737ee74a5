"""One job, as every engine takes it: what to score, what to keep, where to read and write.

A :class:`JobSpec` is built once (by ``icc score|filter`` from its flags, or by a Python caller)
and checked as it is made: a wrong type is a ``TypeError``, contradictory or unused settings get one
line each (``UserInputError``). Its parts are the options of every engine, each defined with its default,
once, here, in :mod:`~.filter_options` or in :mod:`~modeling_icc.scoring.options`:

- :class:`~modeling_icc.scoring.options.ScoringOptions`: the model and where it runs (every scorer setting
  of a job);
- :class:`~.filter_options.FilterOptions`: what to keep (no rule: score without filtering);
- the job's own fields: inputs and outputs, formats, shard workers, DataComp subset.

Single-file and sharded jobs run a whole spec (:func:`~.engines.run.run_job`); the ``datasets`` and Ray
engines take its scoring and filter parts as keywords (their data are Python objects, not paths).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..scoring.options import ScoringOptions
from ..utils.errors import UserInputError
from ..utils.locations import is_pattern, is_url
from .filter_options import FilterOptions
from .io.formats import FORMATS, INPUT_FORMATS

#: The values ``input_format`` and ``output_format`` take (the format registry's names).
INPUT_FORMAT_NAMES = INPUT_FORMATS
OUTPUT_FORMAT_NAMES = FORMATS


@dataclass(frozen=True)
class JobSpec:
    """One job: read ``inputs`` (paths, quoted globs, ``"-"`` for stdin) or score ``texts``, keep rows by
    ``keep`` (no rule: score only), write ``output`` (``None`` or ``"-"``: stdout) or one output per input
    shard into ``output_dir`` (resumable).

    ``input_format``/``output_format``: ``None`` to detect from the extension and the first bytes (see
    docs/curation.md); ``workers``: processes running shards in parallel; ``show``: the first rows to
    return for display; ``datacomp_subset``: also write the kept rows' ``uid_column`` (``None``: ``uid``)
    as DataComp's subset file; ``progress``: bars (``None``: when stderr is a terminal).
    """

    inputs: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()
    output: str | None = None
    output_dir: str | None = None
    input_format: str | None = None
    output_format: str | None = None
    keep: FilterOptions = field(default_factory=FilterOptions)
    scoring: ScoringOptions = field(default_factory=ScoringOptions)
    datacomp_subset: str | None = None
    uid_column: str | None = None
    workers: int = 1
    show: int = 0
    progress: bool | None = None

    def __post_init__(self) -> None:
        """Each field's type, then every contradiction between them: a spec that exists is a job that can run."""
        for name in ("inputs", "texts"):
            object.__setattr__(self, name, _names(name, getattr(self, name)))
        for name in ("output", "output_dir", "datacomp_subset"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _path_name(name, value))
        for name, kind in (("keep", FilterOptions), ("scoring", ScoringOptions)):
            if not isinstance(getattr(self, name), kind):
                given = type(getattr(self, name)).__name__
                raise TypeError(f"{name} must be a {kind.__name__} (e.g. {kind.__name__}(...)), got {given}")
        for name in ("input_format", "output_format", "uid_column"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a string or None, got {type(getattr(self, name)).__name__}")
        for name in ("workers", "show"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be a whole number, got {type(value).__name__} {value!r}")
        if self.progress not in (None, True, False):
            raise TypeError(f"progress must be True, False or None, got {self.progress!r}")
        self._check()

    @property
    def filters(self) -> bool:
        """Whether rows are kept by a rule (``icc filter``), rather than all scored (``icc score``)."""
        return self.keep.rule is not None

    @property
    def sharded(self) -> bool:
        return self.output_dir is not None

    @property
    def to_stdout(self) -> bool:
        return self.output in (None, "-")

    def _check(self) -> None:
        """Every contradiction between settings, as one line; nothing is read or loaded yet."""
        self.scoring.check()
        if self.show < 0:
            raise UserInputError(f"--show must be 0 or more, got {self.show}")
        for name, value, allowed in (
            ("--format", self.input_format, INPUT_FORMAT_NAMES),
            ("--output-format", self.output_format, OUTPUT_FORMAT_NAMES),
        ):
            if value is not None and value not in allowed:
                raise UserInputError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
        if self.texts and self.inputs:
            raise UserInputError("give captions as arguments or --input, not both")
        if self.texts and (self.input_format or self.keep.column):
            raise UserInputError(
                "--format and --column describe an --input file; captions given as arguments need neither"
            )
        if self.uid_column is not None and self.datacomp_subset is None:
            raise UserInputError(
                "--uid-column names the uids of --datacomp-subset FILE.npy; add it or drop --uid-column"
            )
        if self.datacomp_subset is not None and not self.filters:
            raise UserInputError("a DataComp subset needs a filter rule (use icc filter)")
        if self.datacomp_subset is not None and is_url(self.datacomp_subset):
            raise UserInputError("--datacomp-subset is written to a local file (DataComp's resharder reads it there)")
        if self.sharded:
            self._check_sharded()
        else:
            self._check_single()

    def _check_sharded(self) -> None:
        if self.show:
            raise UserInputError("--show prints the rows of one file; without --output-dir, or read the output shards")
        if not self.inputs:
            raise UserInputError("--output-dir needs --input shards")
        if self.output:
            raise UserInputError("give --output FILE for one input or --output-dir DIR for shards, not both")
        if self.inputs == ("-",):
            raise UserInputError("sharded jobs read files, not stdin")
        if self.workers < 1:
            raise UserInputError(f"--workers must be >= 1, got {self.workers}")

    def _check_single(self) -> None:
        if not self.inputs and not self.texts:
            raise UserInputError("nothing to score: pass captions, --input FILE, or pipe text into --input -")
        if len(self.inputs) > 1 or (self.inputs and is_pattern(self.inputs[0])):
            raise UserInputError("several inputs or a glob need --output-dir DIR (one output per input shard)")
        if self.workers != 1:
            raise UserInputError("--workers applies to sharded jobs; add --output-dir DIR")


def _names(field_name: str, values: object) -> tuple[str, ...]:
    """Inputs or captions as a tuple of strings; one string (or path) is one item, not its characters."""
    if isinstance(values, str | os.PathLike):
        values = (values,)
    if isinstance(values, bytes) or not isinstance(values, Iterable):
        raise TypeError(f"{field_name} must be a list of strings, got {type(values).__name__}")
    items = tuple(os.fspath(value) if isinstance(value, os.PathLike) else value for value in values)
    wrong = next((item for item in items if not isinstance(item, str)), None)
    if wrong is not None:
        raise TypeError(f"{field_name} must hold strings, got {type(wrong).__name__} {wrong!r}")
    return items


def _path_name(field_name: str, value: object) -> str:
    if isinstance(value, str | os.PathLike) and not isinstance(value, bytes):
        return os.fspath(value) if isinstance(value, os.PathLike) else value
    raise TypeError(f"{field_name} must be a path or URL string, got {type(value).__name__} {value!r}")
