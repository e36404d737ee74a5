"""The teacher-score dataset's card, written by the pipeline next to the data it describes.

Everything on it is read from the run's files: the parquet schema, row count and seeds,
the teachers' model ids and decoding settings (the ``sba_teacher`` / ``vba_teacher``
columns), the standardizer and combiner parameters (``standardizer.json``,
``combiner.json``) and the pipeline settings. The folder it is written to
(``OUTPUT_DIR/dataset``: ``README.md`` + ``data/train-*.parquet``) is what
``icc push --kind dataset`` uploads.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from huggingface_hub import DatasetCard, DatasetCardData

from ...utils.atomic_files import write_text
from ...utils.citation import CITATION, PAPER_URL
from ...utils.errors import UserInputError
from ...utils.provenance import package_versions
from ...version import DISTRIBUTION
from .teacher_dataset import DATA_DIR, dataset_files

CARD_FILE = "README.md"
#: Meaning of each column of the dataset (``teacher_dataset.DATASET_SCHEMA``); a test keeps them equal.
TEACHER_SCORE_COLUMNS = {
    "id": "caption id, stable across shards",
    "caption": "the caption text",
    "n_words": "caption length in words (the standardization bucket)",
    "sba_best": "the SBA teacher's best reconstruction of the caption (of its returned sequences)",
    "sba_similarity": "SBA raw similarity: 1 - character Levenshtein distance / max length",
    "vba_best": "the VBA teacher's best caption of the generated image (of its returned captions)",
    "vba_similarity": "VBA raw similarity: BERTScore F1",
    "sba_teacher": "JSON provenance of the SBA teacher (model ids, settings, versions)",
    "vba_teacher": "JSON provenance of the VBA teacher (model ids, settings, versions)",
    "seed": "run seed (each caption's generator is seeded from it and the caption id)",
    "sba_score": "SBA similarity after per-length logit-normal standardization, in (0, 1)",
    "vba_score": "VBA similarity after per-length logit-normal standardization, in (0, 1)",
    "target": "the distillation target sigma(a*vba_score + b*sba_score + c)",
}
#: Teacher provenance keys that name models (shown first); every other recorded setting follows.
TEACHER_MODEL_KEYS = ("text_model", "lm", "text_to_image", "captioner", "bertscore_model")
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


def teacher_lines(teachers: dict[str, dict]) -> list[str]:
    """``SBA: text_model `...`, lm `...`, num_beams `5`, ...`` per teacher: model ids first, then
    every other setting it recorded (decoding, similarity), without package versions."""
    lines = []
    for name, settings in teachers.items():
        keys = [key for key in TEACHER_MODEL_KEYS if key in settings]
        keys += sorted(key for key in settings if key not in keys and key != "versions")
        shown = [f"{key} `{_escape(settings[key])}`" for key in keys if settings[key] is not None]
        lines.append(f"{name.upper()}: " + ", ".join(shown or ["(no settings recorded)"]))
    return lines


def _escape(value: object) -> str:
    """``value`` for a code span: strings with their control characters escaped (a stop string ``\\n``)."""
    return repr(value)[1:-1] if isinstance(value, str) else str(value)


def teacher_dataset_card(
    parquet_files: Sequence[str | os.PathLike],
    *,
    run_dir: str | os.PathLike | None = None,
    config: dict | None = None,
    repo_id: str | None = None,
    model_repo_id: str | None = None,
    license: str = "other",
) -> DatasetCard:
    """The card of the teacher-score dataset in ``parquet_files``.

    ``run_dir`` is the pipeline output folder the data came from: its ``standardizer.json``
    and ``combiner.json`` (when present) give the standardization and combination
    parameters; ``config`` is the pipeline's settings (its captions and annotations sources,
    seed). ``repo_id`` (unknown to the pipeline) names the repository in the usage example.
    """
    if not parquet_files:
        raise UserInputError("the teacher-score dataset needs at least one parquet file")
    schema, n_rows = _parquet_schema_and_rows(parquet_files)
    run = Path(run_dir) if run_dir is not None else None
    standardizer = _json_or_none(run / "standardizer.json") if run else None
    combiner = _json_or_none(run / "combiner.json") if run else None
    pretty_name = "ICC teacher scores"
    card_data = DatasetCardData(
        language="en",
        license=license,
        pretty_name=pretty_name,
        task_categories=["text-classification"],
        size_categories=size_category(n_rows),
        tags=["icc", "image-captioning", "dataset-curation", "concreteness", "distillation"],
        configs=[{"config_name": "default", "data_files": [{"split": "train", "path": f"{DATA_DIR}/train-*.parquet"}]}],
    )
    columns = [(f.name, str(f.type), TEACHER_SCORE_COLUMNS.get(f.name, "(not documented)")) for f in schema]
    config = config or {}
    return DatasetCard.from_template(
        card_data,
        template_str=(Path(__file__).parent / "templates" / "teacher_dataset_card.md").read_text(encoding="utf-8"),
        pretty_name=pretty_name,
        repo_id=repo_id,
        model_repo_id=model_repo_id,
        n_rows=n_rows,
        n_files=len(parquet_files),
        columns=columns,
        teachers=teacher_lines(_teachers_in(parquet_files[0])),
        seeds=_seeds(parquet_files) if "seed" in schema.names else [],
        standardizer=_standardizer_tables(standardizer) if standardizer else None,
        combiner=combiner,
        sources={key: config[key] for key in ("captions", "teacher_scores", "annotations") if config.get(key)},
        sba=config.get("sba") or {},
        tiny=bool(config.get("tiny")),
        versions=package_versions(DISTRIBUTION, "torch", "transformers", "diffusers", "bert-score"),
        written_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        license=license,
        paper_url=PAPER_URL,
        citation=CITATION,
    )


def write_teacher_dataset_card(dataset_dir: str | os.PathLike, run_dir: str | os.PathLike, config: dict) -> Path:
    """``dataset_dir/README.md`` for the pipeline run in ``run_dir``: the folder is then push-ready."""
    card = teacher_dataset_card(dataset_files(dataset_dir), run_dir=run_dir, config=config)
    path = Path(dataset_dir) / CARD_FILE
    return write_text(path, str(card) + "\n")


def _json_or_none(path: Path) -> dict | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _standardizer_tables(saved: dict) -> dict[str, dict]:
    """Per teacher: the fitted settings and one row per length bucket."""
    return {
        teacher: {
            "settings": {key: value for key, value in params.items() if key not in ("format", "buckets")},
            "buckets": [
                {
                    "lengths": _length_range(bucket["lengths"]),
                    "count": bucket["count"],
                    "logit_mean": bucket["logit_mean"],
                    "logit_sd": bucket["logit_sd"],
                }
                for bucket in params["buckets"]
            ],
        }
        for teacher, params in saved.items()
    }


def _length_range(lengths: list[int]) -> str:
    return str(lengths[0]) if len(lengths) == 1 else f"{lengths[0]}-{lengths[-1]}"


def _seeds(files: Sequence[str | os.PathLike]) -> list[int]:
    values: set[int] = set()
    for file in files:
        column = pq.read_table(file, columns=["seed"]).column("seed")
        values.update(value for value in pc.unique(column).to_pylist() if value is not None)
    return sorted(values)


def _parquet_schema_and_rows(files: Sequence[str | os.PathLike]) -> tuple[pa.Schema, int]:
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
