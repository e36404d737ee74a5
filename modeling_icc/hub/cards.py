"""Hub cards built from measured results: nothing on a card is typed by hand.

Model cards take their ``model-index`` from ``icc bench`` results (held-out rows only),
their speed from the speed benchmarks' JSON and, for a student we trained, their training
section from the distillation provenance; dataset cards read their schema and size from
the data itself. See :mod:`.results_schema` for the JSON fields used. The teacher-score
dataset's card is written by the pipeline (:mod:`modeling_icc.training.distillation.dataset_card`).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
from huggingface_hub import DatasetCard, DatasetCardData, EvalResult, ModelCard, ModelCardData

from ..evaluation.data import PUBLISHED
from ..scoring.load import PUBLISHED_MODEL_ID
from ..training.distillation.dataset_card import size_category, teacher_lines
from ..training.distillation.distill import DistillConfig, StudentTrainingArguments
from ..utils.citation import CITATION, PAPER_URL
from ..utils.errors import UserInputError
from ..utils.shipped_data import (
    DEV_SPLIT_FILE,
    FROZEN_PARTITION_FILE,
    data_path,
    dev_split,
    frozen_partition_ids,
    paper_examples,
)
from ..version import DISTRIBUTION
from .results_schema import (
    CAPTION_BENCHMARK,
    HUB_METRIC_IDS,
    BenchResults,
    BenchRow,
    MetricValue,
    Provenance,
    SpeedResults,
)

#: YAML key naming the model of a card-only repository for a model shipped in the package.
ZERO_DOWNLOAD_CARD_KEY = "icc_zero_download"
#: The benchmark dataset's data file (one split, ``dev``) and its columns: name -> (Hub dtype, meaning).
BENCHMARK_DATA_FILE = "data/dev.csv"
BENCHMARK_COLUMNS = {
    "sample_id": ("string", "LAION-400M sample id"),
    "caption": ("string", "the web caption"),
    "concreteness_annotation": ("int64", "human label, 0 (highly abstract) to 3 (highly concrete)"),
    "icc_score": ("float64", f"raw output of the published ICC model ({PUBLISHED_MODEL_ID}) as released; can exceed 1"),
    "frozen_partition": ("bool", "in the frozen internal test partition (see below)"),
}
#: The functions that rebuild each norm benchmark from the norms (``modeling_icc.evaluation.data``).
NORM_BENCHMARK_FUNCTIONS = {"words": "word_benchmark", "nouns": "noun_benchmark", "phrases": "phrase_benchmark"}
#: The norm studies each zero-download model learned from (keys of the lite lexicon's sources file).
#: The captions each zero-download model was fitted on, besides the norms (licences: data/ATTRIBUTION.md).
CAPTIONS_READ_BY = {
    "lite": "the 303 captions of the dev split (labels; MIT, moranyanuka/icc_code)",
    "mini": "the 203 dev-split captions outside the frozen partition (labels and the published model's "
    "scores; MIT, moranyanuka/icc_code) and the 15,833 CC3M validation captions, unlabelled, for words in "
    "context (Google LLC's terms: free use, acknowledgement appreciated)",
}
NORMS_READ_BY = {"lite": ("brysbaert", "muraki", "glasgow", "lancaster"), "mini": ("brysbaert", "muraki", "glasgow")}
#: The norm studies the word and phrase benchmarks read (keys of the lite lexicon's sources file).
BENCHMARK_NORMS = ("brysbaert", "muraki")


def _template(name: str) -> str:
    """A Jinja card template from ``templates/`` (rendered by huggingface_hub)."""
    return (Path(__file__).parent / "templates" / name).read_text(encoding="utf-8")


def student_usage(repo_id: str, metric_repo_id: str) -> str:
    """The usage section every student card shares (``templates/student_usage.md``)."""
    from jinja2 import Template

    raw = [row for row in paper_examples() if isinstance(row.get("icc"), float) and row["icc"] > 1]
    return Template(_template("student_usage.md")).render(
        repo_id=repo_id, metric_repo_id=metric_repo_id, raw_example=raw[0] if raw else None
    )


def _student_card_data(
    repo_id: str, results: list[EvalResult], *, license: str, base_model: str | None, datasets: list[str | None]
) -> ModelCardData:
    return ModelCardData(
        language="en",
        license=license,
        library_name="transformers",
        pipeline_tag="text-classification",
        tags=["icc", "image-captioning", "dataset-curation", "concreteness", "regression"],
        base_model=base_model if base_model and _is_hub_id(base_model) else None,
        datasets=[name for name in datasets if name] or None,
        metrics=sorted({result.metric_type for result in results}) or None,
        model_name=repo_id.split("/")[-1],
        eval_results=results,
    )


def model_card(
    repo_id: str,
    bench: BenchResults,
    provenance: Provenance,
    *,
    scorer: str | None = None,
    license: str = "mit",
    metric_repo_id: str | None = None,
    benchmark_dataset: str | None = None,
    teacher_dataset: str | None = None,
    benchmark_overlap: int = 0,
) -> ModelCard:
    """The student's card; ``scorer`` names its rows in the bench results (default: ``repo_id``).

    ``benchmark_overlap`` (see :func:`benchmark_overlap`) counts benchmark captions the
    student was trained on; when positive its caption-benchmark rows are marked in-sample.
    """
    scorer = scorer or repo_id
    if benchmark_overlap:
        note = f"trained on {benchmark_overlap} of this benchmark's captions: an in-sample figure"
        bench = replace(
            bench,
            rows=[
                replace(row, in_sample=row.in_sample or note)
                if row.is_scorer(scorer) and row.benchmark == CAPTION_BENCHMARK
                else row
                for row in bench.rows
            ],
        )
    own_rows = bench.for_scorer(scorer)
    if not own_rows:
        raise UserInputError(
            f"{bench.source}: no results for scorer {scorer!r}; scorers in the file: {', '.join(bench.scorers())}. "
            "Pass --scorer with the id the student was benchmarked under."
        )
    model_name = repo_id.split("/")[-1]
    results = eval_results(own_rows, bench, benchmark_dataset)
    card_data = _student_card_data(
        repo_id,
        results,
        license=license,
        base_model=provenance.base_model,
        datasets=[teacher_dataset, benchmark_dataset],
    )
    return ModelCard.from_template(
        card_data,
        template_str=_template("model_card.md"),
        model_name=model_name,
        usage=student_usage(repo_id, metric_repo_id or f"{repo_id.split('/')[0]}/icc"),
        paper_url=PAPER_URL,
        bench_source=Path(bench.source).name,
        results_tables=results_tables(bench, bench.rows, highlight=scorer),
        environment=_environment_line(bench.environment),
        provenance=provenance,
        teachers=teacher_lines(provenance.teachers),
        teacher_dataset=teacher_dataset,
        training=", ".join(f"{key} {value}" for key, value in provenance.training.items() if value is not None),
        citation=CITATION,
    )


def _is_hub_id(name: str) -> bool:
    """A Hub model id (``org/name`` or a legacy ``name``), not a local path."""
    return not Path(name).expanduser().exists() and not name.startswith((".", "/", "~")) and name.count("/") <= 1


def eval_results(
    rows: Sequence[BenchRow], bench: BenchResults, benchmark_dataset: str | None = None
) -> list[EvalResult]:
    """``model-index`` entries: one per held-out benchmark and correlation measured for the model.

    Rows that ``icc bench`` flags as in-sample (the scorer read or was fitted on that data)
    stay in the card's tables with their note but never in ``model-index``.
    """
    results = []
    for row in rows:
        if row.in_sample:
            continue
        for name, metric in row.metrics.items():
            results.append(
                EvalResult(
                    task_type="text-classification",
                    task_name="Concreteness scoring (regression)",
                    dataset_type=(benchmark_dataset if row.benchmark == CAPTION_BENCHMARK else None) or row.benchmark,
                    dataset_name=bench.title(row.benchmark),
                    metric_type=HUB_METRIC_IDS[name],
                    metric_name=f"{name.capitalize()} correlation",
                    metric_value=round(metric.value, 4),
                )
            )
    return results


def results_tables(bench: BenchResults, rows: Sequence[BenchRow], highlight: str | None = None) -> str:
    """One markdown table per benchmark: scorer, n, each correlation with its interval; † in-sample."""
    interval = f" [{bench.confidence:.0%} CI]" if bench.confidence else ""
    tables = []
    for benchmark in dict.fromkeys(row.benchmark for row in rows):
        members = [row for row in rows if row.benchmark == benchmark]
        names = [name for name in HUB_METRIC_IDS if any(name in row.metrics for row in members)]
        lines = [
            f"**{bench.title(benchmark)}**",
            "",
            "| scorer | n | " + " | ".join(f"{name.capitalize()}{interval}" for name in names) + " |",
            "| --- | ---: | " + " | ".join("---:" for _ in names) + " |",
        ]
        for row in members:
            label = row.display_name + (" †" if row.in_sample else "")
            label = f"**{label}**" if highlight and row.is_scorer(highlight) else label
            cells = [_metric_cell(row.metrics.get(name)) for name in names]
            lines.append(f"| {label} | {row.n} | " + " | ".join(cells) + " |")
        notes = sorted({f"† {row.in_sample}." for row in members if row.in_sample})
        if notes:
            lines += ["", *notes]
        tables.append("\n".join(lines))
    return "\n\n".join(tables)


def _metric_cell(metric: MetricValue | None) -> str:
    if metric is None:
        return "n/a"
    if metric.ci is None:
        return f"{metric.value:.3f}"
    return f"{metric.value:.3f} [{metric.ci[0]:.3f}, {metric.ci[1]:.3f}]"


def _environment_line(environment: dict) -> str:
    parts = [environment.get(key) for key in ("device", "gpu", "cpu")]
    versions = environment.get("versions") or {}
    parts += [f"{name} {version}" for name, version in versions.items() if version]
    return ", ".join(str(part) for part in parts if part)


def benchmark_overlap(parquet_files: Sequence[str | os.PathLike]) -> int:
    """How many captions of the teacher-score data are also in the caption benchmark's dev split."""
    benchmark = {row["caption"] for row in dev_split()}
    return sum(
        sum(caption in benchmark for caption in pq.read_table(file, columns=["caption"]).column("caption").to_pylist())
        for file in parquet_files
    )


