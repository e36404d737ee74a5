"""The measured figures quoted in the README and the docs equal the committed JSON results they come from.

Figures are copied into Markdown tables by hand, so they go stale when a benchmark is re-run. Each
figure below names its document, its table cell (a row label and a column header) or the phrase
around it, and the JSON value it renders; the test renders the value (rounded half up from the
stored value; a stored value exactly halfway may round either way, since the JSON itself holds
rounded numbers) and looks for it in that cell. A re-run that changes a JSON without the docs, or an
edit of a figure without its JSON, fails here. The README is held tighter: every number in its text
outside code must be one of these figures or an allowed non-measurement (a count, a setting, a name).
It also checks that every relative link of the README and the docs resolves (file and anchor).

Cheap: it reads Markdown and JSON only, no model runs.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_DOWN, ROUND_HALF_UP, Decimal
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted(["README.md", *(f"docs/{path.name}" for path in (ROOT / "docs").glob("*.md"))])

QUALITY = "benchmarks/quality/quality_dev.json"
NOISY = "benchmarks/quality/noisy_captions.json"
STABILITY = "benchmarks/quality/cc3m_noise_stability.json"
JUNK = "benchmarks/quality/web_junk.json"
ONNX = "benchmarks/speed/results/mini_onnx_runtime.json"
RUNTIMES = "benchmarks/speed/results/mini_runtimes.json"
FP32_CEILING = "benchmarks/speed/results/cpu_matmul_ceiling_mini_fp32_avx2.json"
OPENVINO = "benchmarks/speed/results/mini_openvino.json"
GPU = "benchmarks/speed/results/gpu_end_to_end_cuda.json"
GPU_SCORING = "benchmarks/speed/results/gpu_scoring_cuda.json"
GPU_SCORING_EARLIER = "benchmarks/speed/results/gpu_scoring_cuda_slow_junk_check.json"
GPU_TEACHERS = "benchmarks/speed/results/gpu_teachers_cuda.json"
JUNK_CHECK = "benchmarks/speed/results/web_junk_check.json"
MINI_AMX = "benchmarks/speed/results/mini_throughput_cpu.json"
MINI_AVX512 = "benchmarks/speed/results/mini_throughput_cpu_avx512.json"
MINI_AVX2 = "benchmarks/speed/results/mini_throughput_cpu_avx2.json"
MINI_CPU = "benchmarks/speed/results/mini_cpu.json"
STUDENT_CPU = "benchmarks/speed/results/student_throughput_cpu.json"
LITE = "benchmarks/speed/results/lite_throughput.json"
HOST = "benchmarks/speed/results/host_pipeline.json"
COST = "benchmarks/speed/results/cost_tables.json"
STARTUP = "benchmarks/speed/results/startup.json"
STREAMING = "benchmarks/speed/results/cli_streaming.json"
STREAMING_4M = "benchmarks/speed/results/cli_streaming_4m.json"
MINI_REPORT = "modeling_icc/models/mini/data/mini_heads.report.json"
LITE_MODEL = "modeling_icc/models/lite/data/lite_model.json"


# ---------------------------------------------------------------------------------------------- values


@cache
def load(path: str):
    return json.loads((ROOT / path).read_text(encoding="utf-8"))


def get(path: str, *keys):
    """The value at ``keys`` in the JSON file ``path``."""
    value = load(path)
    for key in keys:
        value = value[key]
    return value


def bench_row(path: str, benchmark: str, scorer: str) -> dict:
    """The ``icc bench`` result of ``scorer`` on ``benchmark``."""
    rows = [row for row in load(path)["results"] if row["benchmark"] == benchmark and row["scorer"] == scorer]
    assert len(rows) == 1, f"{path}: {len(rows)} results for {benchmark}/{scorer}"
    return rows[0]


def renderings(value: float, decimals: int, *, scale: float = 1, suffix: str = "") -> set[str]:
    """``value`` x ``scale`` with ``decimals`` decimals and thousands separators, rounded half up; at an
    exact half of the stored value, rounded down as well."""
    exact = Decimal(repr(float(value))) * Decimal(repr(scale))
    step = Decimal(1).scaleb(-decimals)
    return {f"{exact.quantize(step, rounding=mode):,.{decimals}f}{suffix}" for mode in (ROUND_HALF_UP, ROUND_HALF_DOWN)}


def combine(template: str, *options: set[str]) -> set[str]:
    return {template.format(*choice) for choice in itertools.product(*options)}


def ci(stat: dict, decimals: int = 2) -> set[str]:
    """``value [low, high]``."""
    return combine("{} [{}, {}]", *(renderings(stat[key], decimals) for key in ("value", "low", "high")))


# ---------------------------------------------------------------------------------------------- figures


@dataclass(frozen=True)
class Cell:
    """A figure in a table of ``doc``: the row whose first cell is ``row`` (or starts with it, then a
    character that is not part of a word) and the column whose header contains ``column``; ``table``, if
    given, must be part of the table's header row. The cell must contain one of ``expected()``."""

    doc: str
    table: str
    row: str
    column: str
    source: str
    expected: Callable[[], set[str]]


@dataclass(frozen=True)
class Phrase:
    """A figure in the text of ``doc``: one of ``expected()`` must occur in it (code excluded)."""

    doc: str
    source: str
    expected: Callable[[], set[str]]


def count(path: str, *keys) -> Callable[[], set[str]]:
    return lambda: renderings(get(path, *keys), 0)


def rate(path: str, *keys, decimals: int = 0, suffix: str = "") -> Callable[[], set[str]]:
    return lambda: renderings(get(path, *keys), decimals, suffix=suffix)


def phrase(doc: str, source: str, template: str, *values: Callable[[], set[str]]) -> Phrase:
    return Phrase(doc, source, lambda: combine(template, *(value() for value in values)))


def goal_cell(value: float, goal: float, *, higher_is_better: bool, decimals: int = 0) -> set[str]:
    met = value >= goal if higher_is_better else value <= goal
    return {f"{text}: {'met' if met else 'not met'}" for text in renderings(goal, decimals)}


FIGURES: list[Cell | Phrase] = []

# --- README: the model table and the GPU goals --------------------------------------------------------

