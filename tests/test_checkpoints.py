"""Loading students strictly: incomplete weights, bad paths and pickle-only folders are clear errors, and so
are checkpoints that ask to run their own code, configs that claim another network than the weights hold
(refused before it is allocated) and weights that cannot score (NaN, Inf, integers)."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from checkpoint_edits import copy_checkpoint, with_config
from cli_run import icc_process
from transformers import RobertaForSequenceClassification

from modeling_icc import ModelNotAvailableError, load_scorer
from modeling_icc.cli.main import main
from modeling_icc.scoring.load import CheckpointError
from modeling_icc.utils.checkpoints import load_complete, require_complete


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


def one_line_error(result: subprocess.CompletedProcess, *words: str) -> str:
    """The command stopped with exit 2 and one ``icc: error:`` line holding ``words``, nothing on stdout."""
    assert result.returncode == 2, result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("icc: error:"), result.stderr
    assert all(word in lines[0] for word in words), lines[0]
    return lines[0]


# -- code shipped with a checkpoint never runs ---------------------------------------------------------


def with_evil_tokenizer(folder: Path, marker: Path) -> Path:
    """``folder`` whose tokenizer_config.json asks for ``tokenization_evil.py``, which writes ``marker`` on import."""
    (folder / "tokenization_evil.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n"
        "from transformers import RobertaTokenizerFast\n\n\nclass EvilTokenizer(RobertaTokenizerFast):\n    pass\n"
    )
    auto_map = {"AutoTokenizer": ["tokenization_evil.EvilTokenizer", None]}
    return with_config(folder, "tokenizer_config.json", tokenizer_class="EvilTokenizer", auto_map=auto_map)


def test_a_tokenizer_that_asks_to_run_its_code_is_refused_without_asking(tiny_student_dir, tmp_path):
    folder = with_evil_tokenizer(copy_checkpoint(tiny_student_dir, tmp_path / "evil"), tmp_path / "marker")
    result = icc_process("score", "--model", folder, "a dog", input="y\n")
    one_line_error(result, "tokenizer_config.json", "tokenization_evil.py")
    assert not (tmp_path / "marker").exists()
    assert "custom code" not in result.stdout + result.stderr


def test_a_cached_hub_model_that_asks_to_run_its_code_is_refused_too(tiny_student_dir, tmp_path):
    commit = "0" * 40
    repo = tmp_path / "hub" / "models--someone--student"
    snapshot = copy_checkpoint(tiny_student_dir, repo / "snapshots" / commit)
    with_evil_tokenizer(snapshot, tmp_path / "marker")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    result = icc_process("score", "--model", "someone/student", "a dog", input="y\n", env=env)
    one_line_error(result, "someone/student", "tokenizer_config.json", "tokenization_evil.py")
    assert not (tmp_path / "marker").exists()


def test_a_config_that_maps_other_classes_is_refused(tiny_student_dir, tmp_path):
    folder = copy_checkpoint(tiny_student_dir, tmp_path / "other")
    config = json.loads((folder / "config.json").read_text())
    with_config(folder, auto_map={**config["auto_map"], "AutoTokenizer": ["tokenization_evil.EvilTokenizer", None]})
    with pytest.raises(CheckpointError, match=r"config\.json maps AutoTokenizer to tokenization_evil\.py"):
        load_scorer(folder, device="cpu")
    with_config(folder, auto_map={**config["auto_map"], "AutoModel": "modeling_evil.Evil"})
    with pytest.raises(CheckpointError, match=r"config\.json maps AutoModel to modeling_evil\.py"):
        load_scorer(folder, device="cpu")


PACKAGE = Path(__file__).resolve().parents[1] / "modeling_icc"


def _auto_loaders(call: ast.Call) -> list[str]:
    """``X.from_pretrained`` called or passed by ``call`` where X is an Auto class, a tokenizer or a processor:
    the loaders that may import a checkpoint's code (concrete model and config classes never do)."""
    found = []
    for node in (call.func, *call.args):
        if isinstance(node, ast.Attribute) and node.attr == "from_pretrained" and isinstance(node.value, ast.Name):
            owner = node.value.id
            if owner.startswith("Auto") or owner.endswith(("Tokenizer", "Processor")):
                found.append(f"{owner}.from_pretrained")
    return found


