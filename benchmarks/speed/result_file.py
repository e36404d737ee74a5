"""The JSON every benchmark writes: what ran (its command), where (the environment), and what it measured."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from modeling_icc.utils.provenance import environment, write_json

#: This folder as the repository root sees it (``benchmarks/speed``): the recorded command runs from the root.
SCRIPTS = Path(__file__).resolve().parent.relative_to(Path(__file__).resolve().parents[2]).as_posix()


def command_line(benchmark: str) -> str:
    """The command that reproduces this run of ``benchmark``'s script, from the repository root."""
    return f"python {SCRIPTS}/{benchmark}.py " + shlex.join(sys.argv[1:])


def write_result(benchmark: str, out: Path, results: dict[str, Any], device: str = "cpu", **fields: Any) -> None:
    """Write ``results`` to ``out`` with the command line that reproduces them and ``fields`` describing the run."""
    payload = {
        "benchmark": benchmark,
        "command": command_line(benchmark),
        **fields,
        "environment": environment(device),
        "results": results,
    }
    save(out, payload)


def save(out: Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` to ``out``, then say what the run skipped (``payload["skipped"]``: name -> reason, if
    any) and where the JSON went."""
    write_json(out, payload)
    for name, reason in payload.get("skipped", {}).items():
        print(f"{name} skipped: {reason}")
    print(f"wrote {out}")