MODELS = "what it needs"
FIGURES += [
    Cell(
        "README.md",
        MODELS,
        "mini",
        "quality",
        QUALITY,
        lambda: ci(bench_row(QUALITY, "captions_frozen", "mini")["spearman"]),
    ),
    Cell(
        "README.md",
        MODELS,
        "lite",
        "quality",
        QUALITY,
        lambda: {f"in-sample only: {text}" for text in ci(bench_row(QUALITY, "captions_frozen", "lite")["spearman"])},
    ),
    Cell(
        "README.md",
        MODELS,
        "moranyanuka/icc",
        "quality",
        QUALITY,
        lambda: ci(bench_row(QUALITY, "captions_frozen", "published")["spearman"]),
    ),
    Cell(
        "README.md",
        MODELS,
        "mini",
        "CPU with AMX",
        MINI_AMX,
        rate(MINI_AMX, "results", "synthetic", "mini_bfloat16", "captions_per_s", suffix="/s"),
    ),
    Cell(
        "README.md",
        MODELS,
        "lite",
        "CPU with AMX",
        MINI_AMX,
        rate(MINI_AMX, "results", "synthetic", "lite", "captions_per_s", suffix="/s"),
    ),
    Cell(
        "README.md",
        MODELS,
        "moranyanuka/icc",
        "CPU with AMX",
        STUDENT_CPU,
        rate(STUDENT_CPU, "results", "load_scorer_bfloat16", "captions_per_s", suffix="/s"),
    ),
    Cell(
        "README.md",
        MODELS,
        "mini",
        "no AMX",
        MINI_AVX512,
        rate(MINI_AVX512, "results", "synthetic", "mini_bfloat16", "captions_per_s", suffix="/s"),
    ),
    Cell(
        "README.md",
        MODELS,
        "lite",
        "no AMX",
        MINI_AVX512,
        rate(MINI_AVX512, "results", "synthetic", "lite", "captions_per_s", suffix="/s"),
    ),
    Cell(
        "README.md",
        MODELS,
        "mini",
        "AVX2 only",
        MINI_AVX2,
        rate(MINI_AVX2, "results", "synthetic", "mini_float32", "captions_per_s", suffix="/s"),
    ),
    Cell(
        "README.md",
        MODELS,
        "lite",
        "AVX2 only",
        MINI_AVX2,
        rate(MINI_AVX2, "results", "synthetic", "lite", "captions_per_s", suffix="/s"),
    ),
    Cell(
        "README.md",
        MODELS,
        "mini",
        "H200",
        GPU_SCORING,
        rate(GPU_SCORING, "sections", "mini", "captions_per_s", suffix="/s"),
    ),
    Cell(
        "README.md",
        MODELS,
        "moranyanuka/icc",
        "H200",
        GPU_SCORING,
        rate(GPU_SCORING, "sections", "score", "end_to_end_captions_per_s", suffix="/s"),
    ),
    phrase(
        "README.md",
        GPU,
        "the same benchmark gave {}/s and {}/s",
        rate(GPU, "sections", "score", "end_to_end_captions_per_s"),
        rate(GPU, "sections", "mini", "captions_per_s"),
    ),
    phrase(
        "README.md", QUALITY, "{} human-labelled LAION captions", count(QUALITY, "benchmarks", "captions_frozen", "n")
    ),
    phrase("README.md", QUALITY, "({} bootstrap resamples)", count(QUALITY, "settings", "n_bootstrap")),
    phrase("README.md", QUALITY, "the {} annotated captions", count(QUALITY, "benchmarks", "captions", "n")),
    phrase("README.md", MINI_AMX, "on {} synthetic LAION-like captions", count(MINI_AMX, "results", "synthetic", "n")),
    phrase(
        "README.md", MINI_AVX512, "on {} synthetic LAION-like captions", count(MINI_AVX512, "results", "synthetic", "n")
    ),
    phrase("README.md", MINI_AMX, "medians of {}:", count(MINI_AMX, "repeats")),
    phrase("README.md", MINI_AVX512, "medians of {}:", count(MINI_AVX512, "repeats")),
    phrase("README.md", GPU_SCORING, "end to end on {} CC3M captions", count(GPU_SCORING, "captions", "n")),
    phrase(
        "README.md",
        GPU,
        "between the paper's settings and {} GPU-hours",
        count(GPU, "summary", "goals", "teacher_gpu_hours_per_1m"),
    ),
]


def _gpu(*keys):
    return get(GPU, "sections", *keys)


GOALS = "| goal |"
FIGURES += [
    Cell(
        "README.md",
        GOALS,
        "load_scorer(...).score()",
        "measured",
        GPU_SCORING,
        rate(GPU_SCORING, "summary", "end_to_end_captions_per_s"),
    ),
    Cell(
        "README.md",
        GOALS,
        "load_scorer(...).score()",
        "goal",
        GPU_SCORING,
        lambda: goal_cell(
            get(GPU_SCORING, "summary", "end_to_end_captions_per_s"),
            get(GPU_SCORING, "summary", "goals", "end_to_end_captions_per_s"),
            higher_is_better=True,
        ),
    ),
    Cell(
        "README.md",
        GOALS,
        "icc score file to Parquet",
        "measured",
        GPU_SCORING,
        rate(GPU_SCORING, "summary", "cli_rows_per_s"),
    ),
    Cell(
        "README.md",
        GOALS,
        "icc score file to Parquet",
        "goal",
        GPU_SCORING,
        lambda: goal_cell(
            get(GPU_SCORING, "summary", "cli_rows_per_s"),
            get(GPU_SCORING, "summary", "goals", "cli_rows_per_s"),
            higher_is_better=True,
        ),
    ),
    Cell(
        "README.md",
        GOALS,
        "both teachers",
        "measured",
        GPU_TEACHERS,
        rate(GPU_TEACHERS, "summary", "teachers", "both_teachers_gpu_hours_per_1m", decimals=1),
    ),
    Cell(
        "README.md",
        GOALS,
        "both teachers",
        "goal",
        GPU_TEACHERS,
        lambda: goal_cell(
            get(GPU_TEACHERS, "summary", "teachers", "both_teachers_gpu_hours_per_1m"),
            get(GPU_TEACHERS, "summary", "goals", "teacher_gpu_hours_per_1m"),
            higher_is_better=False,
        ),
    ),
]

# --- docs/speed.md -------------------------------------------------------------------------------------

GPU_TABLE = "| what | rate | goal |"
FIGURES += [
    Cell("docs/speed.md", GPU_TABLE, row, "rate", GPU, rate(GPU, "sections", *keys, decimals=decimals))
    for row, keys, decimals in [
        ("load_scorer(...).score(), end to end", ("score", "end_to_end_captions_per_s"), 0),
        ("the same with compile=True", ("score_compiled", "end_to_end_captions_per_s"), 0),
        ("forward only, on pre-tokenized", ("forward", "forward_only_captions_per_s"), 0),
        ("forward only, compiled", ("forward_compiled", "forward_only_captions_per_s"), 0),
        ("icc score --input N.txt --output out.parquet --device cuda", ("cli", "cli_rows_per_s"), 0),
        ("the same including process start-up", ("cli", "rows_per_s_with_startup"), 0),
        ("the same, wall seconds", ("cli", "wall_s_with_startup"), 1),
        ("naive published usage", ("naive", "captions_per_s"), 0),
        ("mini-shaped MiniScorer", ("mini", "captions_per_s"), 0),
        ("tokenizer alone: the transformers call", ("tokenizer", "transformers_call_captions_per_s"), 0),
        ("tokenizer alone: Rust", ("tokenizer", "rust_encode_batch_fast_captions_per_s"), 0),
        ("tokenizer alone: 16-process", ("tokenizer", "worker_pool_captions_per_s"), 0),
    ]
] + [
    Cell(
        "docs/speed.md",
        GPU_TABLE,
        "load_scorer(...).score(), end to end",
        "goal",
        GPU,
        lambda: goal_cell(
            _gpu("score", "end_to_end_captions_per_s"),
            get(GPU, "summary", "goals", "end_to_end_captions_per_s"),
            higher_is_better=True,
        ),
    ),
    Cell(
        "docs/speed.md",
        GPU_TABLE,
        "icc score --input N.txt --output out.parquet --device cuda",
        "goal",
        GPU,
        lambda: goal_cell(
            _gpu("cli", "cli_rows_per_s"), get(GPU, "summary", "goals", "cli_rows_per_s"), higher_is_better=True
        ),
    ),
    phrase(
        "docs/speed.md",
        GPU,
        "tokenizer alone: {}-process",
        lambda: renderings(_gpu("tokenizer", "worker_pool_processes"), 0),
    ),
    phrase("docs/speed.md", GPU, "Captions: {} CC3M validation captions", count(GPU, "captions", "n")),
    phrase("docs/speed.md", GPU, "({} tokens on average)", lambda: renderings(get(GPU, "captions", "mean_tokens"), 1)),
    phrase(
        "docs/speed.md",
        GPU,
        "SBA {} GPU-hours per 1M",
        rate(GPU, "summary", "teachers", "sba_gpu_hours_per_1m", decimals=2),
    ),
    phrase(
        "docs/speed.md",
        GPU,
        "VBA {}, both {}",
        rate(GPU, "summary", "teachers", "vba_gpu_hours_per_1m", decimals=1),
        rate(GPU, "summary", "teachers", "both_teachers_gpu_hours_per_1m", decimals=1),
    ),
]

