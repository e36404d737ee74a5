"""mini's shipped ONNX graph (issue 50): it scores bit for bit as the graph traced from torch, its stored scores
hold without torch, and an edited graph, heads file or base weights file is refused, never run.

``python tests/test_shipped_graph.py`` rewrites the stored scores, only when the heads, the graph
(``training_scripts/build_mini_graph.py``) or how captions are read change on purpose.
"""

import hashlib
import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from no_torch import NO_TORCH

from modeling_icc.models.mini import shipped_graph
from modeling_icc.models.mini.files import BASE_WEIGHTS_FILE, HEADS_FILE, base_model_path, shipped_heads_path
from modeling_icc.models.mini.shipped_graph import GRAPH_FILE, MANIFEST_FILE, TERMS_FILE, read_manifest, verified_graph
from modeling_icc.scoring.mini_onnx import MiniOnnxScorer
from modeling_icc.utils.errors import CheckpointError

STORED = Path(__file__).parent / "fixtures" / "mini_onnx_scores.json"


def stored() -> dict:
    return json.loads(STORED.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def shipped() -> MiniOnnxScorer:
    return MiniOnnxScorer()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_manifest_vouches_for_the_shipped_graphs_heads_and_base_weights():
    hashes = read_manifest()["sha256"]
    folder = shipped_graph.shipped_graph_folder()
    assert hashes["heads"] == sha256(shipped_heads_path())
    assert hashes["graph"] == sha256(folder / GRAPH_FILE)
    assert hashes["terms_graph"] == sha256(folder / TERMS_FILE)
    assert hashes["base_weights"] == sha256(base_model_path() / BASE_WEIGHTS_FILE)
    for name in (GRAPH_FILE, TERMS_FILE):
        assert (folder / name).stat().st_size < 200_000  # operators and heads only: no base weights inside


def test_the_shipped_graph_scores_bit_for_bit_as_the_graph_traced_from_torch(shipped):
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    traced = MiniOnnxScorer(shipped_heads_path(), base_model_path())  # the cache's graph, traced from torch
    captions = stored()["captions"]
    np.testing.assert_array_equal(shipped.score(captions), traced.score(captions))


def test_the_shipped_explanation_graph_explains_as_torch_does(shipped):
    pytest.importorskip("torch")
    from modeling_icc.scoring.mini import MiniScorer

    on_torch = MiniScorer(dtype="float32", progress=False)
    for text in ["I cant see this image it is too dark", "a man with a white shirt", "a dog on a beach " * 60]:
        ours, theirs = shipped.explain(text), on_torch.explain(text)
        assert [word for word, _ in ours] == [word for word, _ in theirs]
        np.testing.assert_allclose([c for _, c in ours], [c for _, c in theirs], rtol=0, atol=1e-5)
        assert ours.score == pytest.approx(float(shipped.score([text])[0]), abs=1e-6)
        assert sum(c for _, c in ours) + ours.bias == pytest.approx(ours.total, abs=1e-5)


def expected_scores(data: dict) -> np.ndarray:
    """The stored scores as mini gives them: the graph's, NaN for the captions in languages mini does not read."""
    from modeling_icc.scoring.languages import ENGLISH_ONLY, caption_language, reads

    scores = np.array(data["scores"], dtype=np.float32)
    scores[[not reads(caption_language(caption), ENGLISH_ONLY) for caption in data["captions"]]] = np.nan
    return scores


def test_the_shipped_graph_gives_the_stored_scores_exactly(shipped):
    data = stored()
    expected = expected_scores(data)
    assert 0 < np.isnan(expected).sum() < len(expected) // 4
    np.testing.assert_array_equal(shipped.score(data["captions"]), expected)


def test_the_stored_scores_hold_in_a_process_without_torch():
    code = (
        NO_TORCH
        + "import numpy as np\n"
        + inspect.getsource(expected_scores)
        + (
            "import json, sys\n"
            "from modeling_icc import load_scorer\n"
            f"data = json.loads(open({str(STORED)!r}).read())\n"
            "scores = load_scorer('mini').score(data['captions'])\n"
            "np.testing.assert_array_equal(scores, expected_scores(data))\n"
            "assert 'torch' not in sys.modules and 'transformers' not in sys.modules\n"
            "print('same')\n"
        )
    )
    env = {key: value for key, value in os.environ.items() if key != "ICC_MINI_RUNTIME"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "same"


def _copies(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the shipped folder (graph, manifest, heads) and of the base weights, to edit."""
    folder, base = tmp_path / "data", tmp_path / "base"
    shutil.copytree(shipped_graph.shipped_graph_folder(), folder)
    base.mkdir()
    shutil.copy(base_model_path() / BASE_WEIGHTS_FILE, base / BASE_WEIGHTS_FILE)
    return folder, base


def _flip_one_byte(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def test_unedited_copies_verify(tmp_path):
    folder, base = _copies(tmp_path)
    verified = verified_graph(base, folder)
    assert sorted(verified.initializers) == read_manifest(folder)["base_keys"]


@pytest.mark.parametrize(
    ("edit", "what"),
    [
        ("graph", "mini's ONNX graph"),
        ("terms", "mini's ONNX explanation graph"),
        ("weights", "mini's base weights"),
        ("heads", "mini's heads file"),
    ],
)
def test_an_edited_graph_weights_or_heads_file_is_refused_in_one_line(tmp_path, edit, what):
    folder, base = _copies(tmp_path)
    target = {
        "graph": folder / GRAPH_FILE,
        "terms": folder / TERMS_FILE,
        "weights": base / BASE_WEIGHTS_FILE,
        "heads": folder / HEADS_FILE,
    }[edit]
    _flip_one_byte(target, target.stat().st_size - 7)  # inside the data, past any header
    with pytest.raises(CheckpointError) as raised:
        verified_graph(base, folder)
    message = str(raised.value)
    assert message.startswith(f"{what} {target} does not match the sha256 the package ships")
    assert "never run" in message and "pip install --force-reinstall --no-deps" in message
    assert "\n" not in message


def test_a_manifest_without_a_hash_is_refused(tmp_path):
    folder, base = _copies(tmp_path)
    manifest = json.loads((folder / MANIFEST_FILE).read_text())
    del manifest["sha256"]["base_weights"]
    (folder / MANIFEST_FILE).write_text(json.dumps(manifest))
    with pytest.raises(CheckpointError, match=r"mini's graph manifest .* is missing or unreadable"):
        verified_graph(base, folder)


def test_the_scorer_refuses_edited_base_weights_and_scores_nothing(tmp_path, monkeypatch):
    _, base = _copies(tmp_path)
    for name in os.listdir(base_model_path()):  # the tokenizer and configs beside the edited weights
        if name != BASE_WEIGHTS_FILE and (base_model_path() / name).is_file():
            shutil.copy(base_model_path() / name, base / name)
    _flip_one_byte(base / BASE_WEIGHTS_FILE, 5_000_000)
    monkeypatch.setattr("modeling_icc.scoring.mini_onnx.base_model_path", lambda: base)
    with pytest.raises(CheckpointError, match=r"mini's base weights .* does not match the sha256"):
        MiniOnnxScorer()


@pytest.mark.slow
def test_the_release_build_rewrites_the_shipped_graph_as_it_is(tmp_path):
    """Rebuilding (torch, onnx) gives the shipped graph and manifest byte for byte, with the torch that built
    them; another torch may trace other bytes: then rebuild, check the tests above, and commit the graph."""
    pytest.importorskip("torch")
    from modeling_icc.models.mini.graph_release import build_shipped_graph

    manifest = build_shipped_graph(shipped_heads_path(), base_model_path(), tmp_path)
    assert manifest == read_manifest()
    for name in (GRAPH_FILE, TERMS_FILE):
        assert (tmp_path / name).read_bytes() == (shipped_graph.shipped_graph_folder() / name).read_bytes()


if __name__ == "__main__":
    captions = stored()["captions"]
    scores = MiniOnnxScorer().score(captions)
    payload = {**stored(), "scores": [float(score) for score in scores]}
    STORED.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {STORED} ({len(captions)} captions)")
