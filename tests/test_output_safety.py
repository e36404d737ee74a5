"""Single-file jobs never destroy what they read or what is not theirs to replace (issue 25, items 1, 2 and 7)."""

import contextlib
import json
import os
import select
import signal
import stat
import subprocess
import sys
import time
import tty
from pathlib import Path

import pytest
from cli_run import icc, one_line_error, written

ROWS = "".join(f'{{"caption": "a dog number {i} on a red sofa"}}\n' for i in range(20))


@pytest.fixture
def pool(tmp_path) -> Path:
    return written(tmp_path / "y.jsonl", ROWS)


@pytest.mark.parametrize("command", [["filter", "--threshold", "0.9"], ["score"]])
@pytest.mark.parametrize("alias", ["same", "symlink", "hard link"])
def test_output_that_is_the_input_is_refused(pool, command, alias, capsys):
    output = pool
    if alias == "symlink":
        output = pool.parent / "link.jsonl"
        output.symlink_to(pool.name)
    elif alias == "hard link":
        output = pool.parent / "hard.jsonl"
        os.link(pool, output)
    assert icc(*command, "--model", "lite", "--input", pool, "--output", output) == 2
    one_line_error(capsys.readouterr().err, f"--output {output} is the input file")
    assert pool.read_text() == ROWS
    assert sorted(path.name for path in pool.parent.iterdir() if path.name.startswith(".")) == []


def test_stdin_redirected_from_the_output_is_refused(pool):
    command = ["score", "--model", "lite", "-i", "-", "--format", "jsonl", "-o", str(pool)]
    with pool.open("rb") as stdin:
        result = subprocess.run(
            [sys.executable, "-m", "modeling_icc", *command],
            stdin=stdin,
            capture_output=True,
            text=True,
        )
    assert result.returncode == 2
    one_line_error(result.stderr, "is the input file")
    assert pool.read_text() == ROWS


def test_output_fifo_is_written_into_not_replaced(pool, tmp_path):
    fifo = tmp_path / "rows.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a reader that is there before the writer (never blocks)
    try:
        assert icc("score", "--model", "lite", "-i", pool, "-o", fifo, "--output-format", "jsonl") == 0
        received = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(reader, 65536):
                received += chunk
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    rows = [json.loads(line) for line in received.decode().splitlines()]
    assert [row["caption"] for row in rows] == [json.loads(line)["caption"] for line in ROWS.splitlines()]
    assert all(0 <= row["icc_score"] <= 1 for row in rows)


def test_output_character_device_is_written_into(pool):
    """A terminal (here a pseudo-terminal, as ``/dev/stdout`` on a console) takes the rows as they are."""
    master, slave = os.openpty()
    tty.setraw(slave)
    try:
        terminal = os.ttyname(slave)
        assert icc("score", "--model", "lite", "-i", pool, "-o", terminal) == 0  # no extension: as the input
        assert stat.S_ISCHR(os.stat(terminal).st_mode)
        received = b""
        while received.count(b"\n") < 20 and select.select([master], [], [], 5)[0]:
            received += os.read(master, 65536)
    finally:
        os.close(slave)
        os.close(master)
    rows = [json.loads(line) for line in received.decode().splitlines()]
    assert len(rows) == 20 and all("icc_score" in row for row in rows)


def test_output_symlink_is_written_through(pool, tmp_path):
    target = tmp_path / "runs" / "3.jsonl"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "latest.jsonl"
    link.symlink_to(target)
    assert icc("score", "--model", "lite", "-i", pool, "-o", link) == 0
    assert link.is_symlink() and link.resolve() == target
    assert len(target.read_text().splitlines()) == 20


def test_output_directory_is_refused(pool, tmp_path, capsys):
    assert icc("score", "--model", "lite", "-i", pool, "-o", tmp_path) == 2
    one_line_error(capsys.readouterr().err, f"the output {tmp_path} is a directory")


def _spill_files(output: Path | None, temp: Path) -> list[Path]:
    """What a two-pass job writing ``output`` (None: stdout) keeps between passes, and any old-style spill dirs."""
    beside = output.parent.glob(f".{output.name}.icc-*.tmp") if output else temp.glob(".icc-stream.icc-*.tmp")
    return sorted([*beside, *temp.glob("icc-*")])


@pytest.mark.parametrize("to_stdout", [False, True])
def test_work_files_of_a_killed_ranking_job_are_removed_by_the_next_run(tmp_path, to_stdout):
    source = tmp_path / "pool.txt"
    source.write_text("".join(f"a dog number {i} on a red sofa\n" for i in range(200_000)))
    temp = tmp_path / "temp"
    temp.mkdir()
    output = None if to_stdout else tmp_path / "kept.jsonl"
    command = [sys.executable, "-m", "modeling_icc", "filter", "--model", "lite", "-i", source, "--top-fraction", "0.3"]
    command += ["--output-format", "jsonl"] + ([] if to_stdout else ["-o", output])
    env = {**os.environ, "TMPDIR": str(temp)}
    job = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not any(path.stat().st_size for path in _spill_files(output, temp) if path.is_file()):
        assert job.poll() is None and time.monotonic() < deadline, "the job ended before it spilled anything"
        time.sleep(0.02)
    job.send_signal(signal.SIGKILL)
    job.wait()
    assert _spill_files(output, temp), "nothing left behind to remove"
    small = tmp_path / "small.txt"
    small.write_text("a dog\na cat on a mat\n")
    again = [arg if arg != source else small for arg in command]
    assert subprocess.run(again, env=env, stdout=subprocess.DEVNULL).returncode == 0
    assert _spill_files(output, temp) == []


def test_dev_stdout_sent_to_a_file_is_appended_to(pool, tmp_path):
    """``--output /dev/stdout >> file`` writes through the shell's descriptor (never a temp file in /dev)."""
    target = tmp_path / "scored.jsonl"
    target.write_text('{"earlier": "line"}\n')
    command = [sys.executable, "-m", "modeling_icc", "score", "--model", "lite", "-i", str(pool), "-o", "/dev/stdout"]
    with target.open("ab") as stdout:
        assert subprocess.run(command, stdout=stdout, stderr=subprocess.DEVNULL).returncode == 0
    lines = target.read_text().splitlines()
    assert lines[0] == '{"earlier": "line"}' and len(lines) == 21 and os.path.islink("/dev/stdout")


@pytest.mark.parametrize("sharded", [False, True], ids=["single file", "output dir"])
def test_two_jobs_never_write_one_datacomp_subset(tmp_path, sharded, capsys):
    """The subset file is a job's output too (issue 48, "no two writers share an output"): while one job holds
    it, another job naming it, with another output, is refused in one line; once free, the job runs."""
    from modeling_icc.curation.engines.single_file import held_while_written

    pool = written(
        tmp_path / "pool.jsonl", "".join(f'{{"caption": "a dog {i}", "uid": "{i:032x}"}}\n' for i in range(5))
    )
    subset = tmp_path / "subset.npy"
    where = ["--output-dir", tmp_path / "out"] if sharded else ["-o", tmp_path / "kept.jsonl"]
    command = ["filter", "--model", "lite", "-i", pool, *where, "--threshold", "0.5", "--datacomp-subset", subset]
    with held_while_written(subset):  # another job writing it now
        assert icc(*command) == 2
    one_line_error(capsys.readouterr().err, f"another icc job is writing {subset}")
    assert not subset.exists()
    assert icc(*command) == 0
    assert subset.is_file() and not (tmp_path / ".subset.npy.icc.lock").exists()
