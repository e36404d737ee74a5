"""`icc push --dry-run`: the exact upload folders, built and validated offline."""

import importlib
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from modeling_icc import load_scorer
from modeling_icc.cli.main import main
from modeling_icc.hub import upload
from modeling_icc.testing import write_teacher_score_dataset
from modeling_icc.utils.errors import UserInputError

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "publish"
CAPTIONS = ["a man with a white shirt", "a great method of quantifying concreteness", "dog"]


@pytest.fixture(scope="module")
def cards(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cards")
    teacher = write_teacher_score_dataset(out / "teacher")
    args = ["cards", "--namespace", "test-org", "--bench-results", str(FIXTURES / "bench_results.json"),
            "--provenance", str(FIXTURES / "provenance.json"), "--scorer", "runs/student",
            "--teacher-scores", str(teacher), "--output-dir", str(out)]  # fmt: skip
    assert main(args) == 0
    return out


def push(*args) -> int:
    return main(["push", *map(str, args)])


def test_model_folder_has_weights_code_tokenizer_card_and_loads(tiny_student_dir, cards, tmp_path, capsys):
    out = tmp_path / "model"
    card = cards / "icc-distilroberta" / "README.md"
    assert push("--kind", "model", "--repo-id", "test-org/icc-distilroberta", "--model", tiny_student_dir,
                "--card", card, "--dry-run", out) == 0  # fmt: skip
    names = {path.name for path in out.iterdir()}
    assert {"model.safetensors", "config.json", "configuration_icc.py", "modeling_icc.py", "README.md"} <= names
    assert {"tokenizer.json", "tokenizer_config.json"} <= names and not list(out.glob("*.bin"))
    auto_map = json.loads((out / "config.json").read_text())["auto_map"]
    assert auto_map == {
        "AutoConfig": "configuration_icc.ICCConfig",
        "AutoModel": "modeling_icc.ICCForConcreteness",
        "AutoModelForSequenceClassification": "modeling_icc.ICCForConcreteness",
    }
    np.testing.assert_allclose(
        load_scorer(out, device="cpu").score(CAPTIONS, raw=True),
        load_scorer(tiny_student_dir, device="cpu").score(CAPTIONS, raw=True),
        atol=1e-6,
    )
    captured = capsys.readouterr()
    assert "trust_remote_code=True) in a fresh process gives the same scores" in captured.err
    assert "nothing uploaded" in captured.out


def test_published_format_checkpoint_is_converted(published_format_dir, cards, tmp_path):
    out = tmp_path / "model"
    upload.build_model_folder(
        published_format_dir, cards / "icc-distilroberta" / "README.md", upload.prepare_output(out)
    )
    assert json.loads((out / "config.json").read_text())["model_type"] == "icc"
    assert upload.validate_card(out, "model").data.eval_results


def test_model_card_without_results_is_refused(tiny_student_dir, tmp_path):
    card = tmp_path / "card.md"
    card.write_text("---\nlicense: mit\nlanguage: en\n---\n# no results\n")
    # The student's folder (in our format already: what build_model_folder writes, tested above, with a fresh
    # process to check it) with the card: the card is checked first.
    folder = upload.prepare_output(tmp_path / "out")
    shutil.copytree(tiny_student_dir, folder, dirs_exist_ok=True)
    shutil.copyfile(card, folder / "README.md")
    with pytest.raises(UserInputError, match="lacks library_name, pipeline_tag, model-index"):
        upload.validate_folder(folder, "model")


def test_teacher_dataset_folder_loads_with_datasets(cards, tmp_path, capsys):
    out = tmp_path / "dataset"
    assert push("--kind", "dataset", "--repo-id", "test-org/icc-teacher-scores", "--data", cards / "teacher",
                "--card", cards / "icc-teacher-scores" / "README.md", "--dry-run", out) == 0  # fmt: skip
    assert [p.name for p in (out / "data").iterdir()] == ["train-00000-of-00001.parquet"]
    assert "config 'default' loads with datasets: train 40 rows" in capsys.readouterr().err


def test_benchmark_dataset_folder_holds_the_dev_split(cards, tmp_path, capsys):
    out = tmp_path / "bench"
    assert push("--kind", "dataset", "--repo-id", "test-org/icc-caption-concreteness", "--data", "benchmark",
                "--card", cards / "icc-caption-concreteness" / "README.md", "--dry-run", out) == 0  # fmt: skip
    assert "dev 303 rows" in capsys.readouterr().err


def test_dataset_card_pointing_at_missing_files_is_refused(cards, tmp_path):
    folder = upload.prepare_output(tmp_path / "out")
    (folder / "README.md").write_text((cards / "icc-teacher-scores" / "README.md").read_text())
    with pytest.raises(UserInputError, match="matches no file"):
        upload.validate_folder(folder, "dataset")


def test_space_folder_ships_the_app_and_our_code(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO_ROOT)
    out = tmp_path / "space"
    assert push("--kind", "space", "--repo-id", "test-org/icc-demo", "--dry-run", out) == 0
    assert {"app.py", "requirements.txt", "README.md", "modeling_icc"} == {p.name for p in out.iterdir()}
    assert (out / "modeling_icc" / "apps" / "gradio.py").is_file()
    assert (out / "modeling_icc" / "models" / "lite" / "data" / "lexicon.tsv.gz").is_file()
    assert not list(out.rglob("__pycache__")) and not (out / "modeling_icc" / "testing").exists()
    err = capsys.readouterr().err
    assert "requirements.txt complete" in err and "builds its gradio demo in a fresh process" in err


def test_space_whose_app_fails_to_build_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    folder = upload.build_space_folder(upload.prepare_output(tmp_path / "space"))
    (folder / "app.py").write_text("import modeling_icc.no_such_module\n")
    with pytest.raises(UserInputError, match=r"running app\.py .* failed: ModuleNotFoundError"):
        upload.validate_folder(folder, "space")


def test_metric_space_is_named_after_the_repo_and_loads_with_evaluate(tmp_path, capsys):
    out = tmp_path / "metric"
    assert push("--kind", "metric", "--repo-id", "test-org/icc", "--dry-run", out) == 0
    assert (out / "icc.py").is_file() and not (out / "icc_metric.py").exists()
    assert "evaluate.load('icc.py', 'lite') computes offline" in capsys.readouterr().err


@pytest.mark.parametrize("folder", ["hub_cards/space", "icc_metric"])
def test_committed_space_requirements_match_the_package(folder):
    path = REPO_ROOT / folder
    lines = [line for line in (path / "requirements.txt").read_text().splitlines() if line and line[0] != "#"]
    requirements = {Requirement(line).name.lower().replace("_", "-"): Requirement(line) for line in lines}
    assert set(upload.space_requirement_names()) == set(requirements)
    card = upload.validate_card(path, "metric" if folder == "icc_metric" else "space")
    assert requirements["gradio"].specifier.contains(Version(str(card.data.sdk_version)))


def test_refusals_are_one_line_errors(tmp_path, capsys, monkeypatch):
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "file").write_text("x")
    assert push("--kind", "metric", "--repo-id", "test-org/icc", "--dry-run", taken) == 2
    assert push("--kind", "metric", "--repo-id", "no-namespace", "--dry-run", tmp_path / "a") == 2
    assert push("--kind", "metric", "--repo-id", "test-org/icc") == 2  # HF_HUB_OFFLINE=1 in tests
    assert push("--kind", "model", "--repo-id", "test-org/m", "--dry-run", tmp_path / "b") == 2
    err = capsys.readouterr().err
    assert "is not empty" in err and "must be ORG/NAME" in err
    assert "HF_HUB_OFFLINE is set" in err and "needs --model FOLDER" in err


