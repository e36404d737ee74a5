"""Single-file jobs never destroy what they read or what is not theirs to replace (issue 25, items 1, 2 and 7)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from modeling_icc.cli.main import main

ROWS = "".join(f'{{"caption": "a dog number {i} on a red sofa"}}\n' for i in range(20))


def icc(*args: object) -> int:
    return main([str(arg) for arg in args])


def one_line_error(err: str, message: str) -> None:
    assert message in err, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


@pytest.fixture
def pool(tmp_path) -> Path:
    path = tmp_path / "y.jsonl"
    path.write_text(ROWS)
    return path


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
