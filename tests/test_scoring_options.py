"""Every scoring option defined once (``ScoringOptions``, checked as it is built, named as Python arguments or as
the ``icc`` flags), and one decision of where a model runs (``resolve_execution``) that the loader, the process
cache, sharded jobs and the ``evaluate`` module share."""

import pickle
import subprocess
import sys

import pytest

from modeling_icc import ScoringOptions, load_scorer
from modeling_icc.cli.main import main
from modeling_icc.curation import job_spec
from modeling_icc.hub import measurement
from modeling_icc.scoring import hardware
from modeling_icc.scoring.execution import (
    LITE_RUNTIMES,
    MINI_RUNTIMES,
    STUDENT_RUNTIMES,
    Execution,
    resolve_execution,
)
from modeling_icc.scoring.load import clear_scorer_cache, planned_execution
from modeling_icc.utils.errors import OptionError, UserInputError


@pytest.fixture(autouse=True)
def fresh_cache():
    clear_scorer_cache()
    yield
    clear_scorer_cache()


def test_the_job_spec_and_the_package_name_the_one_definition():
    import modeling_icc

    assert job_spec.ScoringOptions is ScoringOptions is modeling_icc.ScoringOptions
    assert ScoringOptions.__module__ == "modeling_icc.scoring.options"


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"batch_size": 0}, OptionError, "batch_size must be positive, got 0"),
        ({"batch_size": 2.5}, TypeError, "batch_size must be a whole number or None, got float 2.5"),
        ({"tokenize_workers": -2}, OptionError, "tokenize_workers must be 0 or more, got -2"),
        ({"compile": "true"}, TypeError, "compile must be True or False"),
        ({"device": 1}, TypeError, "device must be a device name"),
        ({"dtype": 16}, TypeError, "dtype must be a dtype name"),
        ({"model": 7}, TypeError, "model must be a model name, Hub id or local path"),
        ({"model": ""}, OptionError, "model is empty"),
        ({"fallback": 0.5}, TypeError, "fallback must be a model name"),
    ],
)
def test_options_are_checked_as_they_are_built(options, error, message):
    with pytest.raises(error, match=message):
        ScoringOptions(**options)


def test_a_ready_scorer_and_torch_objects_are_options_too():
    import torch

    scorer = load_scorer("lite")
    assert ScoringOptions(scorer, device=torch.device("cpu"), dtype=torch.float32).model is scorer


def test_option_errors_name_python_arguments_or_the_commands_flags():
    with pytest.raises(OptionError) as raised:
        ScoringOptions("lite", dtype="bf16", batch_size=8).check()
    error = raised.value
    assert str(error) == (
        "dtype, batch_size do not apply to lite (pure Python, on the CPU, no batches): drop them, or use model mini"
    )
    assert error.naming(lambda name: f"--{name.replace('_', '-')}") == (
        "--dtype, --batch-size do not apply to lite (pure Python, on the CPU, no batches): drop them, "
        "or use --model mini"
    )
    assert isinstance(error, UserInputError) and isinstance(error, ValueError)
    copy = pickle.loads(pickle.dumps(error))  # as a worker process sends it
    assert type(copy) is OptionError and str(copy) == str(error) and copy.options == ("dtype", "batch_size")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--batch-size", "0"], "icc: error: --batch-size must be positive, got 0\n"),
        (["--tokenize-workers", "-1"], "icc: error: --tokenize-workers must be 0 or more, got -1\n"),
        (["--model", "lite", "--device", "cuda"], "icc: error: --device does not apply to lite"),
        (["--model", "minii"], "did you mean 'mini'?\n"),
    ],
)
def test_the_command_names_its_flags_in_one_line(flags, message, capsys):
    assert main(["score", *flags, "a dog"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


# -- the one decision: device, dtype and runtime --------------------------------------


def _cpu_only(monkeypatch, native_bf16: bool) -> None:
    """This machine seen as a CPU with or without native bf16, and no GPU, whatever it has."""
    monkeypatch.delenv("ICC_MINI_RUNTIME", raising=False)
    monkeypatch.delenv(hardware.FORCE_FP32_ENV, raising=False)
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: native_bf16)
    monkeypatch.setattr(hardware, "gpu_may_be_present", lambda: False)
    monkeypatch.setattr(hardware, "default_device_type", lambda: "cpu")


@pytest.fixture
def avx2_cpu(monkeypatch):
    """A CPU without native bf16 and no GPU."""
    _cpu_only(monkeypatch, native_bf16=False)


@pytest.fixture
def amx_cpu(monkeypatch):
    """A CPU with native bf16 (AMX) and no GPU."""
    _cpu_only(monkeypatch, native_bf16=True)


def test_lite_runs_in_python_whatever_is_asked():
    assert resolve_execution(LITE_RUNTIMES, "cuda:3", "int8") == Execution(None, None, "python")


def test_on_a_cpu_without_native_bf16_mini_runs_on_onnx_runtime_and_students_in_fp32(avx2_cpu):
    assert resolve_execution(MINI_RUNTIMES) == Execution("cpu", "float32", "onnxruntime")
    assert resolve_execution(MINI_RUNTIMES, "cpu", "fp32") == Execution("cpu", "float32", "onnxruntime")
    assert resolve_execution(MINI_RUNTIMES, "cpu", "bf16") == Execution("cpu", "bfloat16", "torch")
    assert resolve_execution(STUDENT_RUNTIMES) == Execution("cpu", "float32", "torch")


def test_on_a_cpu_with_native_bf16_every_neural_model_runs_bf16_on_torch(amx_cpu, monkeypatch):
    assert resolve_execution(MINI_RUNTIMES) == Execution("cpu", "bfloat16", "torch")
    assert resolve_execution(MINI_RUNTIMES, dtype="float32") == Execution("cpu", "float32", "torch")
    assert resolve_execution(STUDENT_RUNTIMES, None, "auto") == Execution("cpu", "bfloat16", "torch")
    monkeypatch.setenv(hardware.FORCE_FP32_ENV, "1")
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: not hardware.fp32_forced())
    assert resolve_execution(STUDENT_RUNTIMES) == Execution("cpu", "float32", "torch")
    assert resolve_execution(MINI_RUNTIMES).runtime == "onnxruntime"


