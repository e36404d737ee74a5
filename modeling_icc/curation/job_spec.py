"""One job, as every engine takes it: what to score, what to keep, where to read and write.

A :class:`JobSpec` is built once (by ``icc score|filter`` from its flags, or by a Python caller)
and checked as it is made: a wrong type is a ``TypeError``, contradictory or unused settings get one
line each (``UserInputError``).
Its parts are the options of every engine, each defined here or in
:mod:`~.filter_options` with its default, once:

- :class:`ScoringOptions`: the model and where it runs (every scorer setting of a job);
- :class:`~.filter_options.FilterOptions`: what to keep (no rule: score without filtering);
- the job's own fields: inputs and outputs, formats, shard workers, DataComp subset.

Single-file and sharded jobs run a whole spec (:func:`~.engines.jobs.run_job`); the ``datasets`` and Ray
engines take its scoring and filter parts as keywords (their data are Python objects, not paths).
"""

from __future__ import annotations

import glob
import os
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..scoring.load import LITE_MODEL_ID, ModelSpec, fallback_notices, load_scorer
from ..utils.errors import UserInputError
from ..utils.locations import is_url
from .filter_options import FilterOptions
from .io.formats import FORMATS, INPUT_FORMATS

if TYPE_CHECKING:
    import torch

    from ..scoring.base import ConcretenessScorer

#: What a job reports along the way (a model fallback, fewer workers than asked): one line each.
Notice = Callable[[str], None]
#: The values ``input_format`` and ``output_format`` take (the format registry's names).
INPUT_FORMAT_NAMES = INPUT_FORMATS
OUTPUT_FORMAT_NAMES = FORMATS


def warn(line: str) -> None:
    """The default :data:`Notice` of Python callers: a ``UserWarning`` (the CLI prints ``icc: notice: ...``)."""
    warnings.warn(line, stacklevel=3)


@dataclass(frozen=True)
class ScoringOptions:
    """The model and where it runs: every scorer setting of a job, with its default.

    ``model``: a model shipped in the package (``mini``, ``lite``), a Hub id, a local directory or a
    ready scorer (``None``: :func:`~modeling_icc.scoring.load.load_scorer`'s default, mini);
    ``fallback``: the model used, with a notice, where ``model`` cannot be loaded here;
    ``device``/``dtype``: ``None`` for the best available; ``batch_size``: rows per forward pass
    (``None``: the model's own); ``compile``: ``torch.compile`` the model;
    ``tokenize_workers``: tokenizer processes of the scorer (``None``: every core on a GPU, none on a CPU).
    """

    model: ModelSpec = None
    fallback: str | None = None
    device: str | torch.device | None = None
    dtype: str | torch.dtype | None = None
    batch_size: int | None = None
    compile: bool = False
    tokenize_workers: int | None = None

    def check(self) -> None:
        """Bad values, and settings a model would ignore, are one-line errors (named as the flags)."""
        if self.batch_size is not None and self.batch_size <= 0:
            raise UserInputError(f"--batch-size must be positive, got {self.batch_size}")
        if self.tokenize_workers is not None and self.tokenize_workers < 0:
            raise UserInputError(f"--tokenize-workers must be 0 or more, got {self.tokenize_workers}")
        if self.model != LITE_MODEL_ID:
            return
        given = {
            "--device": self.device not in (None, "cpu"),
            "--dtype": self.dtype is not None,
            "--compile": self.compile,
            "--batch-size": self.batch_size is not None,
        }
        unused = [option for option, used in given.items() if used]
        if unused:
            raise UserInputError(
                f"{', '.join(unused)} {'does' if len(unused) == 1 else 'do'} not apply to {LITE_MODEL_ID} "
                f"(pure Python, on the CPU, no batches): drop {'it' if len(unused) == 1 else 'them'}, "
                "or use --model mini"
            )

    def load(self, notice: Notice = warn, *, cache: bool = False) -> ConcretenessScorer:
        """The scorer, or the ``fallback`` model's with a notice; ``cache``: keep the model for the process
        (see :func:`~modeling_icc.scoring.load.load_scorer`). It shows no progress bar of its own: jobs and
        engines show one over all their rows."""
        with fallback_notices() as notices:
            scorer = load_scorer(
                self.model,
                self.device,
                self.dtype,
                self.batch_size,
                fallback=self.fallback,
                cache=cache,
                progress=False,
                compile=self.compile,
                tokenize_workers=self.tokenize_workers,
            )
        for line in notices:
            notice(line)
        return scorer


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
        if len(self.inputs) > 1 or (self.inputs and glob.has_magic(self.inputs[0])):
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
