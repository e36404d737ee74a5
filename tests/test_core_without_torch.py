"""The core install's promise (issue 50), in processes that cannot import torch or the other extras: the command
line, ``load_scorer`` and the file engines score and filter with mini and lite without importing torch, and what
needs an extra says so in one line naming its ``pip install``.

The processes block the extras' imports (as if not installed); ``tests/test_core_install.py`` installs the core
into a fresh virtual environment (slow).
"""

import subprocess
import sys
from pathlib import Path

import pytest
from no_torch import EXTRA_MODULES, blocker

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "modeling_icc" / "data" / "demo_captions.txt"
#: Ends every blocked process: which of the extras' modules it imported after all.
REPORTED = ("torch", "transformers", "datasets", "pyarrow")
REPORT_IMPORTS = f"\nimport sys\nprint('imported:', [m for m in {REPORTED!r} if m in sys.modules])\n"


def run_without_torch(
    code: str, tmp_path: Path, blocked: tuple[str, ...] = EXTRA_MODULES
) -> subprocess.CompletedProcess:
    """Run ``code`` in a process, and any process it starts (a ``sitecustomize`` on their path), unable to
    import ``blocked`` (the extras); prints which of torch, transformers and datasets it imported."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(blocker(blocked))
    env = {
        "HF_HUB_OFFLINE": "1",
        "ICC_CACHE_DIR": str(tmp_path / "cache"),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": f"{site}:{ROOT}",
    }
    return subprocess.run(
        [sys.executable, "-c", code + REPORT_IMPORTS],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )


def icc(*argv: str) -> str:
    """Code that runs ``icc argv`` in the process and prints its exit code."""
    return f"from modeling_icc.cli.main import main\nprint('rc', main({list(argv)!r}))"


@pytest.mark.parametrize("model", ["mini", "lite"])
def test_icc_filter_runs_without_torch_and_imports_none(tmp_path, model):
    output = tmp_path / "kept.jsonl"
    done = run_without_torch(
        icc("filter", "--model", model, "--threshold", "0.5", "--input", str(DEMO), "--output", str(output)), tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "rc 0" in done.stdout and "imported: []" in done.stdout, done.stdout + done.stderr
    assert output.read_text().count("\n") > 5
    assert not (tmp_path / "cache").exists()  # the shipped graph: nothing built, nothing cached


def test_icc_explain_runs_without_torch_on_the_shipped_explanation_graph(tmp_path):
    done = run_without_torch(icc("explain", "I cant see this image it is too dark"), tmp_path)
    assert "rc 0" in done.stdout and "imported: []" in done.stdout, done.stdout + done.stderr
    assert "cant" in done.stdout and "0.31" in done.stdout


def test_minis_transformers_model_without_torch_is_one_line_naming_the_extra(tmp_path):
    code = (
        "from modeling_icc import load_scorer\n"
        "from modeling_icc.utils.errors import UserInputError\n"
        "try:\n"
        "    load_scorer('mini').model\n"
        "except UserInputError as error:\n"
        "    print('refused:', error)\n"
    )
    done = run_without_torch(code, tmp_path)
    assert "refused: mini's model and tokenizer (and explain() with other heads) needs torch" in done.stdout, (
        done.stdout + done.stderr
    )
    assert done.stdout.splitlines()[0].endswith('pip install "icc-concreteness[torch]"')


def test_the_datasets_engine_scores_and_filters_with_datasets_and_without_torch(tmp_path):
    code = (
        "import datasets\n"
        "from modeling_icc import add_icc_scores, filter_by_icc\n"
        "pool = datasets.Dataset.from_dict({'caption': ['a red car parked on a street', 'the meaning of life']})\n"
        "print([round(score, 3) for score in add_icc_scores(pool, model='mini')['icc_score']])\n"
        "print(list(filter_by_icc(pool, threshold=0.5, model='mini', num_proc=2)['caption']))\n"
    )
    done = run_without_torch(code, tmp_path, blocked=("torch", "transformers", "onnx", "sklearn"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[0.997, 0.055]",
        "['a red car parked on a street']",
        "imported: ['datasets', 'pyarrow']",
    ]


def test_sharded_jobs_on_worker_processes_run_without_torch(tmp_path):
    shards = tmp_path / "in"
    shards.mkdir()
    lines = DEMO.read_text().splitlines()
    for index in range(2):
        (shards / f"part-{index}.txt").write_text("\n".join(lines[index::2]) + "\n")
    out = tmp_path / "out"
    argv = ("filter", "--model", "mini", "--threshold", "0.5", "--input", f"{shards}/*.txt", "--output-dir", str(out))
    done = run_without_torch(icc(*argv, "--workers", "2"), tmp_path)
    assert done.returncode == 0 and "rc 0" in done.stdout, done.stdout + done.stderr
    assert len(list(out.glob("part-*.stats.json"))) == 2, sorted(path.name for path in out.iterdir())


@pytest.mark.parametrize(
    ("code", "part", "extra"),
    [
        (icc("score", "--device", "cuda", "a dog"), "mini on device 'cuda'", "torch"),
        (icc("score", "--dtype", "bfloat16", "a dog"), "in dtype 'bfloat16'", "torch"),
        (icc("bench", "--help"), "icc bench needs torch", "baselines"),
        (icc("convert", "--help"), "icc convert needs transformers", "torch"),
    ],
)
def test_what_needs_an_extra_says_so_in_one_line(tmp_path, code, part, extra):
    done = run_without_torch(code, tmp_path)
    assert "rc 2" in done.stdout, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("icc: error: ") and part in line, line
    assert line.endswith(f'pip install "icc-concreteness[{extra}]"'), line


@pytest.mark.parametrize("output", ["kept.jsonl", "kept.csv", "kept.tsv", "kept.txt", "kept.jsonl.gz"])
def test_text_formats_are_written_alike_with_and_without_arrow(tmp_path, output):
    # the core reads text into rows where pyarrow would build Arrow tables: the same bytes must come out
    argv = ("filter", "--model", "lite", "--top-fraction", "0.5", "--input", str(DEMO), "--output")
    core = run_without_torch(icc(*argv, str(tmp_path / "core" / output)), tmp_path)
    assert "rc 0" in core.stdout and "imported: []" in core.stdout, core.stdout + core.stderr
    arrow = run_without_torch(icc(*argv, str(tmp_path / "arrow" / output)), tmp_path, blocked=("torch",))
    assert "rc 0" in arrow.stdout and "'pyarrow'" in arrow.stdout, arrow.stdout + arrow.stderr
    assert (tmp_path / "core" / output).read_bytes() == (tmp_path / "arrow" / output).read_bytes()


@pytest.mark.parametrize(
    ("argv", "part"),
    [
        (("score", "--input", str(DEMO), "--output", "{tmp}/scores.parquet"), "reading or writing Parquet"),
        (("score", "--input", "{tmp}/pool.parquet", "--output", "{tmp}/scores.jsonl"), "reading or writing Parquet"),
        (
            ("filter", "--threshold", "0.5", "--input", str(DEMO), "--output", "{tmp}/kept.jsonl.zst"),
            "zstd compression",
        ),
    ],
)
def test_parquet_and_zstd_without_arrow_are_one_line_naming_the_extra(tmp_path, argv, part):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"caption": ["a red car"]}), tmp_path / "pool.parquet")
    done = run_without_torch(icc(*(arg.format(tmp=tmp_path) for arg in argv)), tmp_path)
    assert "rc 2" in done.stdout, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("icc: error: ") and part in line, line
    assert line.endswith('pip install "icc-concreteness[parquet]"'), line
    assert not list(tmp_path.glob("scores*")) and not list(tmp_path.glob("kept*"))


def test_a_student_without_torch_is_one_user_error_naming_the_extra(tmp_path, tiny_student_dir):
    code = (
        "from modeling_icc import load_scorer\n"
        "from modeling_icc.utils.errors import UserInputError\n"
        "try:\n"
        f"    load_scorer({str(tiny_student_dir)!r})\n"
        "except UserInputError as error:\n"
        "    print('refused:', error)\n"
    )
    done = run_without_torch(code, tmp_path)
    assert "refused: a student model (transformers) needs torch, transformers" in done.stdout, done.stderr
    assert 'pip install "icc-concreteness[torch]"' in done.stdout


def test_without_torch_mini_runs_on_onnx_runtime_in_fp32_on_a_cpu_with_native_bf16(monkeypatch):
    from modeling_icc.scoring import execution, hardware
    from modeling_icc.scoring.execution import MINI_RUNTIMES, STUDENT_RUNTIMES, Execution, resolve_execution
    from modeling_icc.utils.errors import UserInputError

    monkeypatch.delenv("ICC_MINI_RUNTIME", raising=False)
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: True)
    monkeypatch.setattr(hardware, "gpu_may_be_present", lambda: True)
    monkeypatch.setattr(execution, "torch_installed", lambda: False)
    monkeypatch.setattr(execution.extras, "module_available", lambda name: name not in ("torch", "transformers"))
    assert resolve_execution(MINI_RUNTIMES) == Execution("cpu", "float32", "onnxruntime")
    for device, dtype in (("cuda", None), (None, "bfloat16")):
        with pytest.raises(UserInputError, match=r'pip install "icc-concreteness\[torch\]"$'):
            resolve_execution(MINI_RUNTIMES, device, dtype)
    with pytest.raises(UserInputError, match="a student model"):
        resolve_execution(STUDENT_RUNTIMES)
