"""mini on ONNX Runtime: the CPU runtime where the encoder runs in fp32 (issue 37).

What users rely on: the same scores as the torch runtime (within float32 rounding, no verdict flips), a
caption's score independent of its batch, no torch import when scoring, and a cached graph that is never
run unless its bytes check out.
"""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch

from modeling_icc import load_scorer
from modeling_icc.cli.main import main
from modeling_icc.models.mini import onnx_graph
from modeling_icc.models.mini.files import file_sha256, read_heads_payload, recorded_base_sha, shipped_heads_path
from modeling_icc.models.mini.onnx_graph import RUNTIME_ENV
from modeling_icc.scoring import hardware
from modeling_icc.scoring.execution import MINI_RUNTIMES, Execution, resolve_execution
from modeling_icc.scoring.mini import MiniScorer
from modeling_icc.scoring.mini_onnx import MiniOnnxScorer
from modeling_icc.utils.errors import CheckpointError, UserInputError
from modeling_icc.utils.shipped_data import cc3m_distinct_captions

#: Largest score difference from the torch runtime in fp32 accepted (issue 37 asks for 1e-4; 2,000 CC3M
#: captions measured 9.2e-07, benchmarks/speed/results/mini_runtimes.json).
TORCH_FP32_ATOL = 1e-5


@pytest.fixture(scope="module")
def onnx_mini() -> MiniOnnxScorer:
    return MiniOnnxScorer(progress=False)


@pytest.fixture(scope="module")
def torch_mini() -> MiniScorer:
    return MiniScorer(dtype="float32", progress=False)


@pytest.fixture(scope="module")
def captions() -> list[str]:
    distinct = list(cc3m_distinct_captions())[:600]
    # Captions longer than one window (read in several windows, their logits averaged) and web noise.
    joined = [" ".join(distinct[start : start + 30]) for start in range(0, 300, 30)]
    return [*distinct, *joined, "#sunset #beach @friend http://x.co/a 😀 a dog", "A DOG ON A BEACH!!!"]


def test_onnx_runtime_scores_as_the_torch_runtime(onnx_mini, torch_mini, captions):
    onnx_scores, torch_scores = onnx_mini.score(captions), torch_mini.score(captions)
    np.testing.assert_allclose(onnx_scores, torch_scores, rtol=0, atol=TORCH_FP32_ATOL)
    assert ((onnx_scores > 0.5) == (torch_scores > 0.5)).all()


def test_a_caption_scores_the_same_alone_and_anywhere_in_a_batch(onnx_mini, captions):
    texts = captions[:150]
    together = onnx_mini.score(texts)
    alone = np.array([onnx_mini.score([text])[0] for text in texts[:40]])
    np.testing.assert_array_equal(alone, together[:40])
    order = np.random.default_rng(0).permutation(len(texts))
    np.testing.assert_array_equal(onnx_mini.score([texts[i] for i in order]), together[order])
    small = MiniOnnxScorer(batch_size=3, max_batch_tokens=64, progress=False)
    np.testing.assert_array_equal(small.score(texts), together)


def mini_runtime(device=None, dtype=None) -> str:
    return resolve_execution(MINI_RUNTIMES, device, dtype).runtime


def test_the_runtime_is_onnx_on_cpus_in_fp32_and_torch_where_bf16_or_asked(monkeypatch):
    monkeypatch.delenv(RUNTIME_ENV, raising=False)
    monkeypatch.setattr(hardware, "gpu_may_be_present", lambda: False)
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: False)
    assert mini_runtime() == mini_runtime("cpu", "float32") == "onnxruntime"
    assert resolve_execution(MINI_RUNTIMES) == Execution("cpu", "float32", "onnxruntime")
    assert mini_runtime("cpu", "bfloat16") == "torch"
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: True)
    assert mini_runtime() == mini_runtime(dtype="fp32") == "torch"  # AMX / AVX512-BF16
    monkeypatch.setenv(RUNTIME_ENV, "torch")
    assert mini_runtime("cpu", "float32") == "torch"
    assert isinstance(load_scorer("mini", "cpu", "float32"), MiniScorer)
    monkeypatch.setenv(RUNTIME_ENV, "onnxruntime")
    assert isinstance(load_scorer("mini"), MiniOnnxScorer)
    with pytest.raises(UserInputError, match="on a CPU in float32 only"):
        mini_runtime("cpu", "bfloat16")
    monkeypatch.setenv(RUNTIME_ENV, "tensorrt")
    with pytest.raises(UserInputError, match="'tensorrt' is not a runtime; use one of auto, torch, onnxruntime"):
        mini_runtime()


