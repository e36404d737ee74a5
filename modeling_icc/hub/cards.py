"""Hub cards built from measured results: nothing on a card is typed by hand.

The model card's ``model-index`` comes from ``icc bench`` results and its training
section from the distillation provenance; the dataset cards read their schema and size
from the data itself. See :mod:`.results_schema` for the JSON fields used.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
from huggingface_hub import DatasetCard, DatasetCardData, EvalResult, ModelCard, ModelCardData

from ..utils.errors import UserInputError
from ..utils.shipped_data import dev_split
from .results_schema import CAPTION_BENCHMARK, HUB_METRIC_IDS, BenchResults, BenchRow, MetricValue, Provenance

PAPER_URL = "https://aclanthology.org/2024.findings-acl.592/"
CITATION = """@inproceedings{yanuka-etal-2024-icc,
    title = "{ICC}: Quantifying Image Caption Concreteness for Multimodal Dataset Curation",
    author = "Yanuka, Moran and Alper, Morris and Averbuch-Elor, Hadar and Giryes, Raja",
    booktitle = "Findings of the Association for Computational Linguistics: ACL 2024",
    year = "2024",
    url = "https://aclanthology.org/2024.findings-acl.592/",
}"""
#: Meaning of each column of the teacher-score dataset (``modeling_icc.distillation.teacher_dataset.DATASET_SCHEMA``).
TEACHER_SCORE_COLUMNS = {
    "id": "caption id, stable across shards",
    "caption": "the caption text",
    "n_words": "caption length in words (the standardization bucket)",
    "sba_best": "the SBA teacher's best reconstruction of the caption (of 5 beams)",
    "sba_similarity": "SBA raw similarity: 1 - character Levenshtein distance / max length",
    "vba_best": "the VBA teacher's best BLIP-2 caption of the generated image (of 5)",
    "vba_similarity": "VBA raw similarity: BERTScore F1",
    "sba_teacher": "JSON provenance of the SBA teacher (model ids, settings, versions)",
    "vba_teacher": "JSON provenance of the VBA teacher (model ids, settings, versions)",
    "seed": "run seed (each caption's generator is seeded from it and the caption id)",
    "sba_score": "SBA similarity after per-length logit-normal standardization, in (0, 1)",
    "vba_score": "VBA similarity after per-length logit-normal standardization, in (0, 1)",
    "target": "the distillation target sigma(a*vba_score + b*sba_score + c)",
}
#: Teacher provenance keys shown on cards (model ids and the settings that define the teacher).
TEACHER_CARD_KEYS = (
    "text_model", "lm", "bottleneck", "similarity",
    "text_to_image", "scheduler", "num_inference_steps", "guidance_scale", "captioner", "prompt", "bertscore_model",
)  # fmt: skip
DEV_SPLIT_COLUMNS = {
    "sample_id": "LAION-400M sample id",
    "caption": "the web caption",
    "concreteness_annotation": "human label, 0 (highly abstract) to 3 (highly concrete)",
    "icc_score": "raw output of the published ICC model (moranyanuka/icc); can exceed 1",
}


def _template(name: str) -> str:
    """A Jinja card template from ``templates/`` (rendered by huggingface_hub)."""
    return (Path(__file__).parent / "templates" / name).read_text(encoding="utf-8")


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
    card_data = ModelCardData(
        language="en",
        license=license,
        library_name="transformers",
        pipeline_tag="text-classification",
        tags=["icc", "image-captioning", "dataset-curation", "concreteness", "regression"],
        base_model=provenance.base_model if _is_hub_id(provenance.base_model) else None,
        datasets=[name for name in (teacher_dataset, benchmark_dataset) if name] or None,
        metrics=sorted({result.metric_type for result in results}) or None,
        model_name=model_name,
        eval_results=results,
    )
    return ModelCard.from_template(
        card_data,
        template_str=_template("model_card.md"),
        model_name=model_name,
        repo_id=repo_id,
        metric_repo_id=metric_repo_id or f"{repo_id.split('/')[0]}/icc",
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


def teacher_lines(teachers: dict[str, dict]) -> list[str]:
    """``SBA: text_model `...`, lm `...``` per teacher, from its recorded provenance."""
    lines = []
    for name, settings in teachers.items():
        shown = [f"{key} `{settings[key]}`" for key in TEACHER_CARD_KEYS if settings.get(key) is not None]
        lines.append(f"{name.upper()}: " + ", ".join(shown or ["(no model ids recorded)"]))
    return lines


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


def teacher_dataset_card(
    repo_id: str,
    parquet_files: Sequence[str | os.PathLike],
    provenance: Provenance | None = None,
    *,
    license: str = "other",
    model_repo_id: str | None = None,
) -> DatasetCard:
    """Card of the teacher-score dataset; schema and row count are read from the parquet files."""
    if not parquet_files:
        raise UserInputError("the teacher-score dataset needs at least one parquet file")
    schema, n_rows = _parquet_schema_and_rows(parquet_files)
    pretty_name = "ICC teacher scores"
    card_data = DatasetCardData(
        language="en",
        license=license,
        pretty_name=pretty_name,
        task_categories=["text-classification"],
        size_categories=size_category(n_rows),
        tags=["icc", "image-captioning", "dataset-curation", "concreteness", "distillation"],
        configs=[{"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*.parquet"}]}],
    )
    columns = [(f.name, str(f.type), TEACHER_SCORE_COLUMNS.get(f.name, "(not documented)")) for f in schema]
    teachers = provenance.teachers if provenance and provenance.teachers else _teachers_in(parquet_files[0])
    return DatasetCard.from_template(
        card_data,
        template_str=_template("teacher_dataset_card.md"),
        pretty_name=pretty_name,
        repo_id=repo_id,
        model_repo_id=model_repo_id,
        n_rows=n_rows,
        columns=columns,
        teachers=teacher_lines(teachers),
        combination=provenance.combination if provenance else None,
        license=license,
        paper_url=PAPER_URL,
        citation=CITATION,
    )


def benchmark_overlap(parquet_files: Sequence[str | os.PathLike]) -> int:
    """How many captions of the teacher-score data are also in the caption benchmark's dev split."""
    benchmark = {row["caption"] for row in dev_split()}
    return sum(
        sum(caption in benchmark for caption in pq.read_table(file, columns=["caption"]).column("caption").to_pylist())
        for file in parquet_files
    )


