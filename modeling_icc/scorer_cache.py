"""One loaded scorer per (model, device, dtype), shared by the evaluate module and the Space.

Loading a neural student takes seconds and hundreds of MB; a metric called once per
evaluation step, or a demo called once per click, must not pay that every time.
"""

from __future__ import annotations

import copy
import os
from functools import lru_cache

import torch

from .devices import resolve_device, resolve_dtype
from .loading import LITE_MODEL_ID, load_scorer
from .scorer import ConcretenessScorer


def cached_scorer(
    model_id: str | os.PathLike,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
) -> ConcretenessScorer:
    """The scorer for ``model_id`` on ``device`` in ``dtype``, loaded on first use and kept.

    ``None`` device/dtype resolve to the same defaults as :func:`load_scorer`, so
    ``cached_scorer(m)`` and ``cached_scorer(m, "cpu", "float32")`` share one model on a CPU.
    """
    name = os.fspath(model_id)
    if name == LITE_MODEL_ID:
        return _load(name, "cpu", "float32")
    resolved_device = resolve_device(device)
    resolved_dtype = resolve_dtype(dtype, resolved_device)
    return _load(name, str(resolved_device), str(resolved_dtype).removeprefix("torch."))


@lru_cache(maxsize=8)
def _load(name: str, device: str, dtype: str) -> ConcretenessScorer:
    if name == LITE_MODEL_ID:
        return load_scorer(name)
    return load_scorer(name, device=device, dtype=dtype)


def clear_scorer_cache() -> None:
    """Forget every cached scorer (frees their memory once no caller holds them)."""
    _load.cache_clear()


def with_batch_size(scorer: ConcretenessScorer, batch_size: int | None) -> ConcretenessScorer:
    """``scorer`` with another batch size, sharing its weights; unchanged if it has no batches.

    A shallow copy, so concurrent callers of a cached scorer never see each other's setting.
    """
    if batch_size is None or not hasattr(scorer, "batch_size"):
        return scorer
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    resized = copy.copy(scorer)
    resized.batch_size = batch_size
    return resized