def test_every_auto_class_load_in_the_package_says_no_remote_code():
    """Without ``trust_remote_code=False`` transformers asks on stdin whether to run a checkpoint's code.
    ``load_complete`` passes it itself, so loaders handed to it are exempt."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for call in (node for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Call)):
            through_load_complete = any(
                isinstance(node, ast.Name) and node.id == "load_complete" for node in (call.func, *call.args)
            )
            refused = any(
                keyword.arg == "trust_remote_code"
                and isinstance(keyword.value, ast.Constant)
                and keyword.value.value is False
                for keyword in call.keywords
            )
            if _auto_loaders(call) and not (through_load_complete or refused):
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{call.lineno}")
    assert not offenders, offenders


def test_load_complete_refuses_remote_code_for_transformers_only():
    seen = {}

    def loader(source, **kwargs):
        seen.update(kwargs)
        return object(), {}

    class FakeDiffusersModel:
        __module__ = "diffusers.models.fake"
        from_pretrained = classmethod(lambda cls, source, **kwargs: loader(source, **kwargs))

    load_complete(loader, "folder", trust_remote_code=True)
    assert seen["trust_remote_code"] is False
    seen.clear()
    load_complete(FakeDiffusersModel.from_pretrained, "folder")
    assert "trust_remote_code" not in seen


def test_our_own_auto_map_still_loads(tiny_student_dir):
    """A saved student maps the Auto classes to its copies of our code; with the package we load our classes."""
    assert "auto_map" in json.loads((tiny_student_dir / "config.json").read_text())
    assert (tiny_student_dir / "modeling_icc.py").is_file()
    assert load_scorer(tiny_student_dir, device="cpu").score(["a dog"])[0] >= 0


# -- the config is checked against the weights before anything is allocated ----------------------------

PEAK_PROBE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[3]), int(sys.argv[3])))
from modeling_icc import load_scorer
from modeling_icc.utils.errors import CheckpointError
load_scorer(sys.argv[1], device="cpu", dtype="float32")  # a normal load: the imports and their memory
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    load_scorer(sys.argv[2], device="cpu", dtype="float32")
except CheckpointError as error:
    print(error)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


def test_a_config_claiming_a_bigger_network_is_refused_before_it_is_allocated(tiny_student_dir, tmp_path):
    # 40 layers of 8192 (about 130 GB in fp32), consistent in itself; the weights hold 2 layers of 32.
    claimed = dict(num_hidden_layers=40, hidden_size=8192, num_attention_heads=64, intermediate_size=32768)
    folder = with_config(copy_checkpoint(tiny_student_dir, tmp_path / "big"), **claimed)
    address_space = 16 << 30  # a safety net: the claimed network cannot be allocated under it
    result = subprocess.run(
        [sys.executable, "-c", PEAK_PROBE, str(tiny_student_dir), str(folder), str(address_space)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    message, growth_kib = result.stdout.strip().splitlines()
    assert "does not match the model" in message and "weights missing" in message, message
    assert "weights of the wrong shape (" in message and "8192" in message, message
    assert int(growth_kib) < 64 * 1024  # ru_maxrss is in KiB on Linux: the peak stays a normal load's


LOAD_COMPLETE_PROBE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[3]), int(sys.argv[3])))
import transformers
from modeling_icc.utils.checkpoints import load_complete
from modeling_icc.utils.errors import CheckpointError
loader = getattr(transformers, sys.argv[4]).from_pretrained
load_complete(loader, sys.argv[1])  # a normal load: the imports and their memory
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    load_complete(loader, sys.argv[2])
except CheckpointError as error:
    print(error)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


@pytest.mark.parametrize("loader", ["AutoModelForSequenceClassification", "RobertaForSequenceClassification"])
def test_teacher_and_baseline_loads_refuse_a_bigger_claimed_network_before_allocating_it(
    published_format_dir, tmp_path, loader
):
    """load_complete (teachers, baselines, distillation's backbone) checks a local folder's config against its
    safetensors headers first, through an Auto class or a model class alike."""
    claimed = dict(num_hidden_layers=40, hidden_size=8192, num_attention_heads=64, intermediate_size=32768)
    folder = with_config(copy_checkpoint(published_format_dir, tmp_path / "big"), **claimed)
    arguments = [str(published_format_dir), str(folder), str(16 << 30), loader]
    result = subprocess.run(
        [sys.executable, "-c", LOAD_COMPLETE_PROBE, *arguments], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    message, growth_kib = result.stdout.strip().splitlines()
    assert "weights of the wrong shape (" in message and "8192" in message, message
    assert int(growth_kib) < 64 * 1024


def test_load_complete_says_in_one_line_when_a_config_builds_no_network(published_format_dir, tmp_path):
    folder = with_config(copy_checkpoint(published_format_dir, tmp_path / "typed"), hidden_size=32.5)
    with pytest.raises(CheckpointError, match="config"):
        load_complete(RobertaForSequenceClassification.from_pretrained, folder)


@pytest.mark.parametrize(
    ("field", "value"),
    [("hidden_size", 32.5), ("hidden_size", "32"), ("num_hidden_layers", 0), ("num_hidden_layers", -1)],
)
def test_a_config_field_that_cannot_build_the_model_is_one_line(tiny_student_dir, tmp_path, field, value):
    folder = with_config(copy_checkpoint(tiny_student_dir, tmp_path / "typed"), **{field: value})
    one_line_error(icc_process("score", "--model", folder, "a dog"), "config.json", field)


# -- weights that cannot score -------------------------------------------------------------------------


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_weights_are_refused(tiny_student_dir, tmp_path, value):
    def poison(tensors):
        weight = tensors["roberta.encoder.layer.1.output.dense.weight"].clone()
        weight[3, 5] = value
        return {**tensors, "roberta.encoder.layer.1.output.dense.weight": weight}

    folder = copy_checkpoint(tiny_student_dir, tmp_path / "poisoned", poison)
    with pytest.raises(CheckpointError, match=r"roberta\.encoder\.layer\.1\.output\.dense\.weight .*(NaN|Inf)"):
        load_scorer(folder, device="cpu")


@pytest.mark.parametrize(
    ("name", "dtype"),
    [("roberta.embeddings.word_embeddings.weight", torch.int8), ("classifier.dense.bias", torch.bool)],
)
def test_weights_that_are_not_floats_are_refused(tiny_student_dir, tmp_path, name, dtype):
    folder = copy_checkpoint(
        tiny_student_dir, tmp_path / "cast", lambda tensors: {**tensors, name: tensors[name].to(dtype)}
    )
    one_line_error(icc_process("score", "--model", folder, "a dog"), name, str(dtype).removeprefix("torch."))
