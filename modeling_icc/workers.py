"""One scorer per worker process: a per-process cache, GPU placement by rank, CPU thread sharing.

Data engines (``datasets.map``, a process pool over shards, Ray actors) call the
scoring function many times per process. Loading a neural student takes
seconds, so each process loads it once and reuses it; the cache key is
everything that changes the loaded weights or where they run.
"""

from __future__ import annotations

import os

import torch

from .loading import DEFAULT_MODEL_ID, load_scorer
from .scorer import ConcretenessScorer

ModelSpec = str | os.PathLike | ConcretenessScorer | None

_SCORERS: dict[tuple, ConcretenessScorer] = {}


def cached_scorer(
    model: ModelSpec = None,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
    batch_size: int | None = None,
    compile: bool = False,
) -> ConcretenessScorer:
    """The scorer for ``model`` in this process, loaded on first use.

    ``model`` is anything :func:`load_scorer` accepts, or a ready scorer (returned as is).
    """
    if isinstance(model, ConcretenessScorer):
        return model
    name = os.fspath(model) if model is not None else DEFAULT_MODEL_ID
    key = (name, None if device is None else str(device), None if dtype is None else str(dtype), batch_size, compile)
    if key not in _SCORERS:
        _SCORERS[key] = load_scorer(name, device=device, dtype=dtype, batch_size=batch_size, compile=compile)
    return _SCORERS[key]


def clear_scorer_cache() -> None:
    """Drop every cached scorer (frees GPU memory held by this process)."""
    _SCORERS.clear()


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
