"""The thin entry points in training_scripts/: arguments reach the library, mistakes give clear errors."""

import csv
import importlib.util
from pathlib import Path

import pytest

from modeling_icc import load_scorer
from modeling_icc.testing import save_tiny_student, training_corpus
from modeling_icc.utils.errors import UserInputError

SCRIPTS = Path(__file__).resolve().parents[1] / "training_scripts"
pytestmark = pytest.mark.usefixtures("single_thread")


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_distill_script_trains_a_loadable_student_from_a_table(tmp_path):
    backbone = save_tiny_student(tmp_path / "backbone")
    with (tmp_path / "scores.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "icc"])
        for caption in training_corpus()[:40]:
            writer.writerow([caption, 0.8 if "a" in caption.split() else 0.2])
        writer.writerow(["", 0.5])  # a blank caption is skipped, not trained on
    _script("distill").main(
        [
            "--scores",
            str(tmp_path / "scores.csv"),
            "--caption-column",
            "text",
            "--target-column",
            "icc",
            "--backbone",
            str(backbone),
            "--output-dir",
            str(tmp_path / "student"),
            "--batch-size",
            "8",
            "--per-device-batch-size",
            "8",
            "--max-steps",
            "3",
        ]
    )
    assert load_scorer(tmp_path / "student").score(["a red car"]).shape == (1,)


def test_scripts_explain_missing_inputs(tmp_path):
    with pytest.raises(UserInputError, match="exactly one of --config CONFIG or --tiny"):
        _script("run_pipeline").main([])
    (tmp_path / "captions.txt").write_text("a dog on a beach\n", encoding="utf-8")
    with pytest.raises(UserInputError, match="--sba DIR"):
        _script("score_teachers").main(
            ["--teacher", "sba", "--captions", str(tmp_path / "captions.txt"), "--out-dir", str(tmp_path / "out")]
        )
    with pytest.raises(UserInputError, match="--captions is required"):
        _script("train_sba").main(["--output-dir", str(tmp_path)])
