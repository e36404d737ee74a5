"""Scoring one column of captions, whatever container a data engine hands over.

``datasets`` gives batches as Python lists, NumPy arrays, pandas Series, Arrow
arrays or (datasets 5) lazy ``Column`` objects depending on the format; Ray
gives Arrow tables. :func:`to_pylist` turns all of them into plain lists so
the scorer always sees ``str`` items.

A column is *nested* when each row holds a list of captions (e.g. the node
captions of a Graph-Based Captioning annotation). Nested columns are scored in
one flat call, so length-sorted batching works across rows, and split back
into per-row lists; per-row ``min``/``mean``/``max`` summarize them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from ..scoring.base import ConcretenessScorer

AGGREGATES = ("min", "mean", "max")


def to_pylist(values: Any) -> list:
    """A plain list from a list, NumPy array, pandas Series, Arrow array or datasets ``Column``.

    Inner NumPy/Arrow values (nested columns) become lists too.
    """
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values.to_pylist()
    if isinstance(values, list):
        items = values
    elif hasattr(values, "tolist"):
        items = values.tolist()
    else:
        items = list(values)
    return [_inner_list(item) for item in items]


def _inner_list(item: Any) -> Any:
    if isinstance(item, np.ndarray):
        return item.tolist()
    if isinstance(item, tuple):
        return list(item)
    return item


def to_float_array(values: Any) -> np.ndarray:
    """A float64 array from any column container; nulls become NaN."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64)
    if isinstance(values, np.ndarray) and values.dtype != object:
        return values.astype(np.float64, copy=False)
    return np.asarray([np.nan if value is None else value for value in to_pylist(values)], dtype=np.float64)


def is_nested(values: Sequence[Any]) -> bool:
    """Whether the first non-null row holds a list of captions rather than one caption."""
    for item in values:
        if item is not None:
            return isinstance(item, (list, tuple, np.ndarray))
    return False


def score_flat(scorer: ConcretenessScorer, values: Sequence[Any]) -> np.ndarray:
    """Raw (unclipped) float32 scores; NaN for blank, null or non-text captions."""
    return scorer.score(values, errors="nan", raw=True)


def score_nested(scorer: ConcretenessScorer, rows: Sequence[Sequence[Any] | None]) -> list[np.ndarray | None]:
    """Raw scores of every caption of every row, as one array per row (``None`` rows stay ``None``)."""
    lengths = [0 if row is None else len(row) for row in rows]
    flat = [caption for row in rows if row is not None for caption in row]
    raw = score_flat(scorer, flat)
    out: list[np.ndarray | None] = []
    start = 0
    for row, length in zip(rows, lengths, strict=True):
        out.append(None if row is None else raw[start : start + length])
        start += length
    return out


def aggregate(row_scores: Iterable[np.ndarray | None], how: str) -> np.ndarray:
    """Per-row ``min``, ``mean`` or ``max`` of the non-NaN scores; NaN for rows with none."""
    if how not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {', '.join(AGGREGATES)}, got {how!r}")
    reduce = {"min": np.min, "mean": np.mean, "max": np.max}[how]
    out = []
    for scores in row_scores:
        valid = np.asarray([] if scores is None else scores, dtype=np.float32)
        valid = valid[~np.isnan(valid)]
        out.append(reduce(valid) if valid.size else np.nan)
    return np.asarray(out, dtype=np.float32)


def aggregate_column(output_column: str, how: str) -> str:
    """Name of a per-row aggregate column, e.g. ``icc_score_min``."""
    return f"{output_column}_{how}"


def scored_columns(
    scorer: ConcretenessScorer,
    values: Any,
    output_column: str,
    *,
    nested: bool,
    raw_column: str | None = None,
    aggregates: Sequence[str] = (),
) -> dict[str, Any]:
    """New columns for a batch: clipped scores, optional raw scores, and (nested) per-row aggregates.

    Flat columns give float32 arrays; nested columns give one list of floats per
    row (``None`` for a null row) plus ``{output_column}_{min|mean|max}``.
    """
    items = to_pylist(values)
    if not nested:
        raw = score_flat(scorer, items)
        columns: dict[str, Any] = {output_column: np.clip(raw, 0.0, 1.0)}
        if raw_column:
            columns[raw_column] = raw
        return columns
    raw_rows = score_nested(scorer, items)
    clipped = [None if row is None else np.clip(row, 0.0, 1.0) for row in raw_rows]
    columns = {output_column: [None if row is None else row.tolist() for row in clipped]}
    if raw_column:
        columns[raw_column] = [None if row is None else row.tolist() for row in raw_rows]
    for how in aggregates:
        columns[aggregate_column(output_column, how)] = aggregate(clipped, how)
    return columns