def _teachers_in(parquet_file: str | os.PathLike) -> dict[str, dict]:
    """Teacher provenance recorded in the dataset itself (the first row's JSON columns)."""
    columns = [name for name in ("sba_teacher", "vba_teacher") if name in pq.read_schema(parquet_file).names]
    if not columns:
        return {}
    first = pq.read_table(parquet_file, columns=columns).slice(0, 1).to_pylist()
    teachers = {}
    for column in columns:
        try:
            value = json.loads(first[0][column]) if first and first[0][column] else None
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            teachers[column.removesuffix("_teacher")] = value
    return teachers


def benchmark_dataset_card(repo_id: str, bench: BenchResults | None = None) -> DatasetCard:
    """Card of the caption-concreteness development split shipped with the package."""
    rows = dev_split()
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
        configs=[{"config_name": "default", "data_files": [{"split": "dev", "path": "data/dev-*.parquet"}]}],
    )
    counts = {}
    for row in rows:
        counts[row["concreteness_annotation"]] = counts.get(row["concreteness_annotation"], 0) + 1
    kinds = {"sample_id": "string", "caption": "string", "concreteness_annotation": "int64", "icc_score": "float64"}
    bench_rows = bench.for_benchmark(CAPTION_BENCHMARK) if bench else []
    return DatasetCard.from_template(
        card_data,
        template_str=_template("benchmark_dataset_card.md"),
        pretty_name=pretty_name,
        repo_id=repo_id,
        n_rows=len(rows),
        columns=[(name, kinds[name], meaning) for name, meaning in DEV_SPLIT_COLUMNS.items()],
        label_counts=", ".join(f"{label}: {counts[label]}" for label in sorted(counts)),
        results_tables=results_tables(bench, bench_rows) if bench_rows else "",
        bench_source=Path(bench.source).name if bench else "",
        paper_url=PAPER_URL,
        citation=CITATION,
    )


def _parquet_schema_and_rows(files: Sequence[str | os.PathLike]):
    schema, n_rows = None, 0
    for file in files:
        try:
            metadata = pq.read_metadata(file)
        except (OSError, ValueError) as error:
            raise UserInputError(f"{file}: not a readable parquet file ({error})") from None
        file_schema = metadata.schema.to_arrow_schema()
        if schema is not None and not file_schema.equals(schema):
            raise UserInputError(f"{file}: schema differs from the first parquet file")
        schema = file_schema
        n_rows += metadata.num_rows
    return schema, n_rows


#: The Hub's ``size_categories`` labels, smallest first; each bucket is ten times the last.
SIZE_CATEGORIES = (
    "n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "10M<n<100M",
    "100M<n<1B", "1B<n<10B", "10B<n<100B", "100B<n<1T",
)  # fmt: skip


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` bucket for ``n`` rows."""
    bound = 1_000
    for label in SIZE_CATEGORIES:
        if n < bound:
            return label
        bound *= 10
    return "n>1T"
