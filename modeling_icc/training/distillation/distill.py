"""Distilling teacher targets into the ICC student (``ICCForConcreteness``) with MSE.

Defaults are the paper's: DistilRoBERTa-base, batch 128, lr 1e-4, cosine,
3 % warm-up, 2 epochs. A held-out split reports Pearson/Spearman; the saved
student loads with ``AutoModel.from_pretrained`` and ``load_scorer`` and carries
``icc_provenance.json`` (teachers, data size, combination weights).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from transformers import TrainingArguments

from ...models.icc.modeling_icc import ICCForConcreteness
from ...utils.checkpoints import load_complete
from ...utils.provenance import package_versions, write_json
from ...version import DISTRIBUTION
from ..arguments import PaperTrainingArguments
from .combine import ScoreCombiner

PROVENANCE_FILE = "icc_provenance.json"
#: The training settings recorded in the provenance (and so on the model card).
RECIPE_FIELDS = (
    "per_device_train_batch_size gradient_accumulation_steps learning_rate lr_scheduler_type warmup_steps"
    " num_train_epochs max_steps bf16 seed"
).split()


@dataclass
class DistillConfig:
    """What the student is and what is held out; the recipe is :class:`StudentTrainingArguments`."""

    backbone: str = field(default="distilroberta-base", metadata={"help": "RoBERTa-family model id or path"})
    eval_fraction: float = field(default=0.05, metadata={"help": "held-out share for Pearson/Spearman"})
    max_length: int = field(default=128, metadata={"help": "tokens kept per caption"})


@dataclass
class StudentTrainingArguments(PaperTrainingArguments):
    """The paper's student recipe: batch 128, lr 1e-4, cosine, 3 % warm-up, 2 epochs."""

    per_device_train_batch_size: int = 128
    learning_rate: float = 1e-4
    logging_steps: float = 50
    save_steps: float = 1000
    save_total_limit: int | None = 1


class _Encoded(torch.utils.data.Dataset):
    def __init__(self, encodings: dict[str, list], targets: np.ndarray) -> None:
        self.encodings, self.targets = encodings, targets

    def __len__(self) -> int:
        return len(self.targets)

    def __getitem__(self, index: int) -> dict:
        row = {key: values[index] for key, values in self.encodings.items()}
        row["labels"] = float(self.targets[index])
        return row


