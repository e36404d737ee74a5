"""Worker processes of the data engines: GPU placement by rank and CPU thread sharing.

(Each process loads its scorer once through :func:`modeling_icc.scoring.load.load_scorer` with ``cache=True``.)
"""

from __future__ import annotations

import os

import torch


def device_for_rank(device: str | torch.device | None, rank: int | None, cuda_devices: int | None = None) -> str | None:
    """Where worker ``rank`` should run.

    An explicit device with an index (``"cuda:1"``, ``"cpu"``) is kept. ``None`` or
    a bare ``"cuda"`` puts rank ``r`` on ``cuda:{r % n_gpus}`` when GPUs exist, so
    ``num_proc=n_gpus`` spreads the work one process per GPU. ``cuda_devices``
    defaults to ``torch.cuda.device_count()`` (which does not initialize CUDA).
    """
    requested = None if device is None else str(device)
    if requested not in (None, "cuda") or rank is None:
        return requested
    count = torch.cuda.device_count() if cuda_devices is None else cuda_devices
    if count == 0:
        return requested
    return f"cuda:{rank % count}"


def threads_per_worker(n_workers: int) -> int:
    """This process's share of the CPU cores when ``n_workers`` processes score at once (no oversubscription)."""
    return max(1, (os.cpu_count() or 1) // max(1, n_workers))


def worker_count(requested: int, shards: int) -> int:
    """The worker processes worth starting: no more than the shards to score or the CPU cores
    this process may use (each worker needs at least one; more would only compete for them)."""
    return max(1, min(requested, shards, available_cores()))


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the OS has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