def test_upload_without_token_or_network_fails_before_building(monkeypatch, capsys):
    from modeling_icc.cli import push as push_command

    monkeypatch.setattr(push_command.hf_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(push_command, "get_token", lambda: None)
    assert push("--kind", "metric", "--repo-id", "test-org/icc") == 2
    monkeypatch.setattr(push_command, "hub_reachable", lambda: False)
    assert push("--kind", "metric", "--repo-id", "test-org/icc", "--token", "hf_x") == 2
    err = capsys.readouterr().err
    assert "no Hub token" in err and "cannot reach the Hub" in err


@pytest.mark.parametrize("kind", ["space", "metric"])
def test_push_of_a_space_without_gradio_names_the_extra(kind, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "gradio", None)
    assert push("--kind", kind, "--repo-id", "org/icc", "--dry-run", tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"icc push --kind {kind} needs gradio" in err and 'pip install "icc-concreteness[space]"' in err
    assert not (tmp_path / "out").exists()  # nothing built


def test_the_space_app_without_gradio_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "gradio", None)
    monkeypatch.delitem(sys.modules, "modeling_icc.apps.gradio", raising=False)
    with pytest.raises(ModuleNotFoundError, match=r'pip install "icc-concreteness\[space\]"'):
        importlib.import_module("modeling_icc.apps.gradio")