TODAY_GPU = "| what | captions/s |"
_PROFILE = ("sections", "cli", "profile_top_cumulative")


def _profile_entry(function: str) -> list[str]:
    """The fields of the profile line of ``function``: ncalls, tottime, percall, cumtime, percall, name."""
    [line] = [line for line in get(GPU_SCORING, *_PROFILE) if line.endswith(function)]
    return line.split()


def _profile_total_s() -> float:
    [line] = [line for line in get(GPU_SCORING, *_PROFILE) if "function calls" in line]
    return float(line.split(" in ")[1].split()[0])


_ATTENTION = "{built-in method torch._C._nn.scaled_dot_product_attention}"


def _slowdowns() -> list[float]:
    """d9557bc's rate over today's: score(), mini, icc score."""
    pairs = [("score", "end_to_end_captions_per_s"), ("mini", "captions_per_s"), ("cli", "cli_rows_per_s")]
    return [get(GPU, "sections", *keys) / get(GPU_SCORING, "sections", *keys) for keys in pairs]


FIGURES += [
    Cell("docs/speed.md", TODAY_GPU, row, "captions/s", GPU_SCORING, rate(GPU_SCORING, "sections", *keys))
    for row, keys in [
        ("load_scorer(...).score(), one call", ("score", "end_to_end_captions_per_s")),
        ("the same captions as pieces", ("score", "score_per_piece_captions_per_s")),
        ("the same pieces through one score_stream", ("score", "score_stream_captions_per_s")),
        ("mini-shaped MiniScorer", ("mini", "captions_per_s")),
        ("icc score --input N.txt", ("cli", "cli_rows_per_s")),
        ("the same with the code of eeae7d0", ("cli", "compared_cli_rows_per_s")),
    ]
] + [
    phrase(
        "docs/speed.md",
        GPU,
        "the same benchmark gave {} captions/s for score(), {} for mini and {} rows/s",
        rate(GPU, "sections", "score", "end_to_end_captions_per_s"),
        rate(GPU, "sections", "mini", "captions_per_s"),
        rate(GPU, "sections", "cli", "cli_rows_per_s"),
    ),
    phrase(
        "docs/speed.md",
        GPU_SCORING,
        "today's code is {}-{}x slower",
        lambda: renderings(min(_slowdowns()), 1),
        lambda: renderings(max(_slowdowns()), 1),
    ),
    phrase(
        "docs/speed.md",
        GPU_SCORING,
        "made {} attention calls",
        lambda: renderings(int(_profile_entry(_ATTENTION)[0]), 0),
    ),
    phrase(
        "docs/speed.md",
        GPU_SCORING,
        "{} batches, against {} at d9557bc",
        lambda: renderings(int(_profile_entry(_ATTENTION)[0]) / 6, 0),
        count(GPU, "sections", "forward", "batches"),
    ),
    phrase(
        "docs/speed.md",
        GPU_SCORING,
        "spent {} s of its {} s inside",
        lambda: renderings(float(_profile_entry(_ATTENTION)[1]), 1),
        lambda: renderings(_profile_total_s(), 1),
    ),
    phrase(
        "docs/speed.md",
        GPU_SCORING,
        "{} ms per call on the host",
        lambda: renderings(1000 * float(_profile_entry(_ATTENTION)[1]) / int(_profile_entry(_ATTENTION)[0]), 1),
    ),
    phrase(
        "docs/speed.md",
        GPU_SCORING,
        "ran {}x faster than the pass",
        lambda: renderings(
            get(GPU_SCORING, "sections", "score", "score_stream_captions_per_s")
            / get(GPU_SCORING, "sections", "score", "score_per_piece_captions_per_s"),
            1,
        ),
    ),
    phrase(
        "docs/speed.md",
        GPU_SCORING,
        "{} µs per caption on this Xeon",
        rate(GPU_SCORING, "sections", "score", "read_captions_us_per_caption", decimals=2),
    ),
    phrase(
        "docs/speed.md",
        JUNK_CHECK,
        "{} µs per caption against {} µs for eeae7d0's, {}x",
        rate(JUNK_CHECK, "results", "this tree", "us_per_caption", decimals=2),
        rate(JUNK_CHECK, "results", "compared tree", "us_per_caption", decimals=2),
        rate(JUNK_CHECK, "results", "speedup", decimals=2),
    ),
    phrase("docs/speed.md", JUNK_CHECK, "medians of {} in one run", count(JUNK_CHECK, "repeats")),
    phrase(
        "docs/speed.md",
        JUNK_CHECK,
        "the same verdict on all {} strings",
        count(JUNK_CHECK, "results", "verdicts", "strings"),
    ),
    phrase(
        "docs/speed.md",
        GPU_SCORING,
        "went from {} to {} rows/s in this run ({}x)",
        rate(GPU_SCORING, "sections", "cli", "compared_cli_rows_per_s"),
        rate(GPU_SCORING, "sections", "cli", "cli_rows_per_s"),
        rate(GPU_SCORING, "sections", "cli", "ratio_to_compared", decimals=2),
    ),
    phrase(
        "docs/speed.md",
        GPU_SCORING_EARLIER,
        "{} to {} rows/s ({}x, medians of 2",
        rate(GPU_SCORING_EARLIER, "sections", "cli", "compared_cli_rows_per_s"),
        rate(GPU_SCORING_EARLIER, "sections", "cli", "cli_rows_per_s"),
        rate(GPU_SCORING_EARLIER, "sections", "cli", "ratio_to_compared", decimals=2),
    ),
]

MINI_SPEED = "| lite (1 core) |"
for doc in ("docs/speed.md", "docs/mini.md"):
    for cpu, source in (("AMX", MINI_AMX), ("AVX-512, no AMX", MINI_AVX512)):
        for label, captions in (
            ("first 2,000 CC3M validation captions", "cc3m"),
            ("2,000 synthetic LAION-like captions", "synthetic"),
        ):
            row = f"{cpu} | {label}"  # the first two cells identify the row
            for column, key in (
                ("mini, bf16", "mini_bfloat16"),
                ("mini, fp32", "mini_float32"),
                ("lite (1 core)", "lite"),
            ):
                FIGURES.append(
                    Cell(
                        doc,
                        MINI_SPEED,
                        row,
                        column,
                        source,
                        rate(source, "results", captions, key, "captions_per_s", suffix="/s"),
                    )
                )
            if doc == "docs/speed.md":
                for column, key in (
                    ("lite / mini bf16", "lite_over_mini_bfloat16"),
                    ("lite / mini fp32", "lite_over_mini_float32"),
                ):
                    FIGURES.append(
                        Cell(
                            doc,
                            MINI_SPEED,
                            row,
                            column,
                            source,
                            rate(source, "results", captions, key, decimals=1, suffix="x"),
                        )
                    )
FIGURES += [
    phrase(
        "docs/speed.md",
        MINI_AVX512,
        "at most {} (CC3M) and {} (synthetic)",
        rate(MINI_AVX512, "results", "cc3m", "bf16_vs_fp32", "max_abs", decimals=4),
        rate(MINI_AVX512, "results", "synthetic", "bf16_vs_fp32", "max_abs", decimals=4),
    ),
    phrase(
        "docs/speed.md",
        MINI_AMX,
        "at most {} (CC3M) and {} (synthetic) against fp32 there",
        rate(MINI_AMX, "results", "cc3m", "bf16_vs_fp32", "max_abs", decimals=4),
        rate(MINI_AMX, "results", "synthetic", "bf16_vs_fp32", "max_abs", decimals=4),
    ),
    phrase(
        "docs/speed.md",
        LITE,
        "{} captions per CPU-second and {} per wall-second",
        rate(LITE, "results", "captions_per_cpu_second"),
        rate(LITE, "results", "captions_per_wall_second"),
    ),
]

