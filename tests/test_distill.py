"""Distillation into ICCForConcreteness: learning, held-out metrics, loading, provenance, two stages."""

import numpy as np
import pytest
from transformers import AutoModel

from modeling_icc import ICCForConcreteness, load_scorer
from modeling_icc.distillation import DistillConfig, ScoreCombiner, distill_student, distill_two_stage, read_provenance
from modeling_icc.distillation.distill import predict, split_indices
from modeling_icc.testing import save_tiny_student, training_corpus

pytestmark = pytest.mark.usefixtures("single_thread")


@pytest.fixture(scope="module")
def backbone(tmp_path_factory):
    return save_tiny_student(tmp_path_factory.mktemp("backbone"))


def _learnable_target(texts):
    """High for captions with the word 'a' (a pattern a tiny encoder can pick up), low otherwise."""
    return np.array([0.9 if " a " in f" {t.lower()} " else 0.1 for t in texts])


def _config(backbone, **overrides):
    values = dict(
        backbone=str(backbone),
        batch_size=16,
        per_device_batch_size=16,
        learning_rate=3e-3,
        epochs=5,
        eval_fraction=0.1,
        logging_steps=100,
    )
    return DistillConfig(**{**values, **overrides})


def test_student_learns_a_learnable_target_and_loads_everywhere(backbone, tmp_path):
    texts = training_corpus()
    target = _learnable_target(texts)
    before = np.mean((predict(backbone, texts) - target) ** 2)
    metrics = distill_student(texts, target, tmp_path / "student", _config(backbone), {"teachers": "synthetic"})
    after = np.mean((predict(tmp_path / "student", texts) - target) ** 2)
    assert after < 0.5 * before, (before, after)
    assert metrics["pearson"] > 0.3 and "spearman" in metrics
    assert type(AutoModel.from_pretrained(tmp_path / "student")) is ICCForConcreteness
    scores = load_scorer(tmp_path / "student", dtype="float32").score(["a dog on a beach"])
    assert scores.shape == (1,) and 0.0 <= scores[0] <= 1.0
    provenance = read_provenance(tmp_path / "student")
    assert provenance["n_captions"] == len(texts) and provenance["teachers"] == "synthetic"
    assert provenance["n_held_out"] == round(0.1 * len(texts))
    assert provenance["training"]["learning_rate"] == 3e-3
    assert not list((tmp_path / "student").glob("checkpoint-*"))


def test_two_stage_distils_stage_students_then_the_combined_target(backbone, tmp_path):
    texts = training_corpus()[:80]
    target = _learnable_target(texts)
    combiner = ScoreCombiner(threshold=1.0).fit(target, 1 - target, (target > 0.5).astype(float) + 0)
    config = _config(backbone, epochs=1)
    metrics = distill_two_stage(texts, 1 - target, target, combiner, tmp_path / "final", tmp_path / "stages", config)
    assert set(metrics) == {"sba_student", "vba_student", "student"}
    for name in ("sba_student", "vba_student"):
        assert read_provenance(tmp_path / "stages" / name)["target_column"] == f"{name[:3]}_score"
    assert "two_stage" in read_provenance(tmp_path / "final")


def test_bad_targets_are_refused(backbone, tmp_path):
    with pytest.raises(ValueError, match="NaN"):
        distill_student(["a", "b"], np.array([0.1, np.nan]), tmp_path, _config(backbone))
    with pytest.raises(ValueError, match="length"):
        distill_student(["a", "b"], np.array([0.1]), tmp_path, _config(backbone))


def test_held_out_split_is_seeded_and_disjoint():
    train, held_out = split_indices(100, 0.05, seed=3)
    assert len(held_out) == 5 and not set(train) & set(held_out) and len(train) + len(held_out) == 100
    assert (split_indices(100, 0.05, seed=3)[1] == held_out).all()
