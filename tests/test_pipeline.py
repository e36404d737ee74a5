"""The one-command pipeline: the tiny end-to-end run, its resumption, configs, and bring-your-own scores."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from datasets import load_dataset
from huggingface_hub import DatasetCard
from transformers import AutoModel

from modeling_icc import ICCForConcreteness, load_scorer
from modeling_icc.cli.main import main
from modeling_icc.testing.pipeline import with_tiny_components
from modeling_icc.training.distillation import (
    DATASET_SCHEMA,
    LengthStandardizer,
    PipelineConfig,
    ScoreCombiner,
    run_pipeline,
)
from modeling_icc.training.distillation.teacher_dataset import dataset_files
from modeling_icc.utils.errors import UserInputError
from modeling_icc.utils.shipped_data import dev_split

pytestmark = pytest.mark.usefixtures("single_thread")

CONFIGS = Path(__file__).resolve().parents[1] / "training_scripts" / "configs"


def _small_tiny_config(output_dir) -> PipelineConfig:
    """The --tiny config on 100 shipped captions with fewer steps, to keep the test short."""
    config = PipelineConfig.load(CONFIGS / "tiny.yaml", output_dir=str(output_dir))
    config.captions.max_samples = config.annotations.max_samples = 100
    config.shard_size = 32
    config.sba.training.max_steps = 4
    config.vba.num_inference_steps = 4
    config.standardize.min_bucket_size = 20
    config.distill.training.num_train_epochs = 2
    return with_tiny_components(config)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny_pipeline")
    return out, run_pipeline(_small_tiny_config(out), progress=False)


def test_tiny_run_writes_every_output(tiny_run):
    out, summary = tiny_run
    assert [record["status"] for record in summary["steps"].values()] == ["ran"] * 7
    rows = load_dataset("parquet", data_files=dataset_files(out / "dataset"), split="train")
    assert rows.num_rows == 100 and set(DATASET_SCHEMA.names) <= set(rows.column_names)
    assert rows["id"] == [row["sample_id"] for row in dev_split()[:100]]
    assert all(0.0 < t < 1.0 for t in rows["target"])
    assert json.loads(rows[0]["vba_teacher"])["versions"]["bert-score"]
    standardizers = json.loads((out / "standardizer.json").read_text())
    sba = LengthStandardizer.from_dict(standardizers["sba"])
    np.testing.assert_allclose(
        sba.transform(np.array(rows["sba_similarity"]), np.array(rows["n_words"])), rows["sba_score"]
    )
    combiner = ScoreCombiner.load(out / "combiner.json")
    np.testing.assert_allclose(
        combiner.combine(np.array(rows["vba_score"]), np.array(rows["sba_score"])), rows["target"]
    )
    assert type(AutoModel.from_pretrained(out / "student")) is ICCForConcreteness
    assert load_scorer(out / "student").score(["a dog"]).shape == (1,)
    provenance = json.loads((out / "student" / "icc_provenance.json").read_text())
    assert provenance["n_teacher_scored_captions"] == 100 and "vba_weight" in provenance["combination"]
    for plot in ("standardization.png", "combination.png"):
        assert (out / "plots" / plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    saved = json.loads((out / "summary.json").read_text())
    assert set(saved["steps"]) == {
        "sba_training",
        "teachers",
        "standardize",
        "combine",
        "dataset",
        "distill",
        "evaluate",
    }
    assert all(record["seconds"] >= 0 for record in saved["steps"].values())
    evaluation = saved["steps"]["evaluate"]["metrics"]
    assert evaluation["n"] == 303 and set(evaluation["student"]) == {"pearson", "spearman", "kendall"}


def test_the_dataset_folder_is_push_ready_with_a_card_read_from_the_runs_files(tiny_run, tmp_path, capsys):
    out, _ = tiny_run
    card = DatasetCard.load(out / "dataset" / "README.md")
    assert card.data.configs == [
        {"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*.parquet"}]}
    ]
    text = " ".join(card.text.split())
    rows = load_dataset("parquet", data_files=dataset_files(out / "dataset"), split="train")
    sba, vba = (json.loads(rows[0][f"{teacher}_teacher"]) for teacher in ("sba", "vba"))
    assert "## Schema (100 rows in 1 parquet file)" in text and "tiny random teachers" in text
    assert f"SBA: text_model `{sba['text_model']}`, lm `{sba['lm']}`," in text
    assert f"num_beams `{sba['num_beams']}`" in text and "stop_strings `\\n`" in text  # decoding settings
    assert f"VBA: text_to_image `{vba['text_to_image']}`, captioner `{vba['captioner']}`" in text
    assert f"guidance_scale `{vba['guidance_scale']}`" in text and f"prompt `{vba['prompt']}`" in text
    assert "Seeds: 0 (the run seed;" in text
    combiner = json.loads((out / "combiner.json").read_text())
    assert f"σ({combiner['vba_weight']:.4g}·vba_score {combiner['sba_weight']:+.4g}·sba_score" in text
    assert f"Fitted on {combiner['fit']['n']} human-annotated captions" in text
    buckets = json.loads((out / "standardizer.json").read_text())["sba"]["buckets"]
    first = buckets[0]
    assert f"| {first['lengths'][0]}-{first['lengths'][-1]} | {first['count']} | {first['logit_mean']:.4f} |" in text
    assert "`captions`: column `caption`, split `train`, max_samples `100` (no path:" in text
    assert main(["push", "--kind", "dataset", "--repo-id", "test-org/icc-teacher-scores", "--data",
                 str(out / "dataset"), "--dry-run", str(tmp_path / "push")]) == 0  # fmt: skip
    assert "config 'default' loads with datasets: train 100 rows" in capsys.readouterr().err


def test_every_run_rewrites_the_dataset_card(tiny_run):
    out, _ = tiny_run
    (out / "dataset" / "README.md").unlink()
    summary = run_pipeline(_small_tiny_config(out), progress=False)
    assert {record["status"] for record in summary["steps"].values()} == {"skipped (outputs exist)"}
    assert summary["outputs"]["teacher_score_dataset_card"] == str(out / "dataset" / "README.md")
    assert DatasetCard.load(out / "dataset" / "README.md").data.pretty_name == "ICC teacher scores"


def test_rerun_redoes_only_the_deleted_step_and_what_follows(tiny_run):
    out, first = tiny_run
    (out / "combiner.json").unlink()
    summary = run_pipeline(_small_tiny_config(out), progress=False)
    status = {name: record["status"] for name, record in summary["steps"].items()}
    assert [status[s] for s in ("sba_training", "teachers", "standardize")] == ["skipped (outputs exist)"] * 3
    assert [status[s] for s in ("combine", "dataset", "distill", "evaluate")] == ["ran"] * 4
    assert (out / "combiner.json").is_file()
    assert summary["steps"]["combine"]["metrics"] == first["steps"]["combine"]["metrics"]


def test_own_teacher_scores_skip_the_teachers(tmp_path):
    rng = np.random.default_rng(0)
    rows = dev_split()
    with (tmp_path / "scores.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "caption", "sba_similarity", "vba_similarity"])
        for row in rows:
            concrete = row["concreteness_annotation"] / 3
            writer.writerow([row["sample_id"], row["caption"], *np.clip(concrete + rng.normal(0, 0.2, 2), 0, 1)])
    config = _small_tiny_config(tmp_path / "run")
    config.teacher_scores = str(tmp_path / "scores.csv")
    config.captions.max_samples = config.annotations.max_samples = None
    summary = run_pipeline(config, progress=False)
    assert "sba_training" not in summary["steps"]
    assert not (tmp_path / "run" / "shards").exists()
    fit = summary["steps"]["combine"]["metrics"]
    assert fit["vba_weight"] > 0 and fit["sba_weight"] > 0 and fit["cv_roc_auc"] > 0.7


def test_paper_config_holds_the_defaults_which_are_the_papers():
    paper, defaults = PipelineConfig.load(CONFIGS / "paper.yaml"), PipelineConfig()
    for name in ("vba", "standardize", "combine"):
        assert getattr(paper, name) == getattr(defaults, name), name
    for part in ("sba", "distill"):
        for key, value in vars(getattr(paper, part)).items():
            if key != "training":
                assert value == getattr(getattr(defaults, part), key) or key in ("train", "train_captions"), key
    sba, student = paper.sba.training, paper.distill.training
    assert sba.per_device_train_batch_size * sba.gradient_accumulation_steps == 128
    assert (sba.learning_rate, sba.lr_scheduler_type, sba.warmup_steps, sba.num_train_epochs) == (
        2e-3,
        "cosine",
        0.03,
        2,
    )
    assert (student.per_device_train_batch_size, student.learning_rate, student.num_train_epochs) == (128, 1e-4, 2)
    assert (paper.vba.num_inference_steps, paper.vba.guidance_scale, paper.vba.size) == (20, 9.0, 768)
    assert (paper.vba.prompt, paper.vba.num_beams, paper.vba.num_return_sequences) == ("a photo of", 5, 5)


def test_unknown_settings_are_refused_with_their_path(tmp_path):
    (tmp_path / "bad.yaml").write_text("vba:\n  stepz: 3\n")
    with pytest.raises(UserInputError, match=r"bad.yaml.vba: unknown setting\(s\) stepz"):
        PipelineConfig.load(tmp_path / "bad.yaml")
    (tmp_path / "old.yaml").write_text("distill:\n  training:\n    epochs: 3\n")
    with pytest.raises(UserInputError, match=r"old.yaml.distill.training: unknown setting\(s\) epochs; known: the fi"):
        PipelineConfig.load(tmp_path / "old.yaml")
    (tmp_path / "bad_value.yaml").write_text("sba:\n  training:\n    lr_scheduler_type: sine\n")
    with pytest.raises(UserInputError, match=r"bad_value.yaml.sba.training: .*sine"):
        PipelineConfig.load(tmp_path / "bad_value.yaml")


def test_a_missing_sba_is_explained(tmp_path):
    config = _small_tiny_config(tmp_path)
    config.sba.train = False
    with pytest.raises(UserInputError, match="no trained SBA"):
        run_pipeline(config, progress=False)


def test_a_tiny_config_without_its_tiny_components_is_explained(tmp_path):
    config = PipelineConfig.load(CONFIGS / "tiny.yaml", output_dir=str(tmp_path))
    with pytest.raises(UserInputError, match=r"with_tiny_components\(config\)"):
        run_pipeline(config, progress=False)
    assert not (tmp_path / "steps").exists()