for doc, table, row_labels in (
    (
        "docs/speed.md",
        "| commit 4428b4e | now | ratio |",
        ('icc score --model mini "a dog"', "icc filter --model mini", 'load_scorer("mini").score(captions)'),
    ),
    (
        "docs/mini.md",
        "| commit 4428b4e | now | ratio |",
        ('icc score --model mini "a dog"', "icc filter --model mini", 'load_scorer("mini").score(captions)'),
    ),
):
    startup, filter_, score = row_labels
    commands = ("results", "commands")
    FIGURES += [
        Cell(
            doc,
            table,
            startup,
            "commit 4428b4e",
            MINI_CPU,
            rate(MINI_CPU, *commands, "startup", "before", "median_s", decimals=2),
        ),
        Cell(
            doc, table, startup, "now", MINI_CPU, rate(MINI_CPU, *commands, "startup", "after", "median_s", decimals=2)
        ),
        Cell(
            doc,
            table,
            startup,
            "ratio",
            MINI_CPU,
            rate(MINI_CPU, *commands, "startup", "speedup", decimals=1, suffix="x"),
        ),
        Cell(
            doc, table, filter_, "commit 4428b4e", MINI_CPU, rate(MINI_CPU, *commands, "filter", "before", "rows_per_s")
        ),
        Cell(doc, table, filter_, "now", MINI_CPU, rate(MINI_CPU, *commands, "filter", "after", "rows_per_s")),
        Cell(
            doc,
            table,
            filter_,
            "ratio",
            MINI_CPU,
            rate(MINI_CPU, *commands, "filter", "speedup", decimals=2, suffix="x"),
        ),
        Cell(
            doc,
            table,
            score,
            "commit 4428b4e",
            MINI_CPU,
            rate(MINI_CPU, "results", "score", "before", "captions_per_s"),
        ),
        Cell(doc, table, score, "now", MINI_CPU, rate(MINI_CPU, "results", "score", "after", "captions_per_s")),
        Cell(
            doc, table, score, "ratio", MINI_CPU, rate(MINI_CPU, "results", "score", "speedup", decimals=2, suffix="x")
        ),
    ]

STUDENT = "| vs naive |"
for row, key, digits in (
    ("naive: the published README's loop", "naive_fp32", None),
    ('load_scorer(..., dtype="float32")', "load_scorer_float32", 1),
    ("load_scorer(...) default here: bf16", "load_scorer_bfloat16", 1),
    ("bf16, the transformers module", "load_scorer_bfloat16_module", 1),
    ("bf16 with compile=True", "load_scorer_bfloat16_compiled", 1),
):
    FIGURES.append(
        Cell(
            "docs/speed.md",
            STUDENT,
            row,
            "captions/s",
            STUDENT_CPU,
            rate(STUDENT_CPU, "results", key, "captions_per_s", decimals=1),
        )
    )
    if digits:
        FIGURES.append(
            Cell(
                "docs/speed.md",
                STUDENT,
                row,
                "vs naive",
                STUDENT_CPU,
                rate(STUDENT_CPU, "results", key, "speedup_vs_naive", decimals=digits, suffix="x"),
            )
        )
FIGURES += [
    phrase(
        "docs/speed.md",
        STUDENT_CPU,
        "max |bf16 - fp32| = {}, p99 {}, mean {}",
        rate(STUDENT_CPU, "accuracy_on_trained_proxy", "bfloat16", "max_abs_deviation", decimals=4),
        rate(STUDENT_CPU, "accuracy_on_trained_proxy", "bfloat16", "p99_abs_deviation", decimals=4),
        rate(STUDENT_CPU, "accuracy_on_trained_proxy", "bfloat16", "mean_abs_deviation", decimals=4),
    ),
    phrase(
        "docs/speed.md",
        STUDENT_CPU,
        "ICC-like scores; {} captions)",
        count(STUDENT_CPU, "accuracy_on_trained_proxy", "n_captions"),
    ),
]


def _host(key: str, process: str) -> Callable[[], set[str]]:
    """CPU-seconds per 100,000 captions of the scoring process ("main") or the workers."""
    n = get(HOST, "captions", "n")
    field = "main_process_cpu_s" if process == "main" else "workers_cpu_s"
    return lambda: renderings(get(HOST, "results", key, field) * 100_000 / n, 2)


HOST_TABLE = "| CPU-seconds per 100,000 captions |"
for row, key, split in (
    ("tokenizer(captions)", "tokenizer_call_transformers", False),
    ("Rust encode_batch_fast", "rust_encode_batch_fast_packed", False),
    ("one tokenizer worker process", "worker_pool_alone_1", None),
    ("pipeline, tokenize_workers=0", "pipeline_workers_0", False),
    ("pipeline, 1 worker", "pipeline_workers_1", True),
    ("pipeline, 2 workers", "pipeline_workers_2", True),
    ("text file -> Parquet, 2 workers", "file_to_parquet_workers_2", True),
):
    FIGURES.append(
        Cell("docs/speed.md", HOST_TABLE, row, "captions/s (wall)", HOST, rate(HOST, "results", key, "captions_per_s"))
    )
    if split is None:  # the pool alone: the workers' CPU
        cpu = _host(key, "workers")
    elif split:
        workers, main = _host(key, "workers"), _host(key, "main")
        cpu = lambda workers=workers, main=main: combine("{} / {}", workers(), main())  # noqa: E731
    else:
        cpu = _host(key, "main")
    FIGURES.append(Cell("docs/speed.md", HOST_TABLE, row, "CPU-seconds", HOST, cpu))
FIGURES += [
    phrase(
        "docs/speed.md",
        HOST,
        "A tokenizer worker does {} captions per CPU-second",
        rate(HOST, "summary", "per_worker_cpu_second_captions"),
    ),
    phrase(
        "docs/speed.md",
        HOST,
        "a ceiling of {}M captions/s",
        lambda: renderings(get(HOST, "summary", "main_process_ceiling_captions_per_s") / 1e6, 2),
    ),
]

COST_TABLE = "| DataComp xlarge (12.8B) |"
COST_ROWS = {
    "lite": "lite",
    "mini, bf16 (2 cores)": "mini (bfloat16)",
    "mini, fp32 (2 cores)": "mini (float32)",
    "student, bf16 (2 cores)": "student (bfloat16)",
    "student, fp32 (2 cores)": "student (float32)",
}


def _cost(model: str, pool: str) -> Callable[[], set[str]]:
    """Core-hours as speed.md rounds them: two decimals under 10, one under 100, none above."""

    def expected() -> set[str]:
        (row,) = [row for row in get(COST, "rows") if row["model"] == model]
        hours = row["hours"][pool]
        return renderings(hours, 2 if hours < 10 else 1 if hours < 100 else 0)

    return expected


FIGURES += [
    Cell("docs/speed.md", COST_TABLE, label, pool, COST, _cost(model, pool))
    for label, model in COST_ROWS.items()
    for pool in get(COST, "pools")
]


STARTUP_TABLE = "| commit 1941485 | now | goal |"
for row, key in (
    ('python -c "import modeling_icc"', "import modeling_icc"),
    ("icc --help", "icc --help"),
    ('icc score --model lite "a dog"', 'icc score --model lite "a dog"'),
):
    FIGURES.append(
        Cell(
            "docs/speed.md",
            STARTUP_TABLE,
            row,
            "now",
            STARTUP,
            rate(STARTUP, "results", key, "median_s", decimals=3, suffix=" s"),
        )
    )
    if get(STARTUP, "results", key, "goal_s") is not None:
        FIGURES.append(
            Cell(
                "docs/speed.md",
                STARTUP_TABLE,
                row,
                "goal",
                STARTUP,
                rate(STARTUP, "results", key, "goal_s", decimals=1, suffix=" s"),
            )
        )