def test_scoring_on_onnx_runtime_imports_no_torch(onnx_mini):
    code = (
        "import sys\n"
        "from modeling_icc.scoring.mini_onnx import MiniOnnxScorer\n"
        "print(MiniOnnxScorer(progress=False).score(['a dog on a beach'])[0])\n"
        "print('torch' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    *_, score, torch_imported = result.stdout.split()
    assert torch_imported == "False"
    assert float(score) == pytest.approx(float(onnx_mini.score(["a dog on a beach"])[0]), abs=1e-6)


def test_explanations_and_the_model_come_from_torch_and_scores_then_follow_the_model(onnx_mini, torch_mini):
    explanation = MiniOnnxScorer(progress=False).explain("a dog on a red sofa")
    assert explanation.method == "mini-linear" and [word for word, _ in explanation][:2] == ["a", "dog"]
    assert explanation.score == pytest.approx(float(onnx_mini.score(["a dog on a red sofa"])[0]), abs=1e-6)
    scorer = MiniOnnxScorer(progress=False)
    before = scorer.score(["a dog on a red sofa"])[0]
    with torch.no_grad():
        scorer.model.caption_head.bias -= 3.0  # an edit in place: the ONNX graph knows nothing of it
    assert scorer.score(["a dog on a red sofa"])[0] < before - 0.1


@pytest.mark.parametrize("part", ["graph", "weights"])
def test_a_cached_graph_whose_bytes_changed_is_rebuilt_not_run(tmp_path, monkeypatch, caplog, part):
    built, _ = onnx_graph.mini_graph(shipped_heads_path())  # in the session's cache: one build for the suite
    session = onnx_graph.GraphFiles.named(built.parent, built.stem)
    files = onnx_graph.GraphFiles.named(tmp_path, built.stem)
    for name in ("graph", "weights", "record"):  # a cache folder of this test's own, holding that build
        shutil.copyfile(getattr(session, name), getattr(files, name))
    monkeypatch.setenv(onnx_graph.CACHE_DIR_ENV, str(tmp_path))
    graph, _ = onnx_graph.mini_graph(shipped_heads_path())
    assert graph == files.graph
    record = json.loads(files.record.read_text())["sha256"]
    assert record == {"graph": file_sha256(files.graph), "weights": file_sha256(files.weights)}
    expected = MiniOnnxScorer(progress=False).score(["a dog on a beach"])
    changed = getattr(files, part)
    data = bytearray(changed.read_bytes())
    data[-1000] ^= 0xFF  # one flipped byte: in the weights, or in the graph's last operators
    changed.write_bytes(bytes(data))
    with caplog.at_level("WARNING"):
        rebuilt, _ = onnx_graph.mini_graph(shipped_heads_path())
    assert caplog.text.count("does not match its recorded sha256") == 1  # said once (issue 48, item 15)
    assert rebuilt == graph and files.hashes() == record
    np.testing.assert_array_equal(MiniOnnxScorer(progress=False).score(["a dog on a beach"]), expected)


def test_heads_fitted_on_other_base_weights_are_refused(tmp_path):
    heads = tmp_path / "heads.safetensors"
    base_sha = recorded_base_sha(read_heads_payload(shipped_heads_path())).encode()
    shipped = shipped_heads_path().read_bytes()
    assert shipped.count(base_sha) == 1  # in the metadata: same length, so the header stays valid
    heads.write_bytes(shipped.replace(base_sha, b"0" * len(base_sha)))
    with pytest.raises(CheckpointError, match="fitted on other base weights"):
        MiniOnnxScorer(heads_path=heads, progress=False)


def test_concurrent_first_uses_build_the_graph_once(tmp_path):
    code = (
        "from modeling_icc.models.mini.onnx_graph import mini_graph\n"
        "from modeling_icc.models.mini.files import shipped_heads_path\n"
        "print(mini_graph(shipped_heads_path())[0])"
    )
    env = {**os.environ, onnx_graph.CACHE_DIR_ENV: str(tmp_path)}
    runs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)
    ]
    paths = {run.communicate(timeout=300)[0].strip() for run in runs}
    assert [run.returncode for run in runs] == [0, 0] and len(paths) == 1
    assert sorted(path.suffix for path in tmp_path.iterdir()) == [".json", ".lock", ".onnx", ".weights"]  # no partial


