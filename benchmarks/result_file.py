"""The JSON every benchmark writes: what ran (its command), where (the environment), and what it measured."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from modeling_icc.utils.provenance import environment, write_json


def write_result(benchmark: str, out: Path, results: dict[str, Any], device: str = "cpu", **fields: Any) -> None:
    """Write ``results`` to ``out`` with the command line that reproduces them and ``fields`` describing the run."""
    payload = {
        "benchmark": benchmark,
        "command": f"python benchmarks/{benchmark}.py " + shlex.join(sys.argv[1:]),
        **fields,
        "environment": environment(device),
        "results": results,
    }
    write_json(out, payload)
    print(f"wrote {out}")


def cpu_kind() -> str:
    """The CPU's model name and its matrix extensions, e.g. ``AMD EPYC ... (AVX-512, AVX512-BF16, no AMX)``."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            info = handle.read()
    except OSError:
        import platform

        return platform.processor() or platform.machine()
    name = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "")
    flags = next((set(line.split(":", 1)[1].split()) for line in info.splitlines() if line.startswith("flags")), set())
    features = [
        "AVX-512" if "avx512f" in flags else "no AVX-512",
        *(["AVX512-BF16"] if "avx512_bf16" in flags else []),
        "AMX" if "amx_tile" in flags else "no AMX",
    ]
    return f"{name} ({', '.join(features)})"
