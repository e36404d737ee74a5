"""Distillation into ICCForConcreteness: learning, held-out metrics, loading, provenance, two stages."""

import numpy as np
import pytest
import torch
from checkpoint_edits import copy_checkpoint, without
from safetensors.torch import load_file
from transformers import AutoModel, RobertaConfig, RobertaForMaskedLM

from modeling_icc import ICCForConcreteness, load_scorer
from modeling_icc.testing import tiny_tokenizer, training_corpus
from modeling_icc.testing.student import tiny_roberta_kwargs
from modeling_icc.training.distillation import (
    DistillConfig,
    ScoreCombiner,
    distill_student,
    distill_two_stage,
    read_provenance,
)
from modeling_icc.training.distillation.distill import StudentTrainingArguments, load_backbone, predict, split_indices
from modeling_icc.utils.errors import CheckpointError

pytestmark = pytest.mark.usefixtures("single_thread")


@pytest.fixture(scope="module")
def backbone(tiny_student_dir):
    """The suite's tiny student, read as a distillation backbone (nothing writes into it)."""
    return tiny_student_dir


@pytest.fixture(scope="module")
def masked_lm_backbone(tmp_path_factory):
    """distilroberta-base's layout: a RobertaForMaskedLM checkpoint that also saved a pooler."""
    directory = tmp_path_factory.mktemp("masked_lm")
    torch.manual_seed(0)
    model = RobertaForMaskedLM(RobertaConfig(**tiny_roberta_kwargs()))
    pooler = {"roberta.pooler.dense.weight": torch.zeros(32, 32), "roberta.pooler.dense.bias": torch.zeros(32)}
    model.save_pretrained(directory, state_dict={**model.state_dict(), **pooler})
    tiny_tokenizer().save_pretrained(directory)
    return directory


def _learnable_target(texts):
    """High for captions with the word 'a' (a pattern a tiny encoder can pick up), low otherwise."""
    return np.array([0.9 if " a " in f" {t.lower()} " else 0.1 for t in texts])


def _config(backbone) -> DistillConfig:
    return DistillConfig(backbone=str(backbone), eval_fraction=0.1)


def _training(**overrides) -> StudentTrainingArguments:
    values = dict(per_device_train_batch_size=16, learning_rate=3e-3, num_train_epochs=5, logging_steps=100)
    return StudentTrainingArguments(**{**values, **overrides})


def test_student_learns_a_learnable_target_and_loads_everywhere(backbone, tmp_path):
    texts = training_corpus()
    target = _learnable_target(texts)
    before = np.nanmean((predict(backbone, texts) - target) ** 2)  # NaN: the few captions in other languages
    metrics = distill_student(
        texts, target, tmp_path / "student", _config(backbone), _training(), {"teachers": "synthetic"}
    )
    after = np.nanmean((predict(tmp_path / "student", texts) - target) ** 2)
    assert after < 0.5 * before, (before, after)
    assert metrics["pearson"] > 0.3 and "spearman" in metrics
    assert type(AutoModel.from_pretrained(tmp_path / "student")) is ICCForConcreteness
    scores = load_scorer(tmp_path / "student", dtype="float32").score(["a dog on a beach"])
    assert scores.shape == (1,) and 0.0 <= scores[0] <= 1.0
    provenance = read_provenance(tmp_path / "student")
    assert provenance["n_captions"] == len(texts) and provenance["teachers"] == "synthetic"
    assert provenance["n_held_out"] == round(0.1 * len(texts))
    assert provenance["training"]["learning_rate"] == 3e-3 and provenance["training"]["eval_fraction"] == 0.1
    assert not list((tmp_path / "student").glob("checkpoint-*"))


def test_two_stage_distils_stage_students_then_the_combined_target(backbone, tmp_path):
    texts = training_corpus()[:80]
    target = _learnable_target(texts)
    combiner = ScoreCombiner(threshold=1.0).fit(target, 1 - target, (target > 0.5).astype(float) + 0)
    metrics = distill_two_stage(
        texts,
        1 - target,
        target,
        combiner,
        tmp_path / "final",
        tmp_path / "stages",
        _config(backbone),
        _training(num_train_epochs=1),
    )
    assert set(metrics) == {"sba_student", "vba_student", "student"}
    for name in ("sba_student", "vba_student"):
        assert read_provenance(tmp_path / "stages" / name)["target_column"] == f"{name[:3]}_score"
    assert "two_stage" in read_provenance(tmp_path / "final")


def test_bad_targets_are_refused(backbone, tmp_path):
    with pytest.raises(ValueError, match="NaN"):
        distill_student(["a", "b"], np.array([0.1, np.nan]), tmp_path, _config(backbone))
    with pytest.raises(ValueError, match="length"):
        distill_student(["a", "b"], np.array([0.1]), tmp_path, _config(backbone))


def test_a_masked_lm_backbone_starts_the_student_with_a_new_head(masked_lm_backbone):
    student, saved = load_backbone(masked_lm_backbone), load_file(str(masked_lm_backbone / "model.safetensors"))
    encoder = {name: tensor for name, tensor in student.state_dict().items() if name.startswith("roberta.")}
    assert encoder and all(torch.equal(tensor, saved[name]) for name, tensor in encoder.items())


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (without("roberta.encoder.layer.1.output.dense.weight"), r"1 weights missing \(roberta\.encoder\.layer\.1"),
        (lambda tensors: {**tensors, "qa_outputs.weight": torch.zeros(2, 32)}, r"1 unexpected weights \(qa_outputs"),
        (
            lambda tensors: {**tensors, "roberta.encoder.layer.1.output.dense.bias": torch.zeros(7)},
            r"1 weights of the wrong shape \(roberta\.encoder\.layer\.1\.output\.dense\.bias is 7 in the file, 32 in",
        ),
    ],
    ids=["missing", "unexpected", "reshaped"],
)
def test_a_backbone_differing_beyond_the_head_is_refused(masked_lm_backbone, edit, message, tmp_path):
    """Only the regression head may be new: transformers would train from random encoder weights."""
    broken = copy_checkpoint(masked_lm_backbone, tmp_path / "broken", edit)
    with pytest.raises(CheckpointError, match=message):
        distill_student(["a dog", "a cat"], np.array([0.2, 0.8]), tmp_path / "out", _config(broken))


def test_held_out_split_is_seeded_and_disjoint():
    train, held_out = split_indices(100, 0.05, seed=3)
    assert len(held_out) == 5 and not set(train) & set(held_out) and len(train) + len(held_out) == 100
    assert (split_indices(100, 0.05, seed=3)[1] == held_out).all()


def test_student_recipe_is_the_papers():
    args = StudentTrainingArguments()
    assert (args.per_device_train_batch_size, args.gradient_accumulation_steps, args.learning_rate) == (128, 1, 1e-4)
    assert (args.lr_scheduler_type, args.warmup_steps, args.num_train_epochs) == ("cosine", 0.03, 2)
    assert DistillConfig().backbone == "distilroberta-base"
