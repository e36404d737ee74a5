"""The JSON fields the cards read from ``icc bench`` results and the pipeline's provenance.

Both files are written by other parts of the project; this module is the one place that
names the fields the cards rely on. Unknown fields are ignored; a missing required field
is a :class:`UserInputError` naming it.

Bench results: the ``NAME.json`` that ``icc bench`` writes (``modeling_icc.evaluation.report``)::

    {"environment": {...},                                   # perf.environment(), optional
     "settings": {"confidence": 0.95, "command": "icc bench ...", ...},   # optional
     "benchmarks": {"captions": {"title": "...", "n": 303, "label": "...", "source": "...",
                                 "selection": "..."}, ...},   # optional
     "results": [{"benchmark": "captions",                   # required
                  "scorer": "lite",                          # required: registry key, path or Hub id
                  "scorer_id": "lite",                       # optional: the model id the scorer reports
                  "label": "lite (pure Python, zero-download)", # optional display name
                  "in_sample": null,                         # optional: why the row is not held out
                  "n": 303,                                  # required
                  "pearson": {"value": 0.74, "low": 0.69, "high": 0.79},   # value null = undefined
                  "spearman": {...}, "kendall": {...}}]}     # each optional

Speed results: the ``NAME.json`` the speed benchmarks write (``benchmarks/speed/*_throughput.py``)::

    {"benchmark": "student_throughput",                      # required: the script's name
     "command": "python benchmarks/speed/...",               # optional (else rebuilt, see speed_command)
     "model": "...", "tokenizer": "...",                     # optional: what was timed
     "captions": {"n": 4096, ...}, "repeats": 5,             # optional settings
     "environment": {...},                                   # optional
     "results": {"captions_per_cpu_second": 26768.4, ...}    # flat rates (lite), or
     "results": {"load_scorer_bfloat16": {"captions_per_s": 1007.6, ...}, ...}}   # one per variant

Provenance: ``icc_provenance.json``, which ``modeling_icc.training.distillation.distill`` writes next to
every distilled student::

    {"backbone": "distilroberta-base",                       # required
     "n_train": 112000, "n_held_out": 5900,                  # n_train required
     "training": {"batch_size": 128, "learning_rate": 1e-4, ...},   # DistillConfig, optional
     "held_out_metrics": {"pearson": 0.9, "spearman": 0.9, ...},    # optional
     "teachers": {"sba": {"text_model": ..., "lm": ...}, "vba": {"text_to_image": ..., "captioner": ...}},
     "combination": {"vba_weight": 1.3, "sba_weight": 0.9, "intercept": -1.0, ...},  # optional
     "n_teacher_scored_captions": 118000, "two_stage": {...}, "target_column": "...",  # optional
     "versions": {...}}                                      # optional
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..utils.errors import UserInputError

#: Name of the caption-concreteness benchmark in bench results.
CAPTION_BENCHMARK = "captions"
#: Correlations in bench results -> metric ids on the Hub (model-index ``metrics.type``).
HUB_METRIC_IDS = {"pearson": "pearsonr", "spearman": "spearmanr", "kendall": "kendalltau"}


@dataclass(frozen=True)
class MetricValue:
    value: float
    ci: tuple[float, float] | None = None


@dataclass(frozen=True)
class BenchRow:
    """One scorer on one benchmark."""

    benchmark: str
    scorer: str
    n: int
    metrics: dict[str, MetricValue]
    scorer_id: str | None = None
    label: str | None = None
    in_sample: str | None = None

    @property
    def display_name(self) -> str:
        return self.label or self.scorer

    def is_scorer(self, name: str) -> bool:
        return name in (self.scorer, self.scorer_id)


@dataclass(frozen=True)
class BenchResults:
    rows: list[BenchRow]
    environment: dict[str, Any] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)
    confidence: float | None = None
    source: str = ""
    #: What each benchmark is (its ``benchmarks`` entry: title, n, label, source, selection).
    info: dict[str, dict] = field(default_factory=dict)
    command: str | None = None

    def scorers(self) -> list[str]:
        return list(dict.fromkeys(row.scorer for row in self.rows))

    def for_scorer(self, name: str) -> list[BenchRow]:
        return [row for row in self.rows if row.is_scorer(name)]

    def for_benchmark(self, benchmark: str) -> list[BenchRow]:
        return [row for row in self.rows if row.benchmark == benchmark]

    def title(self, benchmark: str) -> str:
        return self.titles.get(benchmark, benchmark)


@dataclass(frozen=True)
class Provenance:
    base_model: str
    n_train: int
    n_held_out: int | None = None
    n_teacher_scored: int | None = None
    teachers: dict[str, dict[str, Any]] = field(default_factory=dict)
    combination: dict[str, float] | None = None
    training: dict[str, Any] = field(default_factory=dict)
    held_out_metrics: dict[str, float] = field(default_factory=dict)
    two_stage: bool = False


def _read_json(path: str | os.PathLike, what: str) -> dict:
    path = Path(path)
    if not path.is_file():
        raise UserInputError(f"{what} file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise UserInputError(f"{path}: not valid JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(data, dict):
        raise UserInputError(f"{path}: expected a JSON object at the top level")
    return data


def _require(mapping: dict, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in mapping:
        raise UserInputError(f"{where}: missing required field {key!r}")
    value = mapping[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise UserInputError(f"{where}: field {key!r} must be {names}, got {type(value).__name__}")
    return value


def _metric(value: Any, where: str) -> MetricValue | None:
    """``{"value", "low", "high"}``; None when the value is undefined (a constant scorer)."""
    if not isinstance(value, dict):
        raise UserInputError(f"{where}: expected {{'value': ..., 'low': ..., 'high': ...}}")
    number = value.get("value")
    if number is None:
        return None
    if not isinstance(number, (int, float)) or isinstance(number, bool):
        raise UserInputError(f"{where}: 'value' must be a number or null")
    low, high = value.get("low"), value.get("high")
    interval = (float(low), float(high)) if isinstance(low, (int, float)) and isinstance(high, (int, float)) else None
    return MetricValue(float(number), interval)


def read_bench_results(path: str | os.PathLike) -> BenchResults:
    """Rows of an ``icc bench`` results JSON (see the module docstring for the fields)."""
    data = _read_json(path, "bench results")
    rows = []
    for index, raw in enumerate(_require(data, "results", list, str(path))):
        where = f"{path}: results[{index}]"
        if not isinstance(raw, dict):
            raise UserInputError(f"{where}: expected an object")
        metrics = {name: _metric(raw[name], f"{where}.{name}") for name in HUB_METRIC_IDS if raw.get(name) is not None}
        rows.append(
            BenchRow(
                benchmark=_require(raw, "benchmark", str, where),
                scorer=_require(raw, "scorer", str, where),
                n=_require(raw, "n", int, where),
                metrics={name: metric for name, metric in metrics.items() if metric is not None},
                scorer_id=raw.get("scorer_id"),
                label=raw.get("label"),
                in_sample=raw.get("in_sample") or None,
            )
        )
    if not rows:
        raise UserInputError(f"{path}: 'results' is empty")
    benchmarks = data.get("benchmarks") or {}
    titles = {name: info["title"] for name, info in benchmarks.items() if isinstance(info, dict) and info.get("title")}
    settings = data.get("settings") or {}
    info = {name: entry for name, entry in benchmarks.items() if isinstance(entry, dict)}
    environment = data.get("environment") or {}
    return BenchResults(rows, environment, titles, settings.get("confidence"), str(path), info, settings.get("command"))


@dataclass(frozen=True)
class SpeedResults:
    """One speed benchmark: its rates (captions per second, by variant), what was timed, where, and how."""

    benchmark: str
    rates: dict[str, float]
    command: str
    environment: dict[str, Any] = field(default_factory=dict)
    timed: dict[str, str] = field(default_factory=dict)
    source: str = ""


#: Where the speed benchmarks' scripts live, from the repository root (their results: its ``results/``).
SPEED_BENCHMARKS_DIR = "benchmarks/speed"
#: Which recorded settings each speed script takes back as flags (others: ``--n`` and ``--repeats``).
SPEED_FLAGS = {"student_throughput": ("device", "n", "repeats", "compile")}


def read_speed_results(path: str | os.PathLike) -> SpeedResults:
    """Rates of a speed benchmark's JSON (see the module docstring for the fields)."""
    data = _read_json(path, "speed results")
    where = str(path)
    benchmark = _require(data, "benchmark", str, where)
    rates = {}
    for name, value in _require(data, "results", dict, where).items():
        if isinstance(value, dict) and isinstance(value.get("captions_per_s"), (int, float)):
            rates[name] = float(value["captions_per_s"])
        elif isinstance(value, dict):  # one level of caption sets: {"cc3m": {"mini_float32": {...}}}
            for variant, timing in value.items():
                if isinstance(timing, dict) and isinstance(timing.get("captions_per_s"), (int, float)):
                    rates[f"{variant} ({name})"] = float(timing["captions_per_s"])
        elif name.startswith("captions_per_") and isinstance(value, (int, float)) and "goal" not in name:
            rates[name] = float(value)
    if not rates:
        raise UserInputError(f"{where}: 'results' holds no captions-per-second rate")
    timed = {key: data[key] for key in ("model", "tokenizer") if isinstance(data.get(key), str)}
    return SpeedResults(benchmark, rates, speed_command(data), data.get("environment") or {}, timed, where)


