"""What scores, as every job and engine takes it: the scoring options and their defaults, defined once.

:class:`ScoringOptions` is the scoring part of a :class:`~modeling_icc.curation.job_spec.JobSpec`:
``icc score|filter`` build it from their flags (each flag's ``dest`` is a field's name), single-file and
sharded jobs take it in the spec, the ``datasets`` and Ray engines take its fields as keywords
(:func:`takes_scoring_options` builds their signatures from it), and the ``evaluate`` module checks its
arguments with it. Its values are checked as it is built, by the checks ``load_scorer`` runs on its own
arguments (``arguments.py``); :meth:`ScoringOptions.check` refuses the options its model would ignore.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from ..utils.errors import OptionError
from ..utils.option_keywords import Result, takes_options
from .arguments import check_arguments
from .execution import Execution
from .load import LITE_MODEL_ID, MINI_MODEL_ID, ModelSpec, fallback_notices, load_scorer, planned_execution

if TYPE_CHECKING:
    import torch

    from .base import ConcretenessScorer

#: What a job reports along the way (a model fallback, fewer workers than asked): one line each.
Notice = Callable[[str], None]


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
    A value of the wrong type is a ``TypeError``, one out of range an
    :class:`~modeling_icc.utils.errors.OptionError` (a ``ValueError``), as the options are built.
    """

    model: ModelSpec = None
    fallback: str | os.PathLike | None = None
    device: str | torch.device | None = None
    dtype: str | torch.dtype | None = None
    batch_size: int | None = None
    compile: bool = False
    tokenize_workers: int | None = None

    def __post_init__(self) -> None:
        check_arguments(**{option.name: getattr(self, option.name) for option in fields(self)})

    def check(self) -> None:
        """Settings the model would ignore are a one-line :class:`~modeling_icc.utils.errors.OptionError` (the ``icc``
        command names them as its flags): lite is pure Python, on the CPU, without batches."""
        if self.model != LITE_MODEL_ID:
            return
        given = {
            "device": self.device not in (None, "cpu"),
            "dtype": self.dtype is not None,
            "compile": self.compile,
            "batch_size": self.batch_size is not None,
        }
        unused = [option for option, used in given.items() if used]
        if unused:
            one = len(unused) == 1
            raise OptionError(
                f"{{}} {'does' if one else 'do'} not apply to {LITE_MODEL_ID} (pure Python, on the CPU, "
                f"no batches): drop {'it' if one else 'them'}, or use {{model}} {MINI_MODEL_ID}",
                *unused,
            )

    def execution(self) -> Execution:
        """The device, dtype and runtime the model runs with (see :func:`~.load.planned_execution`)."""
        return planned_execution(self.model, self.device, self.dtype)

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


#: The engine's parameter that receives the options as one :class:`ScoringOptions` (keyword-only, no default).
OPTIONS_PARAMETER = "scoring_options"


def takes_scoring_options(
    *, model_after: str | None = None
) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """``engine(..., *, scoring_options, ...)`` called with the fields of :class:`ScoringOptions` as its
    keywords, with the spec's defaults, in place of ``scoring_options`` (see
    :func:`~modeling_icc.utils.option_keywords.takes_options`).

    ``model_after``: the engine's parameter after which ``model`` may also be given by position
    (``add_icc_scores(dataset, "caption", "lite")``); ``None``: every option by keyword.
    """
    return takes_options(
        ScoringOptions, OPTIONS_PARAMETER, positional=("model",) * bool(model_after), after=model_after
    )
