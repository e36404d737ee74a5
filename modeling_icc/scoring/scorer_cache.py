"""One loaded scorer per (model, device, dtype, batch size, compile) and process.

Loading a neural student takes seconds and hundreds of MB. The evaluate module (called
once per evaluation step), the Space (once per click) and the data engines
(``datasets.map``, shard worker pools, Ray actors: many calls per process) share this
cache so each process loads a model once.
"""

from __future__ import annotations

import copy
import os
from functools import lru_cache

import torch

from .base import ConcretenessScorer
from .devices import resolve_device, resolve_dtype
from .load import DEFAULT_MODEL_ID, LITE_MODEL_ID, load_scorer

#: What callers may pass as a model: anything :func:`load_scorer` accepts, or a ready scorer.
ModelSpec = str | os.PathLike | ConcretenessScorer | None


def cached_scorer(
    model: ModelSpec = None,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
    batch_size: int | None = None,
    compile: bool = False,
) -> ConcretenessScorer:
    """The scorer for ``model`` on ``device`` in ``dtype``, loaded on first use and kept.

    A ready scorer is returned as is. ``None`` device/dtype resolve to the same defaults
    as :func:`load_scorer`, so ``cached_scorer(m)`` and ``cached_scorer(m, "cpu", <the
    CPU default>)`` share one model.
    """
    if isinstance(model, ConcretenessScorer):
        return model
    name = os.fspath(model) if model is not None else DEFAULT_MODEL_ID
    if name == LITE_MODEL_ID:
        return _load(name, "cpu", "float32", None, False)
    resolved_device = resolve_device(device)
    resolved_dtype = resolve_dtype(dtype, resolved_device)
    return _load(name, str(resolved_device), str(resolved_dtype).removeprefix("torch."), batch_size, compile)


@lru_cache(maxsize=8)
def _load(name: str, device: str, dtype: str, batch_size: int | None, compile: bool) -> ConcretenessScorer:
    if name == LITE_MODEL_ID:
        return load_scorer(name)
    return load_scorer(name, device=device, dtype=dtype, batch_size=batch_size, compile=compile)


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