def test_a_cache_folder_that_cannot_be_written_gets_one_line(tmp_path, monkeypatch, capsys):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv(onnx_graph.CACHE_DIR_ENV, str(blocked / "icc"))
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: False)
    monkeypatch.setattr(hardware, "gpu_may_be_present", lambda: False)
    with pytest.raises(UserInputError) as raised:  # heads other than the shipped ones build a graph in the cache
        onnx_graph.mini_graph(shipped_heads_path())
    assert "cannot be built in" in str(raised.value) and "ICC_MINI_RUNTIME=torch" in str(raised.value)
    assert main(["score", "--model", "mini", "a dog"]) == 0  # the shipped mini runs the shipped graph: no cache
    assert "Traceback" not in capsys.readouterr().err


def fake_export(calls: list, capsys):
    """A stand-in for torch's export (the build's files are written as usual): records what stderr said
    before it started."""
    from pathlib import Path

    def save_graph(heads_path, base_path, graph, weights_name):
        calls.append(capsys.readouterr().err)
        Path(graph).write_bytes(b"graph")
        (Path(graph).parent / weights_name).write_bytes(b"weights")

    return save_graph


def test_a_first_build_says_so_once_as_it_starts_and_a_rebuild_once(tmp_path, monkeypatch, capsys):
    """Issue 48, items 19 and 15: one ``icc: notice:`` line before the build (what, where, how long, how to
    skip it), none when the graph is found, and one line for a rebuild (it was printed twice)."""
    from modeling_icc.cli.main import package_notices
    from modeling_icc.models.mini import onnx_export

    calls: list[str] = []
    monkeypatch.setattr(onnx_export, "save_graph", fake_export(calls, capsys))
    monkeypatch.setenv(onnx_graph.CACHE_DIR_ENV, str(tmp_path))
    with package_notices():
        graph, _ = onnx_graph.mini_graph(shipped_heads_path())
    [said] = calls
    assert said == (
        f"icc: notice: building mini's ONNX graph (its runtime on CPUs without native bf16), once per machine, "
        f"into {tmp_path}: {onnx_graph.BUILD_COST}; later runs load it at once ({RUNTIME_ENV}=torch skips it)\n"
    )
    with package_notices():
        onnx_graph.mini_graph(shipped_heads_path())
    assert capsys.readouterr().err == "" and len(calls) == 1  # found: built once, nothing said
    graph.write_bytes(b"GRAPH")
    with package_notices():
        onnx_graph.mini_graph(shipped_heads_path())
    assert calls[1].count("\n") == 1 and "does not match its recorded sha256: rebuilding it" in calls[1]
    assert capsys.readouterr().err == ""


def test_the_build_notice_reaches_python_callers_as_a_logging_warning(tmp_path, monkeypatch, caplog, capsys):
    from modeling_icc.models.mini import onnx_export

    monkeypatch.setattr(onnx_export, "save_graph", fake_export([], capsys))
    monkeypatch.setenv(onnx_graph.CACHE_DIR_ENV, str(tmp_path))
    with caplog.at_level("WARNING", logger=onnx_graph.__name__):
        onnx_graph.mini_graph(shipped_heads_path())
    assert [record.levelname for record in caplog.records] == ["WARNING"]
    assert caplog.records[0].getMessage().startswith("building mini's ONNX graph")