def test_the_default_dtype_of_each_device_type(avx2_cpu, monkeypatch):
    assert [hardware.default_dtype(kind) for kind in ("cpu", "mps")] == ["float32", "float16"]
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: True)
    assert hardware.default_dtype("cpu") == "bfloat16"
    monkeypatch.setenv(hardware.FORCE_FP32_ENV, "1")
    assert {hardware.default_dtype(kind) for kind in ("cpu", "mps", "cuda")} == {"float32"}


def test_an_unknown_dtype_is_refused_before_a_runtime_is_chosen(avx2_cpu):
    for runtimes in (MINI_RUNTIMES, STUDENT_RUNTIMES):
        with pytest.raises(UserInputError, match=r"unknown dtype 'int8'; use one of \['bf16', 'bfloat16'"):
            resolve_execution(runtimes, "cpu", "int8")


@pytest.mark.parametrize("machine", ["avx2_cpu", "amx_cpu"])
def test_the_loader_the_cache_and_a_job_agree_on_where_mini_runs(machine, request):
    request.getfixturevalue(machine)
    planned = ScoringOptions().execution()
    assert planned == planned_execution("mini") == planned_execution(None)
    scorer = load_scorer("mini", cache=True)
    assert (str(scorer.device), str(scorer.dtype).removeprefix("torch.")) == (planned.device, planned.dtype)
    assert type(scorer).__name__ == ("MiniOnnxScorer" if planned.runtime == "onnxruntime" else "MiniScorer")
    assert load_scorer("mini", planned.device, planned.dtype, cache=True) is scorer  # None resolved: one entry


def test_the_metric_scores_in_fp32_on_a_cpu_and_leaves_other_devices_and_lite_alone(amx_cpu, monkeypatch):
    assert measurement.metric_options(ScoringOptions("mini")) == ScoringOptions("mini", dtype="float32")
    assert measurement.metric_options(ScoringOptions("lite")) == ScoringOptions("lite")
    assert measurement.metric_options(ScoringOptions("mini", dtype="bf16")).dtype == "bf16"  # asked: honoured
    monkeypatch.setattr(ScoringOptions, "execution", lambda options: Execution("cuda", "bfloat16", "torch"))
    assert measurement.metric_options(ScoringOptions("mini")).dtype is None  # the library's default there


def test_planning_lite_or_mini_on_onnx_runtime_imports_no_torch():
    code = (
        "import sys\n"
        "from modeling_icc.scoring import hardware\n"
        "hardware.cpu_has_native_bf16 = lambda: False\n"
        "hardware.gpu_may_be_present = lambda: False\n"
        "from modeling_icc.scoring.load import planned_execution\n"
        "print(planned_execution('lite'), planned_execution('mini'))\n"
        "print('torch' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    *_, planned, torch_imported = result.stdout.splitlines()
    assert "runtime='python'" in planned and "runtime='onnxruntime'" in planned
    assert torch_imported == "False"
