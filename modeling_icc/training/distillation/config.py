"""Settings of the whole ICC pipeline, read from YAML or JSON (see training_scripts/configs/)."""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_type_hints

from ...models.vba.configuration_vba import VBAConfig
from ...teachers.sba import SBAComponents
from ...utils.errors import UserInputError
from ..sba_projector import ProjectorTrainingArguments
from .distill import DistillConfig, StudentTrainingArguments


@dataclass
class CaptionSource:
    """Captions to score. ``path`` None means the annotated development split shipped in the package."""

    path: str | None = field(
        default=None,
        metadata={"help": "Hub dataset id, .jsonl/.csv/.parquet/.txt, or LLaVA chat.json", "aliases": ["--captions"]},
    )
    column: str = field(default="caption", metadata={"help": "caption column (tables and Hub datasets)"})
    id_column: str | None = field(default=None, metadata={"help": "unique row id column (default: row number)"})
    split: str = field(default="train", metadata={"help": "Hub dataset split"})
    max_samples: int | None = field(default=None, metadata={"help": "the first N captions only"})


@dataclass
class AnnotationSource:
    """Human-annotated captions for the combiner. ``path`` None means the shipped development split.

    A table that already has ``sba_similarity`` and ``vba_similarity`` columns is used
    as is; otherwise its captions are scored by the teachers (reusing scores of
    captions that are also in the scoring set, matched by id and text).
    """

    path: str | None = None
    caption_column: str = "caption"
    annotation_column: str = "concreteness_annotation"
    id_column: str | None = "sample_id"
    max_samples: int | None = None


@dataclass
class SBASettings(SBAComponents):
    """The SBA teacher: a trained SBA directory (``model``), or the components to train one on."""

    model: str | None = None  # a trained SBA directory or Hub id; None with train=True trains one first
    train: bool = False
    train_captions: CaptionSource | None = None
    training: ProjectorTrainingArguments = field(default_factory=ProjectorTrainingArguments)
    generation: dict[str, Any] = field(default_factory=dict)  # overrides of the SBA's saved GenerationConfig
    batch_size: int = 64


@dataclass
class VBASettings(VBAConfig):
    batch_size: int = 8
    save_images: bool = False


@dataclass
class StandardizeSettings:
    epsilon: float = 1e-4
    min_bucket_size: int = 50


@dataclass
class CombineSettings:
    threshold: float | None = None  # None: the median annotation
    cv_folds: int = 5


@dataclass
class DistillSettings(DistillConfig):
    two_stage: bool = False
    training: StudentTrainingArguments = field(default_factory=StudentTrainingArguments)


@dataclass
class PipelineConfig:
    output_dir: str = "runs/icc"
    seed: int = 0
    device: str | None = None
    dtype: str | None = None
    tiny: bool = False  # tiny random teachers and student (modeling_icc.testing.with_tiny_components builds them)
    captions: CaptionSource = field(default_factory=CaptionSource)
    teacher_scores: str | None = None  # your own scores (caption, sba_similarity, vba_similarity): skips the teachers
    annotations: AnnotationSource = field(default_factory=AnnotationSource)
    sba: SBASettings = field(default_factory=SBASettings)
    vba: VBASettings = field(default_factory=VBASettings)
    shard_size: int = 1000
    standardize: StandardizeSettings = field(default_factory=StandardizeSettings)
    combine: CombineSettings = field(default_factory=CombineSettings)
    distill: DistillSettings = field(default_factory=DistillSettings)
    dataset_rows_per_shard: int = 100_000

    @classmethod
    def load(cls, path: str | os.PathLike, **overrides: Any) -> PipelineConfig:
        """Read a ``.yaml``/``.yml``/``.json`` config; top-level ``overrides`` win."""
        path = Path(path)
        if not path.is_file():
            raise UserInputError(f"config file not found: {path}")
        text = path.read_text(encoding="utf-8")
        if path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text) or {}
        elif path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            raise UserInputError(f"config must be .yaml, .yml or .json, got {path.name}")
        return from_dict(cls, {**data, **{k: v for k, v in overrides.items() if v is not None}}, str(path))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


#: Where a tiny run keeps its random components, under ``output_dir`` (``testing.with_tiny_components``).
TINY_COMPONENTS = "tiny_components"


def from_dict(cls: type, data: dict, where: str) -> Any:
    """Build dataclass ``cls`` from nested dicts, refusing unknown keys with the key's path."""
    if not isinstance(data, dict):
        raise UserInputError(f"{where}: expected a mapping, got {type(data).__name__}")
    hints = get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        known = ", ".join(sorted(names)) if len(names) <= 30 else f"the fields of {cls.__name__}"
        raise UserInputError(f"{where}: unknown setting(s) {', '.join(unknown)}; known: {known}")
    values = {}
    for key, value in data.items():
        nested = _dataclass_in(hints[key])
        values[key] = from_dict(nested, value, f"{where}.{key}") if nested and value is not None else value
    try:
        return cls(**values)
    except (TypeError, ValueError) as error:  # e.g. TrainingArguments refusing bf16 without a GPU
        raise UserInputError(f"{where}: {error}") from None


def _dataclass_in(hint: Any) -> type | None:
    candidates = getattr(hint, "__args__", (hint,))
    return next((c for c in candidates if dataclasses.is_dataclass(c)), None)