def published_student_card(
    repo_id: str,
    bench: BenchResults,
    speed: SpeedResults,
    *,
    metric_repo_id: str,
    benchmark_dataset: str | None = None,
) -> ModelCard:
    """The card of the published student's weights (``moranyanuka/icc``) in our format
    (``icc convert``): quality from the scores released with the dev split (the bench
    results' ``published`` rows), speed from the student throughput benchmark."""
    own_rows = bench.for_scorer(PUBLISHED)
    if not own_rows:
        raise UserInputError(
            f"{bench.source}: no {PUBLISHED!r} rows (the published model's released scores); "
            "run `icc bench` on the shipped dev split"
        )
    results = eval_results(own_rows, bench, benchmark_dataset)
    base_model = _field_default(DistillConfig, "backbone")
    card_data = _student_card_data(repo_id, results, license="mit", base_model=base_model, datasets=[benchmark_dataset])
    return ModelCard.from_template(
        card_data,
        template_str=_template("published_student_card.md"),
        model_name=repo_id.split("/")[-1],
        published=PUBLISHED_MODEL_ID,
        usage=student_usage(repo_id, metric_repo_id),
        n=own_rows[0].n,
        benchmark_dataset=benchmark_dataset,
        bench_source=Path(bench.source).name,
        results_tables=results_tables(bench, bench.for_benchmark(CAPTION_BENCHMARK), highlight=PUBLISHED),
        environment=_environment_line(bench.environment),
        speed=speed,
        speed_environment=_environment_line(speed.environment),
        base_model=base_model,
        training=paper_recipe(),
        paper_url=PAPER_URL,
        citation=CITATION,
    )


