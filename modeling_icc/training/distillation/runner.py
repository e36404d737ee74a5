"""The whole ICC pipeline as resumable steps: teachers -> standardize -> combine -> dataset -> distil -> evaluate.

Each step reads its inputs from files written by earlier steps and writes its own
outputs plus a marker ``steps/<name>.json`` (timing and metrics). A step is skipped
when its marker and outputs exist and no earlier step ran in this invocation, so a
re-run redoes exactly the steps whose outputs were deleted, and everything after them.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ...curation.io.tables import infer_format, read_table
from ...teachers import CaptionSet, load_captions, read_shards, score_to_shards
from ...teachers.sba import SBAPipeline
from ...teachers.vba import VBAPipeline
from ...utils.atomic_files import atomic_file
from ...utils.errors import UserInputError
from ...utils.provenance import package_versions, write_json
from ...utils.shipped_data import dev_split
from ...version import DISTRIBUTION
from ..sba_projector import train_sba
from .combine import ScoreCombiner
from .config import TINY_COMPONENTS, PipelineConfig
from .dataset_card import write_teacher_dataset_card
from .distill import distill_student, distill_two_stage
from .evaluation import evaluate_on_dev
from .plots import plot_combination, plot_standardization
from .standardize import LengthStandardizer
from .teacher_dataset import (
    merge_teacher_shards,
    read_dataset,
    teacher_table_from_records,
    with_scores,
    write_dataset,
)

ANNOTATION = "annotation"


class PipelineRun:
    """Runs the steps of one :class:`PipelineConfig`; ``run()`` returns the summary it writes."""

    def __init__(self, config: PipelineConfig, progress: bool | None = None) -> None:
        if config.tiny and not Path(config.distill.backbone).is_relative_to(Path(config.output_dir) / TINY_COMPONENTS):
            raise UserInputError(
                "tiny: true runs on tiny random components: point the config at them with "
                "modeling_icc.testing.with_tiny_components(config) (training_scripts/run_pipeline.py does)"
            )
        self.config = config
        self.out = Path(self.config.output_dir)
        self.progress = progress
        self.summary: dict[str, dict] = {}
        self._upstream_ran = False

    # ----- file layout ------------------------------------------------------------------------

    @property
    def sba_dir(self) -> Path:
        """Where the SBA is trained to, or read from (``sba.model``: a directory or a Hub id)."""
        return Path(self.config.sba.model) if self.config.sba.model else self.out / "sba"

    def path(self, name: str) -> Path:
        return self.out / name

    # ----- driver -----------------------------------------------------------------------------

    def run(self) -> dict:
        start = time.perf_counter()
        self.out.mkdir(parents=True, exist_ok=True)
        if self.config.sba.train and self.config.teacher_scores is None:
            self._step("sba_training", [self.sba_dir / "model.safetensors"], self.train_sba)
        self._step(
            "teachers", [self.path("teacher_scores.parquet"), self.path("annotated_scores.parquet")], self.teachers
        )
        self._step(
            "standardize", [self.path("standardizer.json"), self.path("plots/standardization.png")], self.standardize
        )
        self._step("combine", [self.path("combiner.json"), self.path("plots/combination.png")], self.combine)
        self._step("dataset", [self.path("dataset/data")], self.dataset)
        self._step("distill", [self.path("student/model.safetensors")], self.distill)
        self._step("evaluate", [self.path("evaluation.json")], self.evaluate)
        # Rewritten on every run, so the push-ready dataset folder always describes this run's files.
        card = write_teacher_dataset_card(self.path("dataset"), self.out, self.config.to_dict())
        summary = {
            "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "wall_seconds_this_invocation": time.perf_counter() - start,
            "steps": self.summary,
            "outputs": {
                "teacher_score_dataset": str(self.path("dataset")),
                "teacher_score_dataset_card": str(card),
                "standardizer": str(self.path("standardizer.json")),
                "combiner": str(self.path("combiner.json")),
                "student": str(self.path("student")),
                "plots": sorted(str(p) for p in self.path("plots").glob("*.png")),
            },
            "config": self.config.to_dict(),
            "versions": package_versions(
                DISTRIBUTION, "torch", "transformers", "diffusers", "bert-score", "scikit-learn"
            ),
        }
        write_json(self.path("summary.json"), summary)
        return summary

    def _step(self, name: str, outputs: list[Path], action: Callable[[], dict]) -> None:
        marker = self.path(f"steps/{name}.json")
        if not self._upstream_ran and marker.is_file() and all(p.exists() for p in outputs):
            record = json.loads(marker.read_text(encoding="utf-8"))
            self.summary[name] = {**record, "status": "skipped (outputs exist)"}
            return
        started = time.perf_counter()
        metrics = action()
        record = {"seconds": time.perf_counter() - started, "metrics": metrics}
        write_json(marker, record)
        self.summary[name] = {**record, "status": "ran"}
        self._upstream_ran = True

    # ----- steps ------------------------------------------------------------------------------

    def train_sba(self) -> dict:
        settings = self.config.sba
        source = settings.train_captions or self.config.captions
        captions = self._load_captions(source)
        args = dataclasses.replace(settings.training, output_dir=str(self.sba_dir))
        metrics = train_sba(SBAPipeline.from_components(settings), captions.captions, args)
        return {"n_captions": len(captions), "train_loss": metrics.get("train_loss")}

    def teachers(self) -> dict:
        scoring = self._teacher_table_for_scoring()
        with atomic_file(self.path("teacher_scores.parquet")) as stream:
            pq.write_table(scoring, stream)
        annotated = self._annotated_table(scoring)
        with atomic_file(self.path("annotated_scores.parquet")) as stream:
            pq.write_table(annotated, stream)
        return {"n_scored": scoring.num_rows, "n_annotated": annotated.num_rows}

    def standardize(self) -> dict:
        table = pq.read_table(self.path("teacher_scores.parquet"))
        n_words = np.asarray(table.column("n_words"), dtype=np.int64)
        settings = self.config.standardize
        result, plotted = {}, {}
        for teacher in ("sba", "vba"):
            raw = np.asarray(table.column(f"{teacher}_similarity"), dtype=np.float64)
            standardizer = LengthStandardizer(settings.epsilon, settings.min_bucket_size)
            plotted[teacher] = (raw, standardizer.fit_transform(raw, n_words))
            result[teacher] = standardizer.to_dict()
        write_json(self.path("standardizer.json"), result)
        plot_standardization(plotted, n_words, self.path("plots/standardization.png"))
        return {f"{t}_buckets": len(result[t]["buckets"]) for t in result}

    def combine(self) -> dict:
        table = pq.read_table(self.path("annotated_scores.parquet"))
        sba, vba = self._standardized(table)
        annotations = np.asarray(table.column(ANNOTATION), dtype=np.float64)
        settings = self.config.combine
        combiner = ScoreCombiner(settings.threshold, settings.cv_folds, seed=self.config.seed).fit(
            vba, sba, annotations
        )
        combiner.save(self.path("combiner.json"))
        labels = annotations >= combiner.threshold
        plot_combination(vba, sba, labels, combiner, self.path("plots/combination.png"))
        return {
            "vba_weight": combiner.vba_weight,
            "sba_weight": combiner.sba_weight,
            "intercept": combiner.intercept,
            **vars(combiner.fit_report),
        }

    def dataset(self) -> dict:
        table = pq.read_table(self.path("teacher_scores.parquet"))
        sba, vba = self._standardized(table)
        target = ScoreCombiner.load(self.path("combiner.json")).combine(vba, sba)
        paths = write_dataset(
            with_scores(table, sba, vba, target), self.path("dataset"), self.config.dataset_rows_per_shard
        )
        return {"rows": table.num_rows, "shards": len(paths), "target_mean": float(target.mean())}

    def distill(self) -> dict:
        table = read_dataset(self.path("dataset"))
        texts = table.column("caption").to_pylist()
        combiner = ScoreCombiner.load(self.path("combiner.json"))
        provenance = {
            "teachers": {
                "sba": json.loads(table.column("sba_teacher")[0].as_py()),
                "vba": json.loads(table.column("vba_teacher")[0].as_py()),
            },
            "combination": {k: v for k, v in combiner.to_dict().items() if k != "fit"},
            "teacher_score_dataset": str(self.path("dataset")),
            "n_teacher_scored_captions": table.num_rows,
        }
        settings = self.config.distill
        if settings.two_stage:
            return distill_two_stage(
                texts,
                np.asarray(table.column("sba_score")),
                np.asarray(table.column("vba_score")),
                combiner,
                self.path("student"),
                self.path("stage_students"),
                settings,
                settings.training,
                provenance,
            )
        target = np.asarray(table.column("target"))
        return distill_student(texts, target, self.path("student"), settings, settings.training, provenance)

    def evaluate(self) -> dict:
        result = evaluate_on_dev(self.path("student"))
        write_json(self.path("evaluation.json"), result)
        return result

    # ----- helpers ----------------------------------------------------------------------------

    def _standardized(self, table: pa.Table) -> tuple[np.ndarray, np.ndarray]:
        saved = json.loads(self.path("standardizer.json").read_text(encoding="utf-8"))
        n_words = np.asarray(table.column("n_words"), dtype=np.int64)
        sba, vba = (
            LengthStandardizer.from_dict(saved[t]).transform(np.asarray(table.column(f"{t}_similarity")), n_words)
            for t in ("sba", "vba")
        )
        return sba, vba

    def _load_captions(self, source) -> CaptionSet:
        if source.path is None:
            rows = dev_split()
            return CaptionSet([r["sample_id"] for r in rows], [r["caption"] for r in rows]).head(source.max_samples)
        return load_captions(source.path, source.column, source.id_column, source.split, source.max_samples)

    def _teacher_table_for_scoring(self) -> pa.Table:
        if self.config.teacher_scores is not None:
            path = Path(self.config.teacher_scores)
            return teacher_table_from_records(_records(path))
        return self._score_with_teachers(self._load_captions(self.config.captions), "scoring")

    def _score_with_teachers(self, captions: CaptionSet, name: str) -> pa.Table:
        config = self.config
        shards = self.path(f"shards/{name}")
        options = dict(seed=config.seed, shard_size=config.shard_size, progress=self.progress)
        if config.sba.model is None and not (self.sba_dir / "config.json").is_file():
            raise UserInputError(
                f"no trained SBA in {self.sba_dir}: set sba.model to a directory written by train_sba.py "
                "(or a Hub id), or sba.train: true to train one first"
            )
        sba = SBAPipeline.from_pretrained(
            self.sba_dir, device=config.device, dtype=config.dtype, generation=config.sba.generation
        )
        score_to_shards(sba, captions, shards / "sba", batch_size=config.sba.batch_size, **options)
        del sba
        image_dir = self.path(f"vba_images/{name}") if config.vba.save_images else None
        vba = VBAPipeline.from_pretrained(config.vba, device=config.device, dtype=config.dtype, image_dir=image_dir)
        score_to_shards(vba, captions, shards / "vba", batch_size=config.vba.batch_size, **options)
        return merge_teacher_shards(read_shards(shards / "sba"), read_shards(shards / "vba"))

    def _annotated_table(self, scoring: pa.Table) -> pa.Table:
        """Teacher scores of the annotated captions: given, reused from the scoring set, or computed."""
        records = self._annotation_records()
        annotations = pa.array([float(r[ANNOTATION]) for r in records], type=pa.float64())
        if all("sba_similarity" in r and "vba_similarity" in r for r in records):
            return teacher_table_from_records(records).append_column(ANNOTATION, annotations)
        by_key = {
            (row_id, caption): i
            for i, (row_id, caption) in enumerate(
                zip(scoring.column("id").to_pylist(), scoring.column("caption").to_pylist(), strict=True)
            )
        }
        keys = [(r["id"], r["caption"]) for r in records]
        if all(key in by_key for key in keys):
            return scoring.take([by_key[key] for key in keys]).append_column(ANNOTATION, annotations)
        if self.config.teacher_scores is not None:
            raise UserInputError(
                "the annotated captions have no sba_similarity/vba_similarity and are not all in teacher_scores; "
                "add those columns to the annotation table"
            )
        captions = CaptionSet([r["id"] for r in records], [r["caption"] for r in records])
        return self._score_with_teachers(captions, "annotated").append_column(ANNOTATION, annotations)

    def _annotation_records(self) -> list[dict]:
        source = self.config.annotations
        if source.path is None:
            rows = [
                {"id": r["sample_id"], "caption": r["caption"], ANNOTATION: r["concreteness_annotation"]}
                for r in dev_split()
            ]
            return rows[: source.max_samples]
        out = []
        for number, record in enumerate(_records(Path(source.path))):
            caption, label = record.get(source.caption_column), record.get(source.annotation_column)
            if not isinstance(caption, str) or not caption.strip() or label in (None, ""):
                continue
            row = {
                "id": str(record[source.id_column]) if source.id_column in record else str(number),
                "caption": caption.strip(),
                ANNOTATION: float(label),
            }
            for key in ("sba_similarity", "vba_similarity"):
                if record.get(key) not in (None, ""):
                    row[key] = float(record[key])
            out.append(row)
        if not out:
            raise UserInputError(f"{source.path}: no rows with both a caption and an annotation")
        return out[: source.max_samples]


def _records(path: Path) -> list[dict]:
    table = read_table(path, infer_format(path), column="caption")
    return table.records if table.records is not None else table.arrow.to_pylist()


def run_pipeline(config: PipelineConfig, progress: bool | None = None) -> dict:
    """Run (or resume) the pipeline described by ``config``; returns the summary."""
    return PipelineRun(config, progress).run()