def speed_command(data: dict) -> str:
    """The command that wrote ``data``: as recorded, else rebuilt from the settings it records."""
    if isinstance(data.get("command"), str):
        return data["command"]
    recorded = {
        "device": (data.get("environment") or {}).get("device"),
        "n": (data.get("captions") or {}).get("n"),
        "repeats": data.get("repeats"),
        "compile": any(name.endswith("_compiled") for name in data.get("results") or {}) or None,
    }
    flags = []
    for flag in SPEED_FLAGS.get(data["benchmark"], ("n", "repeats")):
        value = recorded[flag]
        if value is True:
            flags.append(f"--{flag}")
        elif value is not None:
            flags.append(f"--{flag} {value}")
    return " ".join([f"python {SPEED_BENCHMARKS_DIR}/{data['benchmark']}.py", *flags])


def read_provenance(path: str | os.PathLike) -> Provenance:
    """A student's provenance: the JSON file, or the student folder that holds ``icc_provenance.json``."""
    from ..training.distillation.distill import PROVENANCE_FILE

    path = Path(path)
    data = _read_json(path / PROVENANCE_FILE if path.is_dir() else path, "provenance")
    where = str(path)
    combination = data.get("combination")
    weights = ("vba_weight", "sba_weight", "intercept")
    if combination is not None and not all(isinstance(combination.get(k), (int, float)) for k in weights):
        raise UserInputError(f"{where}: 'combination' needs numbers {', '.join(weights)}")
    teachers = data.get("teachers") or {}
    if not isinstance(teachers, dict) or not all(isinstance(value, dict) for value in teachers.values()):
        raise UserInputError(f"{where}: 'teachers' must map teacher names to objects")
    return Provenance(
        base_model=_require(data, "backbone", str, where),
        n_train=_require(data, "n_train", int, where),
        n_held_out=data.get("n_held_out"),
        n_teacher_scored=data.get("n_teacher_scored_captions"),
        teachers=teachers,
        combination={k: float(combination[k]) for k in weights} if combination else None,
        training=dict(data.get("training") or {}),
        held_out_metrics={k: v for k, v in (data.get("held_out_metrics") or {}).items() if isinstance(v, float)},
        two_stage=bool(data.get("two_stage")),
    )