STREAMING_TABLE = "| job | peak RSS (above baseline) | rows/s |"
for row, source, key in (
    ("icc score --input 1M.txt --output out.jsonl", STREAMING, "score"),
    ("icc score --input - < 1M.txt", STREAMING, "score stdin"),
    ("icc filter ... --threshold 0.5", STREAMING, "filter threshold"),
    ("icc filter ... --top-fraction 0.3", STREAMING, "filter top-fraction"),
    ("the same on 4M captions", STREAMING_4M, "filter top-fraction"),
):
    FIGURES += [
        Cell(
            "docs/speed.md",
            STREAMING_TABLE,
            row,
            "| peak RSS (above baseline) |",
            source,
            lambda source=source, key=key: combine(
                "{} MB ({} MB)",
                renderings(get(source, "results", key, "peak_rss_mb"), 0),
                renderings(get(source, "results", key, "peak_above_baseline_mb"), 0),
            ),
        ),
        Cell("docs/speed.md", STREAMING_TABLE, row, "| rows/s |", source, rate(source, "results", key, "rows_per_s")),
    ]
FIGURES += [
    phrase(
        "docs/speed.md",
        STREAMING,
        "the lite model: {} MB now",
        rate(STREAMING, "results", "score", "baseline_peak_rss_mb"),
    ),
    phrase(
        "docs/speed.md",
        STREAMING,
        "reaches stdout after {} s",
        rate(STREAMING, "results", "score stdin", "first_output_s", decimals=1),
    ),
    phrase("docs/speed.md", STREAMING, "under {} MB above baseline", count(STREAMING, "goal_mb_above_baseline")),
]


# --- docs/quality.md, docs/mini.md and docs/bench.md: the quality benchmarks -----------------------------

FROZEN = "| Pearson [95% CI] | Spearman [95% CI] | Kendall [95% CI] |"
FROZEN_ROWS = {
    "mini": "mini",
    "published ICC": "published",
    "lite": "lite",
    "CC3M text heuristics": "cc3m",
    "lexical norm average": "lexical",
    "MiniLM embedding ridge": "minilm",
    "Complexity & Action": "ca",
}
for doc, benchmark, rows in (
    ("docs/quality.md", "captions_frozen", FROZEN_ROWS),
    ("docs/mini.md", "captions_frozen", FROZEN_ROWS),
):
    for row, scorer in rows.items():
        for metric in ("pearson", "spearman", "kendall"):
            FIGURES.append(
                Cell(
                    doc,
                    FROZEN,
                    row,
                    f"{metric.capitalize()} [95% CI]",
                    QUALITY,
                    lambda benchmark=benchmark, scorer=scorer, metric=metric: ci(
                        bench_row(QUALITY, benchmark, scorer)[metric]
                    ),
                )
            )
        FIGURES.append(Cell(doc, FROZEN, row, "| n |", QUALITY, count(QUALITY, "benchmarks", benchmark, "n")))

CV = "| command |"
FIGURES += [
    Cell(
        "docs/quality.md",
        CV,
        "mini",
        metric,
        MINI_REPORT,
        rate(MINI_REPORT, "cross_validation_203", metric.lower(), decimals=3),
    )
    for metric in ("Spearman", "Pearson", "Kendall")
] + [
    Cell(
        "docs/quality.md",
        CV,
        "lite",
        metric,
        LITE_MODEL,
        rate(LITE_MODEL, "report", "cross_validation", f"{metric.lower()}_pooled_mean", decimals=3),
    )
    for metric in ("Spearman", "Pearson", "Kendall")
]

NORMS = "| words (Brysbaert) | nouns | phrases (Muraki) |"
for row, scorer in (("mini", "mini"), ("MiniLM embedding ridge", "minilm")):
    for column, benchmark in (("words", "words"), ("nouns", "nouns"), ("phrases", "phrases")):
        FIGURES.append(
            Cell(
                "docs/quality.md",
                NORMS,
                row,
                column,
                QUALITY,
                lambda benchmark=benchmark, scorer=scorer: renderings(
                    bench_row(QUALITY, benchmark, scorer)["spearman"]["value"], 2
                ),
            )
        )


def _junk_kept(scorer: str, kinds: str) -> Callable[[], set[str]]:
    """The share of ``kinds`` (one real-caption kind, or "junk": every other kind, weighted by size) kept at 0.5."""

    def expected() -> set[str]:
        from modeling_icc.evaluation.web_junk import REAL_KINDS

        sizes = get(JUNK, "benchmarks", "web_junk", "kinds")
        kept = bench_row(JUNK, "web_junk", scorer)["kept_fraction"]
        chosen = [kinds] if kinds != "junk" else [kind for kind in sizes if kind not in REAL_KINDS]
        share = sum(kept[kind] * sizes[kind] for kind in chosen) / sum(sizes[kind] for kind in chosen)
        return renderings(share, 1, scale=100, suffix="%")

    return expected


for row, kinds in (("all junk kinds", "junk"), ("captions: dev split", None), ("captions: CC3M", None)):
    for column, scorer in (("| mini |", "mini"), ("| lite |", "lite"), ("lexical", "lexical"), ("CC3M text", "cc3m")):
        FIGURES.append(Cell("docs/quality.md", "| kind | n |", row, column, JUNK, _junk_kept(scorer, kinds or row)))

ONNX_TABLE = "| encoder | captions/s |"
for row, variant in (
    ("torch, today's path", "torch (today)"),
    ("ONNX Runtime, fp32 as exported", "onnxruntime_fp32"),
    ("ONNX Runtime, fp32 with", "onnxruntime_fp32_fused"),
    ("ONNX Runtime, int8", "onnxruntime_int8"),
):
    keys = ("results", "throughput", variant)
    FIGURES += [
        Cell("docs/speed.md", ONNX_TABLE, row, "captions/s", ONNX, rate(ONNX, *keys, "captions_per_s")),
        Cell(
            "docs/speed.md",
            ONNX_TABLE,
            row,
            "vs today",
            ONNX,
            rate(ONNX, *keys, "throughput_vs_torch", decimals=2, suffix="x"),
        ),
    ]
FIGURES += [
    phrase(
        "docs/speed.md",
        ONNX,
        "importing onnxruntime took {} s",
        rate(ONNX, "results", "import_s", "onnxruntime", decimals=2),
    ),
    phrase("docs/speed.md", ONNX, "against {} s for torch", rate(ONNX, "results", "import_s", "torch", decimals=2)),
]

RUNTIMES_TABLE = "| on the AVX2-only CPU | torch | ONNX Runtime | ratio | goal (issue 37) |"


def _goal(key: str, goal: float, text: str, *, higher_is_better: bool) -> Callable[[], set[str]]:
    """``text: met`` or ``text: not met``, as ``key`` of the ONNX Runtime results compares with ``goal``."""

    def expected() -> set[str]:
        value = get(RUNTIMES, "results", *key.split("/"))
        return {f"{text}: {'met' if (value >= goal if higher_is_better else value <= goal) else 'not met'}"}

    return expected


def _scientific(*keys: str) -> Callable[[], set[str]]:
    return lambda: {f"{get(RUNTIMES, 'results', *keys):.1e}"}


