"""The thin entry points in training_scripts/: arguments reach the library, mistakes give clear errors."""

import csv
import dataclasses
import importlib.util
import sys
from pathlib import Path

import pytest

from modeling_icc import load_scorer
from modeling_icc.teachers import SBAPipeline
from modeling_icc.testing import save_tiny_student, training_corpus
from modeling_icc.training.arguments import run_script
from modeling_icc.training.distillation import PipelineConfig
from modeling_icc.utils.errors import UserInputError

SCRIPTS = Path(__file__).resolve().parents[1] / "training_scripts"
pytestmark = pytest.mark.usefixtures("single_thread")


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"training_scripts_{name}", SCRIPTS / f"{name}.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # dataclasses look their module up
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
            "--output_dir",
            str(tmp_path / "student"),
            "--per_device_train_batch_size",
            "8",
            "--max_steps",
            "3",
        ]
    )
    assert load_scorer(tmp_path / "student").score(["a red car"]).shape == (1,)


def test_train_sba_script_trains_a_loadable_projector_offline(tmp_path):
    _script("train_sba").main(["--tiny", "--output-dir", str(tmp_path), "--max-steps", "2", "--max-samples", "16"])
    sba = SBAPipeline.from_pretrained(tmp_path)
    assert sba.model.config.lm_name_or_path == str((tmp_path / "components" / "llama").resolve())
    assert len(sba.reconstruct(["a dog"], max_new_tokens=4)[0]) == 5


def test_options_from_before_training_arguments_still_work_or_say_what_replaced_them():
    old = ["--lr", "0.5", "--epochs", "3", "--per-device-batch-size", "4", "--warmup-ratio", "0.1", "--no-bf16"]
    with pytest.warns(FutureWarning, match="--lr is now --learning_rate"):
        _, _, training, _ = _script("train_sba").parse_args(old)
    assert (training.learning_rate, training.num_train_epochs, training.per_device_train_batch_size) == (0.5, 3, 4)
    assert (training.warmup_steps, training.bf16) == (0.1, False)
    with pytest.raises(UserInputError, match="--per_device_train_batch_size x --gradient_accumulation_steps"):
        _script("distill").parse_args(["--batch-size", "128"])
    _, _, training = _script("distill").parse_args(["--bf16", "false", "--seed", "3"])
    assert (training.bf16, training.seed) == (False, 3)


#: Script options whose None means the config's choice: batch_size (per teacher), output_dir (the config
#: file's), save_images (off; a directory on the command line, a flag in the config).
NONE_MEANS_THE_CONFIGS = {"batch_size", "output_dir", "save_images"}


def test_command_line_defaults_are_the_config_defaults():
    """Every script option that mirrors a pipeline-config field has that field's default."""
    config = PipelineConfig()
    mirrors = {
        "train_sba": ([], [config.captions, config.sba, config.sba.training]),
        "distill": ([], [config.distill, config.distill.training]),
        "score_teachers": (["--out-dir", "x"], [config, config.captions, config.vba]),
        "run_pipeline": ([], [config]),
    }
    compared = set()
    for script, (argv, configs) in mirrors.items():
        for parsed in _script(script).parse_args(argv):
            for option in dataclasses.fields(parsed):
                value = getattr(parsed, option.name)
                for mirrored in configs:
                    if option.name not in {f.name for f in dataclasses.fields(mirrored)}:
                        continue
                    expected = getattr(mirrored, option.name)
                    if dataclasses.is_dataclass(expected):  # a section of the config, e.g. --sba DIR vs sba:
                        continue
                    ok = value == expected or (value is None and option.name in NONE_MEANS_THE_CONFIGS)
                    assert ok, (script, option.name, value, expected)
                    compared.add((script, option.name))
    assert {("score_teachers", "seed"), ("score_teachers", "shard_size"), ("distill", "two_stage")} <= compared
    assert {("train_sba", "learning_rate"), ("train_sba", "lm"), ("score_teachers", "guidance_scale")} <= compared


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
    with pytest.raises(UserInputError, match="exactly one of --dataset DIR or --scores TABLE"):
        _script("distill").main(["--output-dir", str(tmp_path)])


def test_a_script_run_from_the_shell_ends_bad_input_with_one_line(monkeypatch):
    monkeypatch.setattr("sys.argv", ["distill.py", "--output-dir", "unused"])
    script = _script("distill")
    with pytest.raises(SystemExit) as ended:
        run_script(script.main, "distill")
    assert ended.value.code == "distill: error: pass exactly one of --dataset DIR or --scores TABLE"
