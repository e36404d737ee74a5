"""The checks of every scoring argument, defined once: :func:`~.load.load_scorer` and
:class:`~.options.ScoringOptions` run them as they are called or built.

A wrong type is a ``TypeError``; a value out of range an :class:`~modeling_icc.utils.errors.OptionError`, a
``UserInputError`` that names the argument as Python names it (``batch_size``) and, for the ``icc`` command,
as its flag (``--batch-size``). Whether a device is here, and which dtype names there are, is checked where
the request is resolved (:func:`~.execution.resolve_execution`), which needs the hardware and, for devices,
torch.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from numbers import Integral

from ..utils.errors import OptionError
from .base import ConcretenessScorer


def _type_error(name: str, value: object, expected: str) -> TypeError:
    return TypeError(f"{name} must be {expected}, got {type(value).__name__} {value!r}")


def _is_torch(value: object, kind: str) -> bool:
    """Whether ``value`` is a ``torch.<kind>`` (never, while torch is not imported: none can exist)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, getattr(torch, kind))


def _whole(name: str, value: object) -> None:
    if not isinstance(value, Integral) or isinstance(value, bool):
        raise _type_error(name, value, "a whole number or None")


def positive(name: str, value: object) -> None:
    """A whole number above 0, or ``None`` (the model's own choice)."""
    if value is not None:
        _whole(name, value)
        if value <= 0:
            raise OptionError(f"{{}} must be positive, got {value}", name)


def zero_or_more(name: str, value: object) -> None:
    """A whole number from 0, or ``None`` (the model's own choice)."""
    if value is not None:
        _whole(name, value)
        if value < 0:
            raise OptionError(f"{{}} must be 0 or more, got {value}", name)


def flag(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise _type_error(name, value, "True or False")


def flag_or_none(name: str, value: object) -> None:
    if value is not None and not isinstance(value, bool):
        raise _type_error(name, value, "True, False or None")


def model_path(name: str, value: object) -> None:
    """A model's name, Hub id or local path (``str`` or ``os.PathLike``), or ``None``; never empty."""
    if value is None:
        return
    if not isinstance(value, str | os.PathLike):
        raise _type_error(name, value, "a model name, Hub id or local path (str or os.PathLike), or None")
    if not os.fspath(value).strip():
        raise OptionError("{} is empty: name a model ('mini', 'lite'), a Hub id or a local folder", name)


def model_spec(name: str, value: object) -> None:
    """What :func:`~.load.load_scorer` loads (:func:`model_path`) or a ready :class:`ConcretenessScorer`."""
    if not isinstance(value, ConcretenessScorer):
        model_path(name, value)


def device(name: str, value: object) -> None:
    if value is not None and not isinstance(value, str) and not _is_torch(value, "device"):
        raise _type_error(name, value, "a device name ('cpu', 'cuda', 'cuda:1', 'mps'), a torch.device or None")


def dtype(name: str, value: object) -> None:
    if value is not None and not isinstance(value, str) and not _is_torch(value, "dtype"):
        raise _type_error(name, value, "a dtype name ('float32', 'bfloat16', 'float16'), a torch.dtype or None")


#: The check of each scoring argument, by its name in ``load_scorer`` and ``ScoringOptions``.
CHECKS: dict[str, Callable[[str, object], None]] = {
    "model": model_spec,
    "name_or_path": model_spec,
    "fallback": model_path,
    "device": device,
    "dtype": dtype,
    "batch_size": positive,
    "max_batch_tokens": positive,
    "compile": flag,
    "progress": flag_or_none,
    "cache": flag,
    "tokenize_workers": zero_or_more,
}


def check_arguments(**arguments: object) -> None:
    """Each argument's type and range (see :data:`CHECKS`), in the order given."""
    for name, value in arguments.items():
        CHECKS[name](name, value)