def paper_recipe() -> dict[str, object]:
    """The paper's student recipe, as the package's distillation defaults hold it."""
    return {
        "batch size": _field_default(StudentTrainingArguments, "per_device_train_batch_size"),
        "learning rate": _field_default(StudentTrainingArguments, "learning_rate"),
        "schedule": _field_default(StudentTrainingArguments, "lr_scheduler_type"),
        "warm-up": f"{_field_default(StudentTrainingArguments, 'warmup_steps'):.0%}",
        "epochs": f"{_field_default(StudentTrainingArguments, 'num_train_epochs'):g}",
    }


def _field_default(cls: type, name: str) -> object:
    return next(field.default for field in dataclasses.fields(cls) if field.name == name)


def zero_download_card(
    name: str,
    repo_id: str,
    bench: BenchResults,
    speed: SpeedResults | None = None,
    *,
    metric_repo_id: str,
    benchmark_dataset: str | None = None,
) -> ModelCard:
    """The card of a model shipped in the package (``"lite"``): out-of-sample figures only.

    Held-out rows of the bench results go to the tables and ``model-index``; the model's
    cross-validation report (``models/NAME/data/NAME_model.json``, when it has one) is
    quoted with what it does not cover; in-sample rows are named with their reason, never
    with their numbers.
    """
    rows = bench.for_scorer(name)
    if not rows:
        raise UserInputError(f"{bench.source}: no results for {name!r}; run `icc bench --scorers {name},...`")
    held_out = [row for row in rows if not row.in_sample]
    results = eval_results(held_out, bench, benchmark_dataset)
    card_data = ModelCardData(
        language="en",
        license="mit",
        library_name=DISTRIBUTION,
        pipeline_tag="text-classification",
        tags=["icc", "image-captioning", "dataset-curation", "concreteness", "zero-download"],
        datasets=[benchmark_dataset] if benchmark_dataset else None,
        metrics=sorted({result.metric_type for result in results}) or None,
        model_name=repo_id.split("/")[-1],
        eval_results=results or None,
        **{ZERO_DOWNLOAD_CARD_KEY: name},
    )
    return ModelCard.from_template(
        card_data,
        template_str=_template("zero_download_card.md"),
        name=name,
        repo_id=repo_id,
        model_name=repo_id.split("/")[-1],
        metric_repo_id=metric_repo_id,
        bench_source=Path(bench.source).name,
        results_tables=results_tables(bench, held_out, highlight=name) if held_out else "",
        cross_validation=_cross_validation(name),
        in_sample=[(bench.title(row.benchmark), row.in_sample) for row in rows if row.in_sample],
        speed=speed,
        speed_environment=_environment_line(speed.environment) if speed else "",
        norm_sources=_norm_sources(name),
        captions_read=CAPTIONS_READ_BY.get(name),
        paper_url=PAPER_URL,
        citation=CITATION,
    )


