"""Sharded jobs with --workers: nothing outlives the job, nothing is written without its lock (issue 25, item 3)."""

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

psutil = pytest.importorskip("psutil")


def _descendants(pid: int) -> list:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _command_line(process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:  # gone, or a zombie
        return ""


def _status(process) -> str:
    """The process's status; "gone" once it no longer exists (a dead, unreaped process is a zombie)."""
    try:
        return process.status()
    except psutil.NoSuchProcess:
        return "gone"


def _outputs(directory: Path) -> dict[str, int]:
    """Every file the job committed (not its temp files), with its modification time (ns)."""
    files = directory.rglob("*")
    return {str(path): path.stat().st_mtime_ns for path in files if path.is_file() and path.suffix != ".tmp"}


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_workers_die_with_the_main_process(tmp_path, how):
    shards = tmp_path / "pool"
    shards.mkdir()
    for index in range(4):
        rows = "".join(f"a dog number {index}-{i} on a red sofa\n" for i in range(60_000))
        (shards / f"{index:05d}.txt").write_text(rows)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "modeling_icc", "score", "--model", "lite", "--input", f"{shards}/*.txt"]
    job = subprocess.Popen(
        [*command, "--output-dir", out, "--workers", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: nothing here is killed with it but what it started
    )
    try:
        deadline = time.monotonic() + 60
        # Started: the forkserver, two workers (and the resource tracker) are running.
        while len(_descendants(job.pid)) < 3:
            assert job.poll() is None and time.monotonic() < deadline, "the job ended before its workers started"
            time.sleep(0.05)
        time.sleep(0.5)  # the workers are scoring
        orphans = _descendants(job.pid)
        job.send_signal(how)
        job.wait()
        at_death = _outputs(out)
        _, alive = psutil.wait_procs(orphans, timeout=5)
        assert alive == [], f"still running 5 s after the main process: {[p.cmdline() for p in alive]}"
        assert _outputs(out) == at_death  # nothing committed once the main process (and its lock) was gone
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(job.pid, signal.SIGKILL)  # what is left of this job's process group, on failure


def test_a_failed_commit_check_renames_nothing(tmp_path):
    from modeling_icc.curation.io.outputs import atomic_output

    def parent_gone() -> None:
        raise SystemExit(1)

    out = tmp_path / "00000.jsonl"
    out.write_text("the previous output\n")
    with pytest.raises(SystemExit), atomic_output(out, before_rename=parent_gone) as stream:
        stream.write(b"rows of an orphaned worker\n")
    assert out.read_text() == "the previous output\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["00000.jsonl"]


def test_the_forkserver_dies_with_a_job_killed_while_its_workers_start(tmp_path):
    """kill -9 while the forkserver still imports its preload (torch: seconds): it goes at once, and the
    resource tracker with it, instead of living on until its imports end."""
    shards = tmp_path / "pool"
    shards.mkdir()
    for index in range(2):
        (shards / f"{index:05d}.txt").write_text("a dog on a red sofa\n" * 100)
    command = [sys.executable, "-m", "modeling_icc", "score", "--model", "lite", "--input", f"{shards}/*.txt"]
    job = subprocess.Popen(
        [*command, "--output-dir", tmp_path / "out", "--workers", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not any("forkserver" in _command_line(process) for process in _descendants(job.pid)):
            assert job.poll() is None and time.monotonic() < deadline, "the job ended before its forkserver started"
            time.sleep(0.01)
        helpers = _descendants(job.pid)
        job.kill()
        job.wait()
        _, alive = psutil.wait_procs(helpers, timeout=1.0)
        running = [process for process in alive if _status(process) not in (psutil.STATUS_ZOMBIE, "gone")]
        assert running == [], f"still running 1 s after the main process: {[_command_line(p) for p in running]}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(job.pid, signal.SIGKILL)
