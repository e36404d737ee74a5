"""Run a command as a child process and measure it: wall time, peak RSS, time to its first output line.

Peak RSS is the child's own high-water mark as the kernel reports it to its parent
(``os.wait4``), so nothing is sampled and nothing is missed. Linux counts into a child's
peak the memory of the process that started it (the peak of the address space it leaves
at ``exec``), so the child is started by a small helper process (this file run as a
script), not by the benchmark, which may hold its whole input in memory.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class ChildRun:
    wall_s: float
    peak_rss_mb: float
    first_output_s: float | None
    cpu_s: float | None = None  # user + system CPU seconds of the child (unaffected by other jobs' load)


def run_child(
    argv: list[str], stdin: Path | None = None, first_output: bool = False, env: dict[str, str] | None = None
) -> ChildRun:
    """Run ``argv`` to completion (stdout discarded) through the helper; raise with its stderr if it fails.

    ``first_output``: also time the first line on stdout. ``env``: the child's environment (default: this one).
    """
    helper = [sys.executable, __file__, *(["--first-output"] if first_output else []), "--", *argv]
    with stdin.open("rb") if stdin else open(os.devnull, "rb") as source:
        result = subprocess.run(helper, stdin=source, capture_output=True, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {result.stderr.decode()[-2000:]}")
    return ChildRun(**json.loads(result.stdout))


def _measure(argv: list[str], first_output: bool) -> ChildRun:
    with tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdout=subprocess.PIPE if first_output else subprocess.DEVNULL, stderr=stderr)
        first = None
        if first_output:
            process.stdout.readline()
            first = time.perf_counter() - start
            with open(os.devnull, "wb") as sink:
                shutil.copyfileobj(process.stdout, sink)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            stderr.seek(0)
            sys.exit(stderr.read().decode(errors="replace"))
    # ru_maxrss is in KiB on Linux
    return ChildRun(wall, usage.ru_maxrss / 1024, first, usage.ru_utime + usage.ru_stime)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="measure one command (used by run_child)")
    parser.add_argument("--first-output", action="store_true")
    parser.add_argument("argv", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    print(
        json.dumps(
            asdict(_measure(options.argv[1:] if options.argv[:1] == ["--"] else options.argv, options.first_output))
        )
    )