def _model_data(name: str) -> Path:
    return Path(__file__).resolve().parents[1] / "models" / name / "data"


def _cross_validation(name: str) -> dict | None:
    """The cross-validation a zero-download model's fit recorded: lite's in its model file
    (``report.cross_validation``), mini's beside its heads (``cross_validation_203``, outside the frozen partition)."""
    data = _model_data(name)
    if (data / f"{name}_model.json").is_file():
        report = json.loads((data / f"{name}_model.json").read_text(encoding="utf-8")).get("report", {})
        cv, scope, suffix = report.get("cross_validation"), "", "_pooled_mean"
    elif (data / f"{name}_heads.report.json").is_file():
        report = json.loads((data / f"{name}_heads.report.json").read_text(encoding="utf-8"))
        report = {"fitted_on": DEV_SPLIT_FILE, "n": report["n_dev_captions"], **report}
        cv, scope, suffix = report["cross_validation_203"], ", those outside its frozen test partition", ""
    else:
        return None
    if not cv:
        return None
    return {
        "fitted_on": report.get("fitted_on"),
        "n": report.get("n"),
        "scope": scope,
        "folds": cv["folds"],
        "seeds": cv["seeds"],
        "pearson": cv[f"pearson{suffix}"],
        "spearman": cv[f"spearman{suffix}"],
        "kendall": cv[f"kendall{suffix}"],
        "command": cv.get("command", f"python training_scripts/fit_{name}.py"),
    }