def split_indices(n: int, eval_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A seeded random (train, held-out) split; the held-out part has at least 2 rows when possible."""
    order = np.random.default_rng(seed).permutation(n)
    n_eval = min(max(2, round(n * eval_fraction)), n - 1) if eval_fraction > 0 and n > 2 else 0
    return np.sort(order[n_eval:]), np.sort(order[:n_eval])


def correlations(predictions: np.ndarray, targets: np.ndarray) -> dict[str, float]:
    """Pearson, Spearman and Kendall correlations (NaN when either side is constant)."""
    from scipy import stats

    predictions, targets = np.asarray(predictions, dtype=np.float64), np.asarray(targets, dtype=np.float64)
    if len(predictions) < 2 or np.ptp(predictions) == 0 or np.ptp(targets) == 0:
        return {"pearson": float("nan"), "spearman": float("nan"), "kendall": float("nan")}
    return {
        "pearson": float(stats.pearsonr(predictions, targets)[0]),
        "spearman": float(stats.spearmanr(predictions, targets)[0]),
        "kendall": float(stats.kendalltau(predictions, targets)[0]),
    }


def _compute_metrics(eval_prediction) -> dict[str, float]:
    predictions = eval_prediction.predictions
    if isinstance(predictions, tuple):
        predictions = predictions[0]
    values = correlations(np.asarray(predictions).reshape(-1), np.asarray(eval_prediction.label_ids).reshape(-1))
    return {"pearson": values["pearson"], "spearman": values["spearman"]}


def distill_student(
    texts: list[str],
    targets: np.ndarray,
    output_dir: str | os.PathLike,
    config: DistillConfig | None = None,
    training: TrainingArguments | None = None,
    provenance: dict | None = None,
) -> dict[str, float]:
    """Train a student on ``(texts, targets)`` and save it to ``output_dir``; returns held-out metrics.

    ``training`` is the recipe (:class:`StudentTrainingArguments`, the paper's, by default);
    its ``output_dir`` is replaced by ``output_dir``.

    A run killed mid-way resumes from the newest ``checkpoint-*`` in ``output_dir``;
    checkpoints are removed once the final model is saved.
    """
    from transformers import AutoTokenizer, DataCollatorWithPadding, Trainer
    from transformers.trainer_utils import get_last_checkpoint

    config, training = config or DistillConfig(), training or StudentTrainingArguments()
    targets = np.asarray(targets, dtype=np.float64)
    if len(texts) != len(targets):
        raise ValueError("texts and targets differ in length")
    if np.isnan(targets).any():
        raise ValueError("distillation targets contain NaN")
    output_dir = Path(output_dir)
    tokenizer = AutoTokenizer.from_pretrained(config.backbone, use_fast=True, trust_remote_code=False)
    model = load_backbone(config.backbone)
    encodings = tokenizer(list(texts), truncation=True, max_length=config.max_length)
    encodings = {key: encodings[key] for key in ("input_ids", "attention_mask")}
    train_rows, eval_rows = split_indices(len(texts), config.eval_fraction, training.seed)

    def subset(rows: np.ndarray) -> _Encoded:
        return _Encoded({k: [v[i] for i in rows] for k, v in encodings.items()}, targets[rows])

    args = dataclasses.replace(
        training,
        output_dir=str(output_dir),
        per_device_eval_batch_size=training.per_device_train_batch_size,
        eval_strategy="epoch" if len(eval_rows) else "no",
    )
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=subset(train_rows),
        eval_dataset=subset(eval_rows) if len(eval_rows) else None,
        data_collator=DataCollatorWithPadding(tokenizer),
        processing_class=tokenizer,
        compute_metrics=_compute_metrics,
    )
    checkpoint = get_last_checkpoint(str(output_dir)) if output_dir.is_dir() else None
    train_result = trainer.train(resume_from_checkpoint=checkpoint)
    metrics = {"train_loss": float(train_result.metrics.get("train_loss", float("nan")))}
    if len(eval_rows):
        evaluation = trainer.evaluate()
        metrics.update({key.removeprefix("eval_"): float(value) for key, value in evaluation.items()})
    trainer.save_model(str(output_dir))
    for stale in output_dir.glob("checkpoint-*"):
        shutil.rmtree(stale)
    record = {
        "backbone": config.backbone,
        "n_captions": len(texts),
        "n_train": len(train_rows),
        "n_held_out": len(eval_rows),
        "target": {"mean": float(targets.mean()), "sd": float(targets.std())},
        "training": {
            **{f.name: getattr(config, f.name) for f in dataclasses.fields(DistillConfig)},
            **{key: getattr(args, key) for key in RECIPE_FIELDS},
        },
        "held_out_metrics": metrics,
        "versions": package_versions(DISTRIBUTION, "transformers", "torch"),
        **(provenance or {}),
    }
    write_json(output_dir / PROVENANCE_FILE, record)
    return metrics


def load_backbone(backbone: str | os.PathLike) -> ICCForConcreteness:
    """The student before training: ``backbone``'s encoder under a new regression head.

    Only the head may be missing: an encoder weight missing, any other weight left over or a
    weight of the wrong shape is a :class:`CheckpointError` (transformers would fill the gap
    randomly and distil into a partly random encoder).
    """
    return load_complete(
        ICCForConcreteness.from_pretrained,
        backbone,
        use_safetensors=True,
        # the regression head is what distillation trains: a pretrained encoder has none
        allowed_missing=("classifier.",),
        # masked-LM checkpoints (distilroberta-base) also save their LM head and a pooler,
        # bare encoders the pooler alone: the student has neither
        allowed_unexpected=("lm_head.", "roberta.pooler.", "pooler."),
    )


def predict(model_dir: str | os.PathLike, texts: list[str]) -> np.ndarray:
    """Raw (unclipped) student outputs for ``texts``."""
    from ...scoring.load import load_scorer

    return load_scorer(model_dir, dtype="float32", progress=False).score(texts, raw=True).astype(np.float64)


def distill_two_stage(
    texts: list[str],
    sba_scores: np.ndarray,
    vba_scores: np.ndarray,
    combiner: ScoreCombiner,
    output_dir: str | os.PathLike,
    stage_dir: str | os.PathLike,
    config: DistillConfig | None = None,
    training: TrainingArguments | None = None,
    provenance: dict | None = None,
) -> dict[str, dict[str, float]]:
    """The paper's appendix variant: distil an SBA-student and a VBA-student, combine their
    predictions with the fitted weights, and distil the final student on that target."""
    stage_dir = Path(stage_dir)
    metrics = {}
    predictions = {}
    for name, scores in (("sba", sba_scores), ("vba", vba_scores)):
        directory = stage_dir / f"{name}_student"
        metrics[f"{name}_student"] = distill_student(
            texts, scores, directory, config, training, {**(provenance or {}), "target_column": f"{name}_score"}
        )
        predictions[name] = predict(directory, texts)
    target = combiner.combine(predictions["vba"], predictions["sba"])
    final_provenance = {
        **(provenance or {}),
        "two_stage": {"stage_students": [str(stage_dir / "sba_student"), str(stage_dir / "vba_student")]},
        "target_column": "combined predictions of the SBA and VBA students",
    }
    metrics["student"] = distill_student(texts, target, output_dir, config, training, final_provenance)
    return metrics


def read_provenance(model_dir: str | os.PathLike) -> dict:
    return json.loads((Path(model_dir) / PROVENANCE_FILE).read_text(encoding="utf-8"))