for row, key, decimals, suffix, ratio, goal in (
    (
        "start-up of",
        "startup_s",
        2,
        " s",
        "startup_speedup",
        _goal("onnxruntime_vs_torch/startup_speedup", 3, "3x faster", higher_is_better=True),
    ),
    (
        'load_scorer("mini").score()',
        "captions_per_s",
        0,
        "",
        "throughput_ratio",
        _goal("onnxruntime_vs_torch/throughput_ratio", 2, "2x", higher_is_better=True),
    ),
    (
        "peak RSS",
        "filter_peak_rss_mb",
        0,
        " MB",
        "filter_peak_rss_ratio",
        _goal("onnxruntime/filter_peak_rss_mb", 500, "500 MB", higher_is_better=False),
    ),
):
    FIGURES += [
        Cell(
            "docs/speed.md",
            RUNTIMES_TABLE,
            row,
            "torch",
            RUNTIMES,
            rate(RUNTIMES, "results", "torch", key, decimals=decimals, suffix=suffix),
        ),
        Cell(
            "docs/speed.md",
            RUNTIMES_TABLE,
            row,
            "ONNX Runtime",
            RUNTIMES,
            rate(RUNTIMES, "results", "onnxruntime", key, decimals=decimals, suffix=suffix),
        ),
        Cell(
            "docs/speed.md",
            RUNTIMES_TABLE,
            row,
            "ratio",
            RUNTIMES,
            rate(
                RUNTIMES,
                "results",
                "onnxruntime_vs_torch",
                ratio,
                decimals=2,
                suffix="" if ratio.endswith("rss_ratio") else "x",
            ),
        ),
        Cell("docs/speed.md", RUNTIMES_TABLE, row, "goal", RUNTIMES, goal),
    ]
FIGURES += [
    phrase("docs/speed.md", RUNTIMES, "differ by at most {} on the first", _scientific("scores", "max_abs_difference")),
    phrase("docs/speed.md", RUNTIMES, "(median {})", _scientific("scores", "median_abs_difference")),
    phrase("docs/speed.md", RUNTIMES, "the first {} distinct CC3M", count(RUNTIMES, "results", "scores", "captions")),
    phrase(
        "README.md",
        RUNTIMES,
        "starts {}x faster than on torch ({} s)",
        rate(RUNTIMES, "results", "onnxruntime_vs_torch", "startup_speedup", decimals=1),
        rate(RUNTIMES, "results", "onnxruntime", "startup_s", decimals=2),
    ),
    phrase(
        "README.md",
        RUNTIMES,
        "scores {}x as fast",
        rate(RUNTIMES, "results", "onnxruntime_vs_torch", "throughput_ratio", decimals=1),
    ),
    phrase(
        "README.md",
        RUNTIMES,
        "peaks at {} MB, against torch's {} MB",
        rate(RUNTIMES, "results", "onnxruntime", "filter_peak_rss_mb"),
        rate(RUNTIMES, "results", "torch", "filter_peak_rss_mb"),
    ),
    phrase("README.md", RUNTIMES, "{}-caption", count(RUNTIMES, "filter_n")),
    phrase(
        "docs/speed.md",
        FP32_CEILING,
        "fp32 implementation at {} distinct CC3M captions/s",
        rate(FP32_CEILING, "fp32_ceiling_captions_per_s"),
    ),
    phrase("docs/speed.md", OPENVINO, "slower: {}x ONNX", rate(OPENVINO, "results", "openvino_speedup", decimals=3)),
    phrase(
        "docs/speed.md",
        OPENVINO,
        "logits within {}",
        lambda: {f"{get(OPENVINO, 'results', 'max_abs_logit_difference'):.1e}"},
    ),
    phrase("README.md", RUNTIMES, "one run, medians of {};", count(RUNTIMES, "repeats")),
]

NOISE_TYPES = get(STABILITY, "noise_types")


def _noisy(scorer: str, noise: str) -> Callable[[], set[str]]:
    """``Spearman with the label [CI] / Spearman with the clean scores`` (clean: the first part only)."""

    def expected() -> set[str]:
        row = bench_row(NOISY, f"noisy_captions:{noise}", scorer)
        label = ci(row["spearman"])
        if noise == "clean":
            return label
        return combine("{} / {}", label, renderings(row["versus_clean"]["spearman"]["value"], 2))

    return expected


def _stability(scorer: str, noise: str) -> Callable[[], set[str]]:
    """``Spearman with the clean scores [CI] / decision flips``."""

    def expected() -> set[str]:
        entry = get(STABILITY, "scorers", scorer, "noise", noise)
        flips = renderings(entry["decision_flips"], 1, scale=100, suffix="%")
        return combine("{} / {}", ci(entry["versus_clean"]["spearman"], 3), flips)

    return expected


for doc, columns in (
    (
        "docs/quality.md",
        {"**mini**": "mini", "lite †": "lite", "lexical norm average": "lexical", "published ICC": "published"},
    ),
    (
        "docs/mini.md",
        {"**mini**": "mini", "lite †": "lite", "lexical norm average": "lexical", "published ICC": "published"},
    ),
):
    for noise in ("clean", *NOISE_TYPES):
        for column, scorer in columns.items():
            if scorer == "published" and noise != "clean":
                continue  # released for the clean captions only (n/a)
            FIGURES.append(Cell(doc, "| published ICC |", noise, column, NOISY, _noisy(scorer, noise)))

for doc, columns in (
    ("docs/quality.md", {"| mini |": "mini", "| lite |": "lite", "lexical norm average": "lexical"}),
    ("docs/mini.md", {"**mini**": "mini", "| lite |": "lite", "lexical norm average": "lexical"}),
):
    for noise in NOISE_TYPES:
        for column, scorer in columns.items():
            FIGURES.append(
                Cell(doc, "| lite | lexical norm average |", noise, column, STABILITY, _stability(scorer, noise))
            )

DROPPED = "| kept clean |"
for row, scorer in (("mini", "mini"), ("lite", "lite"), ("lexical norm average", "lexical")):
    FIGURES.append(
        Cell(
            "docs/quality.md",
            DROPPED,
            row,
            "kept clean",
            STABILITY,
            lambda scorer=scorer: renderings(get(STABILITY, "scorers", scorer, "kept_clean"), 1, scale=100, suffix="%"),
        )
    )
    for noise in ("boilerplate", "seo_tail", "social", "long", "seo_lead"):
        FIGURES.append(
            Cell(
                "docs/quality.md",
                DROPPED,
                row,
                noise,
                STABILITY,
                lambda scorer=scorer, noise=noise: renderings(
                    get(STABILITY, "scorers", scorer, "noise", noise, "kept_clean_dropped_noisy"),
                    1,
                    scale=100,
                    suffix="%",
                ),
            )
        )

# --- docs/teachers.md: the teachers on the H200, and the estimates built from them -----------------------

_VARIANT = ("sections", "unet_variants")
FIGURES += [
    phrase(
        "docs/teachers.md",
        GPU_TEACHERS,
        "took {} ms per image as built, {} ms with fused QKV projections, {} ms with channels-last memory and {} ms "
        "with both",
        *(
            rate(GPU_TEACHERS, *_VARIANT, variant, "ms_per_image_per_step", decimals=2)
            for variant in ("as_built", "fused_qkv", "channels_last", "fused_qkv_channels_last")
        ),
    ),
    phrase(
        "docs/teachers.md",
        GPU_TEACHERS,
        "SBA at {} captions/s ({} GPU-hours per 1M",
        rate(GPU_TEACHERS, "sections", "teachers", "sba", "captions_per_s", decimals=1),
        rate(GPU_TEACHERS, "sections", "teachers", "sba", "gpu_hours_per_1m_captions", decimals=2),
    ),
    phrase(
        "docs/teachers.md",
        GPU_TEACHERS,
        "VBA at {}, both teachers {}",
        rate(GPU_TEACHERS, "summary", "teachers", "vba_gpu_hours_per_1m", decimals=1),
        rate(GPU_TEACHERS, "summary", "teachers", "both_teachers_gpu_hours_per_1m", decimals=1),
    ),
]

