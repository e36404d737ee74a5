"""The two kinds of benchmark keep apart: quality results (``icc bench``) under ``benchmarks/quality/``, speed
scripts under ``benchmarks/speed/`` with their results in its ``results/``; every committed result names a
command that runs from the repository root, and ``icc cards`` reads the folders where the results are."""

from __future__ import annotations

import json
import runpy
import shlex
from pathlib import Path

import pytest

from modeling_icc.cli.cards import BENCH_RESULTS, SPEED_RESULTS_DIR
from modeling_icc.hub.results_schema import SPEED_BENCHMARKS_DIR, speed_command

ROOT = Path(__file__).resolve().parents[1]
QUALITY_DIR = ROOT / BENCH_RESULTS.parent
SPEED_RESULTS = sorted((ROOT / SPEED_RESULTS_DIR).glob("*.json"))
QUALITY_RESULTS = sorted(QUALITY_DIR.glob("*.json"))


def test_icc_cards_reads_the_committed_results_by_default():
    assert (ROOT / BENCH_RESULTS).is_file()
    assert (ROOT / SPEED_RESULTS_DIR).parent == ROOT / SPEED_BENCHMARKS_DIR
    assert SPEED_RESULTS and QUALITY_RESULTS
    assert not (ROOT / "benchmarks" / "results").exists()


@pytest.mark.parametrize("path", SPEED_RESULTS, ids=lambda path: path.name)
def test_every_speed_result_names_a_script_that_exists(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    if "benchmark" not in data:  # cost_tables.json: derived from the other results, no command of its own
        assert path.name.startswith("cost_tables")
        return
    runner, script = shlex.split(speed_command(data))[:2]  # python X.py, or bash X.sh for an install benchmark
    suffix = {"python": ".py", "bash": ".sh"}[runner]
    assert script == f"{SPEED_BENCHMARKS_DIR}/{data['benchmark']}{suffix}" and (ROOT / script).is_file()


@pytest.mark.parametrize("path", QUALITY_RESULTS, ids=lambda path: path.name)
def test_every_quality_result_reproduces_into_its_own_folder(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    if "suite" in data:  # written by `icc bench`
        command = shlex.split(data["settings"]["command"])
        assert command[:2] == ["icc", "bench"]
        assert command[command.index("--output-dir") + 1] == BENCH_RESULTS.parent.as_posix()
    else:
        assert (QUALITY_DIR / f"{data['benchmark']}.py").is_file()


def test_a_speed_result_records_the_command_from_the_repository_root(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / SPEED_BENCHMARKS_DIR))
    monkeypatch.setattr("sys.argv", ["startup.py", "--repeats", "2"])
    from result_file import write_result

    out = tmp_path / "startup.json"
    write_result("startup", out, {"import modeling_icc": {"median_s": 0.5}})
    command = json.loads(out.read_text(encoding="utf-8"))["command"]
    assert command == f"python {SPEED_BENCHMARKS_DIR}/startup.py --repeats 2"
    assert (ROOT / shlex.split(command)[1]).is_file()


def test_scripts_that_find_the_repository_or_their_results_by_location_find_them(monkeypatch):
    """Scripts locate the checkout and their output folder from ``__file__``: one level deeper than before."""
    monkeypatch.syspath_prepend(str(ROOT / SPEED_BENCHMARKS_DIR))
    speed = ROOT / SPEED_BENCHMARKS_DIR
    assert runpy.run_path(str(speed / "mini_cpu.py"))["REPO"] == ROOT
    assert runpy.run_path(str(speed / "gpu_end_to_end.py"))["ROOT"] == ROOT
    assert runpy.run_path(str(speed / "lite_throughput.py"))["RESULTS"] == ROOT / SPEED_RESULTS_DIR
    assert runpy.run_path(str(QUALITY_DIR / "cc3m_distribution.py"))["RESULTS"] == QUALITY_DIR
