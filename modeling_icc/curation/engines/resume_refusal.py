"""Why a sharded job refuses to resume an output directory, said in the flags the user typed, with advice that works.

A directory's ``_run.json`` records the settings of the run that started it (:func:`~.output_dir.settings`). A
re-run whose settings differ is refused once the directory holds saved work (:mod:`~modeling_icc.utils.resumable`);
:func:`explain` says what differs as the flags of both runs (``--model mini (this run: --model lite)``), never as
the record's internals (a device or dtype that follows from another model is not named), and advises what
leads to a run that finishes: the recorded flags to resume, or, where the inputs changed since (the directory's
outputs come from the inputs as they were, and a ranking rule's cuts span every shard), a new ``--output-dir``
or the directory deleted to start over.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...scoring.hardware import FORCE_FP32_ENV

#: Settings that follow from the model (a device and dtype are recorded as used): named only for the same model.
PRECISION = ("dtype", "device")
#: How many input paths a message names of each kind before it counts the rest.
NAMED_INPUTS = 3


def explain(directory: object, previous: dict[str, Any], current: dict[str, Any], changed: list[str]) -> str:
    """The one-line refusal of a re-run in ``directory`` whose settings ``current`` differ from the recorded
    ``previous`` in the keys ``changed``."""
    if "model" in changed:
        changed = [key for key in changed if key not in PRECISION]
    flags = [key for key in changed if key != "inputs" and key not in PRECISION]
    precision = [key for key in PRECISION if key in changed]
    inputs = "inputs" in changed
    if precision and not flags and not inputs:  # the same model: its dtype or device came from elsewhere
        was = ", ".join(f"{key} {previous.get(key) or '(not recorded)'}" for key in precision)
        now = ", ".join(f"{key} {current.get(key)}" for key in precision)
        known = all(previous.get(key) for key in precision)
        resume = as_flags(previous, precision) if known else "the dtype and device it was started with"
        return (
            f"{directory} holds shards scored with {was}; this run would use {now} (from --dtype, --device, "
            f"{FORCE_FP32_ENV} or the hardware), and mixed shards would not agree: resume with {resume}, "
            "or use a new --output-dir"
        )
    keys = flags + precision
    differences = [f"{as_flags(previous, keys)} (this run: {as_flags(current, keys)})"] if keys else []
    restorable = True
    if inputs:
        said, restorable = _inputs_differ(previous.get("inputs") or [], current.get("inputs") or [])
        differences.append(f"other inputs ({said})")
    head = f"{directory} holds a run with {' and '.join(differences)}"
    if not restorable:
        return (
            f"{head}; its outputs come from the inputs as they were: use a new --output-dir, or delete "
            f"{directory} to start over"
        )
    resume = [as_flags(previous, keys)] if keys else []
    if inputs:
        resume.append("the --input it was started with (its _run.json lists the files)")
    return f"{head}: resume with {' and '.join(resume)}, or use a new --output-dir"


def as_flags(settings: dict[str, Any], keys: list[str]) -> str:
    """The recorded ``settings`` of ``keys`` as the command-line flags that give them (``--model mini --top-k 5``)."""
    words = [_FLAGS.get(key, _generic(key))(settings.get(key)) for key in keys]
    return " ".join(word for word in words if word) or "the same flags"


def _rule(prefix: str) -> Callable[[Any], str]:
    """A keep rule (``asdict(KeepRule)``) as its flag: ``--threshold 0.5``, ``--and-top-k 5``."""

    def render(rule: dict[str, Any] | None) -> str:
        if not rule:  # icc score (named by the command), or no rule on another column
            return f"no --{prefix}threshold/--{prefix}top-fraction/--{prefix}top-k" if prefix else ""
        name, value = next((name, value) for name, value in rule.items() if value is not None)
        return f"--{prefix}{name.replace('_', '-')} {value}"

    return render


def _option(flag: str) -> Callable[[Any], str]:
    """A valued flag: ``--flag VALUE`` (lists as several values), or ``no --flag`` when not given."""

    def render(value: Any) -> str:
        if value is None or value == []:
            return f"no {flag}"
        return f"{flag} {' '.join(map(str, value)) if isinstance(value, list) else value}"

    return render


def _generic(key: str) -> Callable[[Any], str]:
    return _option(f"--{key.replace('_', '-')}")


_FLAGS: dict[str, Callable[[Any], str]] = {
    "command": lambda command: f"icc {command}",
    "model": _option("--model"),
    "device": _option("--device"),
    "dtype": _option("--dtype"),
    "compile": lambda on: "--compile" if on else "no --compile",
    "column": _option("--column"),
    "input_format": _option("--format"),
    "output_format": _option("--output-format"),
    "rule": _rule(""),
    "clip_rule": _rule("and-"),
    "clip_column": _option("--and-column"),
    "uid_column": _option("--uid-column"),
    "datacomp_subset": _option("--datacomp-subset"),
    "level": _option("--level"),
    "aggregate": _option("--aggregate"),
    "node_columns": _option("--node-columns"),
    "other_languages": _option("--other-languages"),
}


def _inputs_differ(previous: list[dict[str, Any]], current: list[dict[str, Any]]) -> tuple[str, bool]:
    """What differs between two runs' inputs (fingerprints: path, size, modification stamp or checksum), and
    whether the recorded inputs are all still as they were (then resuming with them works)."""
    before = {item["path"]: item for item in previous}
    now = {item["path"]: item for item in current}
    changed = [path for path in now if path in before and before[path] != now[path]]
    new = [path for path in now if path not in before]
    gone = [path for path in before if path not in now]
    parts = [
        _named(changed, "changed since"),
        _named(new, "not in it"),
        _named(gone, "not given now"),
    ]
    said = "; ".join(part for part in parts if part) or "the same files in another order"
    return said, not changed


def _named(paths: list[str], what: str) -> str:
    if not paths:
        return ""
    names = [Path(path).name if "://" not in path else path for path in paths[:NAMED_INPUTS]]
    more = f" and {len(paths) - NAMED_INPUTS} more" if len(paths) > NAMED_INPUTS else ""
    return f"{', '.join(names)}{more} {what}"