def _norm_sources(name: str, keys: Sequence[str] | None = None) -> list[dict]:
    """The norm studies a model learned from, with their licences (the lite lexicon's ``lexicon_sources.json``
    records them all; mini's fit reads the concreteness norms of Brysbaert and Muraki)."""
    sources = json.loads((_model_data("lite") / "lexicon_sources.json").read_text(encoding="utf-8"))["sources"]
    keys = keys or NORMS_READ_BY.get(name, ())
    return [{"name": key, **sources[key]} for key in keys if key in sources]


def benchmark_rows() -> list[dict]:
    """The shipped dev split with its ``frozen_partition`` flag, in :data:`BENCHMARK_COLUMNS` order."""
    frozen = set(frozen_partition_ids())
    return [
        {name: row[name] for name in BENCHMARK_COLUMNS if name in row}
        | {"frozen_partition": row["sample_id"] in frozen}
        for row in dev_split()
    ]


def benchmark_data_csv() -> str:
    """The benchmark dataset's data file, :data:`BENCHMARK_DATA_FILE`."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(BENCHMARK_COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(benchmark_rows())
    return buffer.getvalue()


def benchmark_dataset_card(repo_id: str, bench: BenchResults | None = None) -> DatasetCard:
    """Card of the caption-concreteness dev split (the data :func:`benchmark_data_csv` writes),
    with the word and phrase benchmark definitions and results when ``bench`` is given."""
    rows = benchmark_rows()
    pretty_name = "ICC caption concreteness benchmark (dev split)"
    card_data = DatasetCardData(
        language="en",
        license="mit",
        pretty_name=pretty_name,
        language_creators=["found"],
        source_datasets=["extended|laion/laion400m"],
        task_categories=["text-classification"],
        size_categories=size_category(len(rows)),
        tags=["icc", "image-captioning", "concreteness", "benchmark"],
        configs=[{"config_name": "default", "data_files": [{"split": "dev", "path": BENCHMARK_DATA_FILE}]}],
        dataset_info={"features": [{"name": name, "dtype": kind} for name, (kind, _) in BENCHMARK_COLUMNS.items()]},
    )
    counts: dict[int, int] = {}
    for row in rows:
        counts[row["concreteness_annotation"]] = counts.get(row["concreteness_annotation"], 0) + 1
    header = data_path(FROZEN_PARTITION_FILE).read_text(encoding="utf-8").splitlines()
    info = bench.info if bench else {}
    norm_benchmarks = [
        {**info[name], "function": function} for name, function in NORM_BENCHMARK_FUNCTIONS.items() if name in info
    ]
    return DatasetCard.from_template(
        card_data,
        template_str=_template("benchmark_dataset_card.md"),
        pretty_name=pretty_name,
        repo_id=repo_id,
        n_rows=len(rows),
        data_file=BENCHMARK_DATA_FILE,
        columns=[(name, kind, meaning) for name, (kind, meaning) in BENCHMARK_COLUMNS.items()],
        label_counts=", ".join(f"{label}: {counts[label]}" for label in sorted(counts)),
        n_frozen=sum(row["frozen_partition"] for row in rows),
        frozen_file=FROZEN_PARTITION_FILE,
        frozen_header=[line.lstrip("# ") for line in header if line.startswith("#")],
        published=PUBLISHED_MODEL_ID,
        norm_benchmarks=norm_benchmarks,
        norm_sources=_norm_sources("lite", BENCHMARK_NORMS),
        results_tables=results_tables(bench, bench.rows) if bench else "",
        bench_source=Path(bench.source).name if bench else "",
        bench_command=bench.command if bench else None,
        paper_url=PAPER_URL,
        citation=CITATION,
    )