TEACHERS = "| stage | measured | GPU-hours per 1M captions |"
_T = ("sections", "teachers")
FIGURES += [
    Cell(
        "docs/teachers.md",
        TEACHERS,
        "SBA",
        "measured",
        GPU,
        rate(GPU, *_T, "sba", "captions_per_s", decimals=1, suffix=" captions/s"),
    ),
    Cell(
        "docs/teachers.md",
        TEACHERS,
        "SBA",
        "GPU-hours",
        GPU,
        rate(GPU, *_T, "sba", "gpu_hours_per_1m_captions", decimals=2),
    ),
    Cell(
        "docs/teachers.md",
        TEACHERS,
        "SD2 UNet, one step",
        "measured",
        GPU,
        rate(GPU, *_T, "unet_step", "ms_per_image_per_step", decimals=2, suffix=" ms per image and step"),
    ),
    Cell(
        "docs/teachers.md",
        TEACHERS,
        "SD2 UNet step under torch.compile",
        "measured",
        GPU,
        rate(
            GPU,
            "sections",
            "unet_compiled",
            "unet_step_compiled",
            "ms_per_image_per_step",
            decimals=2,
            suffix=" ms per image and step",
        ),
    ),
    Cell(
        "docs/teachers.md",
        TEACHERS,
        "SD2 VAE decode",
        "measured",
        GPU,
        rate(GPU, *_T, "vae_decode", "ms_per_image", decimals=1, suffix=" ms per image"),
    ),
    Cell(
        "docs/teachers.md",
        TEACHERS,
        "SD2 text encoder",
        "measured",
        GPU,
        rate(GPU, *_T, "text_encoder", "ms_per_image", decimals=1, suffix=" ms per image"),
    ),
    Cell(
        "docs/teachers.md",
        TEACHERS,
        "SD2 per image",
        "measured",
        GPU,
        rate(GPU, *_T, "estimate", "sd2_ms_per_image", decimals=1, suffix=" ms"),
    ),
    Cell(
        "docs/teachers.md",
        TEACHERS,
        "SD2 per image",
        "GPU-hours",
        GPU,
        rate(GPU, *_T, "estimate", "sd2_gpu_hours_per_1m", decimals=1),
    ),
    Cell(
        "docs/teachers.md",
        TEACHERS,
        "BLIP-2",
        "measured",
        GPU,
        rate(GPU, *_T, "captioner", "captions_per_s", decimals=1, suffix=" captions/s"),
    ),
    Cell(
        "docs/teachers.md",
        TEACHERS,
        "BLIP-2",
        "GPU-hours",
        GPU,
        rate(GPU, *_T, "captioner", "gpu_hours_per_1m_captions", decimals=2),
    ),
    Cell(
        "docs/teachers.md",
        TEACHERS,
        "BERTScore",
        "measured",
        GPU,
        rate(GPU, *_T, "bertscore", "captions_per_s", decimals=1, suffix=" captions/s"),
    ),
    Cell(
        "docs/teachers.md",
        TEACHERS,
        "BERTScore",
        "GPU-hours",
        GPU,
        rate(GPU, *_T, "bertscore", "gpu_hours_per_1m_captions", decimals=2),
    ),
    Cell(
        "docs/teachers.md",
        TEACHERS,
        "VBA",
        "GPU-hours",
        GPU,
        rate(GPU, *_T, "estimate", "vba_gpu_hours_per_1m", decimals=1),
    ),
    Cell(
        "docs/teachers.md",
        TEACHERS,
        "both teachers",
        "GPU-hours",
        GPU,
        rate(GPU, *_T, "estimate", "both_teachers_gpu_hours_per_1m", decimals=1),
    ),
    phrase(
        "docs/teachers.md",
        GPU,
        "SD2 is {}% of the total",
        lambda: renderings(
            get(GPU, *_T, "estimate", "sd2_gpu_hours_per_1m")
            / get(GPU, *_T, "estimate", "both_teachers_gpu_hours_per_1m"),
            0,
            scale=100,
        ),
    ),
    phrase(
        "docs/teachers.md",
        GPU,
        "20 UNet steps alone cost {} GPU-hours per 1M",
        lambda: renderings(
            get(GPU, *_T, "settings", "steps") * get(GPU, *_T, "unet_step", "ms_per_image_per_step") / 3.6, 1
        ),
    ),
]


def _teacher_rest() -> float:
    """GPU-hours per 1M captions of SBA, BLIP-2 and BERTScore (unchanged by any SD2 setting)."""
    return sum(get(GPU, *_T, stage, "gpu_hours_per_1m_captions") for stage in ("sba", "captioner", "bertscore"))


def _sd2_ms(steps: int, compiled: bool, pixels: float = 1.0, unet_speedup: float = 1.0) -> float:
    step = (_gpu("unet_compiled", "unet_step_compiled") if compiled else _gpu("teachers", "unet_step"))[
        "ms_per_image_per_step"
    ]
    vae = _gpu("teachers", "vae_decode", "ms_per_image")
    return (steps * step / unet_speedup + vae) * pixels + _gpu("teachers", "text_encoder", "ms_per_image")


ESTIMATES = "| SD2 setting |"
for row, settings in (
    ("paper: 768 px, DPM-Solver 20 steps, eager", dict(steps=20, compiled=False)),
    ("+ compile=True", dict(steps=20, compiled=True)),
    ("+ compile, 15 steps", dict(steps=15, compiled=True)),
    ("+ compile, 12 steps", dict(steps=12, compiled=True)),
    ("+ compile, 10 steps", dict(steps=10, compiled=True)),
    ("+ compile, 512 px", dict(steps=20, compiled=True, pixels=(512 / 768) ** 2)),
    ("+ compile, fp8 UNet", dict(steps=12, compiled=True, unet_speedup=1.3)),
):
    FIGURES += [
        Cell("docs/teachers.md", ESTIMATES, row, "ms per image", GPU, lambda s=settings: renderings(_sd2_ms(**s), 1)),
        Cell(
            "docs/teachers.md", ESTIMATES, row, "SD2 GPU-h", GPU, lambda s=settings: renderings(_sd2_ms(**s) / 3.6, 1)
        ),
        Cell(
            "docs/teachers.md",
            ESTIMATES,
            row,
            "both teachers",
            GPU,
            lambda s=settings: renderings(_sd2_ms(**s) / 3.6 + _teacher_rest(), 1),
        ),
    ]
FIGURES += [
    phrase(
        "docs/teachers.md",
        GPU,
        "plus {} GPU-hours for SBA, BLIP-2 and BERTScore",
        lambda: renderings(_teacher_rest(), 1),
    ),
    phrase(
        "docs/teachers.md",
        GPU,
        "SD2 may cost at most {} GPU-hours ({} ms per image)",
        lambda: renderings(get(GPU, "summary", "goals", "teacher_gpu_hours_per_1m") - _teacher_rest(), 1),
        lambda: renderings((get(GPU, "summary", "goals", "teacher_gpu_hours_per_1m") - _teacher_rest()) * 3.6, 1),
    ),
]


# ---------------------------------------------------------------------------------------------- Markdown


def read(doc: str) -> str:
    return (ROOT / doc).read_text(encoding="utf-8")


def without_code_blocks(text: str) -> str:
    """``text`` with fenced code blocks blanked (line count kept)."""
    lines, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            lines.append("")
        else:
            lines.append("" if fenced else line)
    return "\n".join(lines)


def split_cells(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip())
    return [cell.strip() for cell in cells[1:-1]]


