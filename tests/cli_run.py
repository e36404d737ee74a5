"""``icc`` as the tests run it, in this process or a fresh interpreter, on the input files they write, and
the one-line error a refused input must give."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from modeling_icc.cli.main import main


def icc(*args: object) -> int:
    """``icc ARGS`` (each argument as text) in this process; its exit status."""
    return main([str(arg) for arg in args])


def icc_process(*args: object, **options) -> subprocess.CompletedProcess:
    """``icc ARGS`` in a fresh interpreter: bytes arguments pass as they are, others as text; stdout and stderr
    are captured, as text, unless ``options`` say otherwise."""
    argv = [arg if isinstance(arg, bytes) else str(arg) for arg in args]
    options = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, **options}
    return subprocess.run([sys.executable, "-m", "modeling_icc", *argv], **options)


def written(path: Path, text: str) -> Path:
    """``path``, holding ``text``: an input for a command to read."""
    path.write_text(text)
    return path


def jsonl_shards(folder: Path, rows: str, count: int) -> Path:
    """``folder`` holding ``count`` JSON lines shards ``s0.jsonl``, ``s1.jsonl``, ... of the same ``rows``."""
    folder.mkdir()
    for index in range(count):
        written(folder / f"s{index}.jsonl", rows)
    return folder


def one_line_error(err: str, message: str) -> None:
    """``err`` says ``message`` in one line, without a traceback."""
    assert message in err, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
