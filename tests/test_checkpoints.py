"""Loading students strictly: incomplete weights, bad paths and pickle-only folders are clear errors."""

import pytest
import torch
from checkpoint_edits import copy_checkpoint
from transformers import RobertaForSequenceClassification

from modeling_icc import ModelNotAvailableError, load_scorer
from modeling_icc.cli.main import main
from modeling_icc.scoring.load import CheckpointError
from modeling_icc.utils.checkpoints import require_complete


def every_other_tensor(tensors):
    return {name: tensor for index, (name, tensor) in enumerate(sorted(tensors.items())) if index % 2}


@pytest.mark.parametrize("checkpoint", ["tiny_student_dir", "published_format_dir"])
def test_a_checkpoint_missing_half_its_weights_is_refused(checkpoint, request, tmp_path):
    half = copy_checkpoint(request.getfixturevalue(checkpoint), tmp_path / "half", every_other_tensor)
    with pytest.raises(CheckpointError, match=r"does not match the model: 21 weights missing \(classifier\.dense"):
        load_scorer(half, device="cpu")


def test_unexpected_and_wrongly_shaped_weights_are_refused(tiny_student_dir, tmp_path):
    extra = copy_checkpoint(
        tiny_student_dir, tmp_path / "extra", lambda tensors: {**tensors, "classifier.extra.weight": torch.zeros(2)}
    )
    with pytest.raises(CheckpointError, match=r"1 unexpected weights \(classifier\.extra\.weight\)"):
        load_scorer(extra, device="cpu")

    def reshape_head(tensors):
        return {**tensors, "classifier.out_proj.weight": torch.zeros(1, 7)}

    reshaped = copy_checkpoint(tiny_student_dir, tmp_path / "reshaped", reshape_head)
    with pytest.raises(CheckpointError, match=r"classifier\.out_proj\.weight"):
        load_scorer(reshaped, device="cpu")


def test_allowed_prefixes_excuse_only_the_keys_they_name():
    info = {
        "missing_keys": ["classifier.dense.weight", "roberta.encoder.layer.0.output.dense.bias"],
        "unexpected_keys": ["lm_head.bias", "lm_headless.bias"],
    }
    allowed = dict(allowed_missing=("classifier.",), allowed_unexpected=("lm_head.",))
    with pytest.raises(
        CheckpointError,
        match=r"1 weights missing \(roberta\.encoder\.layer\.0\.output\.dense\.bias\); "
        r"1 unexpected weights \(lm_headless\.bias\)\.",
    ):
        require_complete("backbone", info, **allowed)
    require_complete(
        "backbone", {"missing_keys": ["classifier.dense.weight"], "unexpected_keys": ["lm_head.bias"]}, **allowed
    )


def test_the_cli_refuses_an_incomplete_checkpoint_in_one_line(tiny_student_dir, tmp_path, capsys):
    half = copy_checkpoint(tiny_student_dir, tmp_path / "half", every_other_tensor)
    assert main(["score", "--model", str(half), "a dog on a beach"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no score printed
    error_lines = [line for line in captured.err.splitlines() if line.startswith("icc: error:")]
    assert len(error_lines) == 1 and "21 weights missing" in error_lines[0]
    assert "LOAD REPORT" not in captured.err and "Traceback" not in captured.err


def test_weights_transformers_itself_ignores_still_load(published_format_dir, tmp_path):
    """Old RoBERTa checkpoints carry a ``position_ids`` buffer; it is not a weight, so it is no error."""
    legacy = copy_checkpoint(
        published_format_dir,
        tmp_path / "legacy",
        lambda tensors: {**tensors, "roberta.embeddings.position_ids": torch.arange(130)[None]},
    )
    reference = load_scorer(published_format_dir, device="cpu", dtype="float32").score(["a dog"], raw=True)
    assert load_scorer(legacy, device="cpu", dtype="float32").score(["a dog"], raw=True) == pytest.approx(reference)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("./no-such-model", r"the local path .*no-such-model does not exist"),
        ("/no/such/model/dir", "the local path /no/such/model/dir does not exist"),
        ("~/no-such-model-dir", "does not exist"),
        ("{file}", "is a file, not a model directory"),
        ("{empty}", "has no config.json"),
    ],
)
def test_a_local_path_that_is_no_model_says_what_is_wrong_and_suggests_no_download(
    path, message, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "weights.safetensors").write_bytes(b"")
    (tmp_path / "empty").mkdir()
    name = path.format(file=tmp_path / "weights.safetensors", empty=tmp_path / "empty")
    with pytest.raises(ModelNotAvailableError, match=message) as info:
        load_scorer(name)
    assert "hf download" not in str(info.value) and "Repo id" not in str(info.value)


def test_a_hub_id_that_is_not_cached_suggests_the_download():
    with pytest.raises(ModelNotAvailableError, match="hf download some-org/some-model"):
        load_scorer("some-org/some-model")


def test_a_pickle_only_checkpoint_is_refused_with_why_and_how_to_convert(published_format_dir, tmp_path):
    folder = copy_checkpoint(published_format_dir, tmp_path / "pickle")
    state = RobertaForSequenceClassification.from_pretrained(folder).state_dict()
    (folder / "model.safetensors").unlink()
    torch.save(state, folder / "pytorch_model.bin")
    with pytest.raises(CheckpointError) as info:
        load_scorer(folder)
    message = str(info.value)
    assert "pytorch_model.bin" in message and "unpickling a file can run arbitrary code" in message
    assert "save_pretrained" in message and "hf download" not in message

    (folder / "pytorch_model.bin").unlink()
    with pytest.raises(CheckpointError, match=r"holds no model\.safetensors"):
        load_scorer(folder)