def plain(cell: str) -> str:
    return cell.replace("**", "").replace("`", "").replace("\\|", "|").strip()


@dataclass
class Table:
    header_line: str
    header: list[str]
    rows: list[tuple[int, list[str]]]  # (line index, cells)


def tables(doc: str) -> list[Table]:
    found, lines = [], without_code_blocks(read(doc)).split("\n")
    index = 0
    while index < len(lines):
        if (
            lines[index].startswith("|")
            and index + 1 < len(lines)
            and re.match(r"^\|[\s:|-]+\|$", lines[index + 1].strip())
        ):
            table = Table(lines[index], split_cells(lines[index]), [])
            index += 2
            while index < len(lines) and lines[index].startswith("|"):
                table.rows.append((index, split_cells(lines[index])))
                index += 1
            found.append(table)
        else:
            index += 1
    return found


def row_matches(cells: list[str], label: str) -> bool:
    """The row's first cell (or first cells, for a label with ``|``) is ``label`` or starts with it, then
    a character that does not continue a word."""
    parts = [part.strip() for part in label.split("|")]
    if len(cells) < len(parts):
        return False
    for cell, part in zip(cells, parts, strict=False):
        text = plain(cell).rstrip(" †")
        if text != part and not (text.startswith(part) and not re.match(r"[\w]", text[len(part)])):
            return False
    return True


def locate(figure: Cell) -> tuple[int, int, str]:
    """(line index, column index, cell text) of ``figure``'s cell; exactly one must match."""
    matches = []
    for table in tables(figure.doc):
        if figure.table not in table.header_line:
            continue
        columns = [
            index
            for index, name in enumerate(table.header)
            if plain(figure.column) in plain(name) or figure.column in f"| {name} |"
        ]
        if not columns:
            continue
        for line, cells in table.rows:
            if row_matches(cells, figure.row) and columns[0] < len(cells):
                matches.append((line, columns[0], cells[columns[0]]))
    assert len(matches) == 1, f"{figure.doc}: {len(matches)} cells for row {figure.row!r}, column {figure.column!r}"
    return matches[0]


NUMBER = re.compile(r"(?<![\w./])(?<![A-Za-z]-)\d[\d,]*(?:\.\d+)?(?!\w|\.\w)")


def pattern(expected: str) -> re.Pattern:
    """``expected``, any run of white space matching any other, not part of a longer number."""
    body = r"\s+".join(re.escape(word) for word in expected.split())
    return re.compile(rf"(?<![\d.,]){body}(?![\d]|[.,]\d)")


def contains(text: str, expected: str) -> bool:
    return pattern(expected).search(text) is not None


def describe(figure: Cell | Phrase) -> str:
    where = f"row {figure.row!r}, column {figure.column!r}" if isinstance(figure, Cell) else "text"
    return f"{figure.doc}: {where} (from {figure.source})"


# ---------------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("figure", FIGURES, ids=describe)
def test_the_quoted_figure_is_the_committed_result(figure):
    expected = figure.expected()
    if isinstance(figure, Cell):
        _, _, cell = locate(figure)
        text = plain(cell)
    else:
        text = " ".join(plain(without_code_blocks(read(figure.doc))).split())
    assert any(contains(text, option) for option in expected), (
        f"{describe(figure)} should quote {' or '.join(sorted(expected))}; the document has {text[:300]!r}"
        if isinstance(figure, Cell)
        else f"{describe(figure)}: none of {sorted(expected)} occurs in the text"
    )


@pytest.mark.parametrize("doc", sorted({figure.doc for figure in FIGURES}))
def test_each_document_names_the_results_its_figures_come_from(doc):
    text = read(doc)

    def named(source: str) -> bool:  # by name, or as `stem.{json,md}`
        path = Path(source)
        return path.name in text or re.search(rf"{re.escape(path.stem)}\.\{{[^}}]*json", text) is not None

    missing = sorted({Path(f.source).name for f in FIGURES if f.doc == doc and not named(f.source)})
    assert not missing, f"{doc} quotes figures from {missing} without naming the file"


def test_the_in_sample_quality_figure_in_the_readme_is_labelled():
    for figure in FIGURES:
        if isinstance(figure, Cell) and figure.doc == "README.md" and figure.column == "quality":
            scorer = {"mini": "mini", "lite": "lite", "moranyanuka/icc": "published"}[figure.row]
            in_sample = bench_row(QUALITY, "captions_frozen", scorer)["in_sample"]
            assert bool(in_sample) == ("in-sample" in plain(locate(figure)[2])), figure.row


#: Numbers in the README's text that are not measurements: each with the words around it and why.
README_ALLOWED = {
    "on a 0-1 scale": "the score's range",
    "clipped to [0, 1]": "the score's range",
    "scores 0.0 with ICC's models": "the documented score of web junk (modeling_icc/utils/web_junk.py)",
    "Findings of ACL 2024": "the paper's venue",
    "Python 3.10+": "the supported Python",
    "the 15 slowest tests": "a setting of make test",
    "[95% CI]": "the interval's level (set in modeling_icc/evaluation/bootstrap.py)",
    "(1 core)": "how lite runs",
    "2 cores": "the benchmark machines (cpu_count in each JSON)",
    "building 3 is to the right of building 4.": "a quoted caption",
    "Stable Diffusion 2": "a model's name",
}


def test_every_number_in_the_readme_is_a_checked_figure_or_not_a_measurement():
    lines = without_code_blocks(read("README.md")).split("\n")
    for figure in FIGURES:
        if figure.doc == "README.md" and isinstance(figure, Cell):
            line, _, cell = locate(figure)
            for option in figure.expected():
                if contains(plain(cell), option):
                    lines[line] = lines[line].replace(option, "§", 1)
    text = re.sub(r"`[^`]*`", "‹code›", "\n".join(lines))  # inline code: commands, paths, settings
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
    for figure in FIGURES:
        if figure.doc == "README.md" and isinstance(figure, Phrase):
            for option in figure.expected():
                text = pattern(option).sub("§", text)
    for snippet in README_ALLOWED:
        assert contains(text, snippet), f"README_ALLOWED names {snippet!r}, which the README no longer has"
        text = pattern(snippet).sub("§", text)
    unchecked = [(text.count("\n", 0, match.start()) + 1, match.group()) for match in NUMBER.finditer(text)]
    assert not unchecked, (
        f"numbers in the README without a checked source (line, number): {unchecked}; add each to FIGURES "
        "(a table cell or phrase with the JSON it comes from) or, if it is not a measurement, to README_ALLOWED"
    )


# ---------------------------------------------------------------------------------------------- links


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(doc: str) -> frozenset[str]:
    found, seen = set(), {}
    for line in without_code_blocks(read(doc)).split("\n"):
        match = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if match:
            base = slug(match.group(2))
            name = base if base not in seen else f"{base}-{seen[base]}"
            seen[base] = seen.get(base, 0) + 1
            found.add(name)
    return frozenset(found)


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


@pytest.mark.parametrize("doc", DOCS)
def test_every_relative_link_resolves(doc):
    broken = []
    for target in LINK.findall(without_code_blocks(read(doc))):
        if re.match(r"^[a-z][a-z+.-]*:", target):
            continue  # http:, https:, mailto:
        path, _, anchor = target.partition("#")
        file = (ROOT / doc).parent / path if path else ROOT / doc
        if not file.exists():
            broken.append(f"{target} (no file {file.relative_to(ROOT) if file.is_relative_to(ROOT) else file})")
        elif anchor and file.suffix == ".md" and anchor not in anchors(str(file.resolve().relative_to(ROOT))):
            broken.append(f"{target} (no heading with anchor #{anchor})")
    assert not broken, f"{doc}: {broken}"
