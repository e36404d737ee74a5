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

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ..scoring.base import ConcretenessScorer
from ..scoring.languages import caption_languages, forget_languages
from ..utils.errors import UserInputError

AGGREGATES = ("min", "mean", "max")
#: What a row of a nested caption column holds: a list of captions.
NESTED_TYPES = (list, tuple, np.ndarray)
#: The column every engine writes ICC scores to (and reads them from) unless told another.
SCORE_COLUMN = "icc_score"
#: The quantiles that summaries of scores report (``icc score``'s last line, measurements, distributions).
SCORE_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def to_pylist(values: Any) -> list:
    """A plain list from a list, NumPy array, pandas Series, Arrow array or datasets ``Column``.

    Inner NumPy/Arrow values (nested columns) become lists too.
    """
    if is_arrow(values):
        return values.to_pylist()
    if isinstance(values, list):
        items = values
    elif hasattr(values, "tolist"):
        items = values.tolist()
    else:
        items = list(values)
    return [_inner_list(item) for item in items]


def is_arrow(values: Any) -> bool:
    """Whether ``values`` is an Arrow array (without importing Arrow: no Arrow array exists before it is)."""
    pa = sys.modules.get("pyarrow")
    return pa is not None and isinstance(values, (pa.Array, pa.ChunkedArray))


def _inner_list(item: Any) -> Any:
    if isinstance(item, np.ndarray):
        return item.tolist()
    if isinstance(item, tuple):
        return list(item)
    return item


def to_float_array(values: Any, name: str = "values") -> np.ndarray:
    """A float array from any column container (float32 stays float32); nulls and blanks become NaN.

    Text cells (CSV, TSV) are parsed: numbers, and ``true``/``false`` (``yes``/``no``) as 1/0,
    so that a label column such as VSR's ``is_related`` can carry a rule. Anything else is a
    one-line error naming column ``name``.
    """
    if is_arrow(values):
        values = values.to_numpy(zero_copy_only=False)
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiub":
        return values if values.dtype.kind == "f" else values.astype(np.float64)
    items = [np.nan if value is None else value for value in to_pylist(values)]
    try:
        return np.asarray(items, dtype=np.float64)
    except (TypeError, ValueError):  # blanks or words in text cells
        return np.asarray([_number(value, name) for value in items], dtype=np.float64)


_WORDS = {"true": 1.0, "yes": 1.0, "false": 0.0, "no": 0.0, "": np.nan, "nan": np.nan}


def _number(value: Any, name: str) -> float:
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _WORDS:
            return _WORDS[text]
        value = text
    try:
        return float(value)
    except (TypeError, ValueError):
        raise UserInputError(f"column {name!r} holds {value!r}, not a number or true/false") from None


def is_nested(values: Sequence[Any]) -> bool:
    """Whether the first non-null row holds a list of captions rather than one caption."""
    for item in values:
        if item is not None:
            return isinstance(item, NESTED_TYPES)
    return False


def score_flat(scorer: ConcretenessScorer, values: Sequence[Any]) -> np.ndarray:
    """Raw (unclipped) float32 scores; NaN for blank, null or non-text captions."""
    return scorer.score(values, errors="nan", raw=True)


def score_flat_stream(scorer: ConcretenessScorer, parts: Iterable[Sequence[Any]]) -> Iterator[np.ndarray]:
    """:func:`score_flat` of each part, through the scorer's stream (see ``ConcretenessScorer.score_stream``)."""
    return scorer.score_stream(parts, errors="nan", raw=True)


def flat_captions(rows: Sequence[Any], nested: bool) -> list[Any]:
    """Every caption in row order: the rows themselves, or (``nested``) every caption of every row.

    In a nested column every row must hold a list: a lone string would otherwise be read as a list of its
    characters, each scored as a caption. Such a row is refused, naming it."""
    if not nested:
        return list(rows)
    for row in rows:
        if row is not None and not isinstance(row, NESTED_TYPES):
            raise UserInputError(
                f"the caption column holds lists of captions, but a row holds {type(row).__name__} "
                f"{str(row)[:40]!r}: give every row a list (a one-caption row as [caption])"
            )
    return [caption for row in rows if row is not None for caption in row]


def per_row(flat: np.ndarray, rows: Sequence[Sequence[Any] | None]) -> list[np.ndarray | None]:
    """Scores of :func:`flat_captions` split back into one array per row (``None`` rows stay ``None``)."""
    out: list[np.ndarray | None] = []
    start = 0
    for row in rows:
        length = 0 if row is None else len(row)
        out.append(None if row is None else flat[start : start + length])
        start += length
    return out


def score_nested(scorer: ConcretenessScorer, rows: Sequence[Sequence[Any] | None]) -> list[np.ndarray | None]:
    """Raw scores of every caption of every row, as one array per row (``None`` rows stay ``None``)."""
    return per_row(score_flat(scorer, flat_captions(rows, nested=True)), rows)


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


def model_column(score_column: str) -> str:
    """The column naming the model whose scores ``score_column`` holds: ``icc_model`` beside ``icc_score``
    (as in the CLI's outputs), ``{score_column}_model`` beside any other."""
    return "icc_model" if score_column == SCORE_COLUMN else f"{score_column}_model"


def language_column(score_column: str) -> str:
    """The column naming each caption's language beside ``score_column``: ``icc_language`` beside ``icc_score``,
    ``{score_column}_language`` beside any other (not ``language``: multilingual pools such as LAION-2B-multi
    carry a ``LANGUAGE`` column of their own)."""
    return "icc_language" if score_column == SCORE_COLUMN else f"{score_column}_language"


def languages_of(items: Sequence[Any], nested: bool) -> list[Any]:
    """Each caption's language code (:func:`~modeling_icc.scoring.languages.caption_languages`): one per row,
    or one list per row of a nested column (``None`` for a null row, a blank or non-text caption)."""
    if not nested:
        return caption_languages(items)
    return [None if row is None else caption_languages(row) for row in items]


def scored_columns(
    scorer: ConcretenessScorer,
    values: Any,
    output_column: str,
    *,
    nested: bool,
    raw_column: str | None = None,
    aggregates: Sequence[str] = (),
) -> dict[str, Any]:
    """New columns for a batch of captions (see :func:`score_columns`), and the model's id (:func:`model_column`)."""
    items = to_pylist(values)
    raw = score_nested(scorer, items) if nested else score_flat(scorer, items)
    columns = score_columns(raw, output_column, raw_column=raw_column, aggregates=aggregates)
    columns[model_column(output_column)] = [scorer.model_id] * len(items)
    columns[language_column(output_column)] = languages_of(items, nested)
    forget_languages()  # named: the batch's captions need not stay in memory
    return columns


def stored_scores_usable(
    column_names: Sequence[str] | None,
    score_column: str,
    caption_column: str,
    model_id: str | None,
    stored_models: Callable[[], set[Any]],
) -> bool:
    """Whether ``score_column``, already in the data, stands for the scores of the model named ``model_id``.

    Yes when no model is named (``None``) or when every row's :func:`model_column` records that
    model (``stored_models()`` returns the ids found there); otherwise the captions are scored
    again with the named model, and without ``caption_column`` that is a :class:`UserInputError`.
    """
    names = column_names or ()
    if score_column not in names:
        return False
    if model_id is None:
        return True
    recorded = model_column(score_column)
    stored = stored_models() if recorded in names else set()
    if stored == {model_id}:
        return True
    if caption_column not in names:
        found = ", ".join(sorted(map(str, stored))) or "no recorded model"
        raise UserInputError(
            f"column {score_column!r} holds scores of {found} (column {recorded!r}), not of model={model_id!r}, "
            f"and there is no {caption_column!r} column to score again: pass no model to use the stored scores"
        )
    return False


def score_columns(
    raw: np.ndarray | list[np.ndarray | None],
    output_column: str,
    *,
    raw_column: str | None = None,
    aggregates: Sequence[str] = (),
) -> dict[str, Any]:
    """Clipped scores, optional raw scores, and (nested) per-row aggregates, from raw scores.

    Flat scores (one array) give float32 arrays; nested scores (one array per row) give
    one list of floats per row (``None`` for a null row) plus ``{output_column}_{min|mean|max}``.
    """
    if isinstance(raw, np.ndarray):
        columns: dict[str, Any] = {output_column: np.clip(raw, 0.0, 1.0)}
        if raw_column:
            columns[raw_column] = raw
        return columns
    clipped = [None if row is None else np.clip(row, 0.0, 1.0) for row in raw]
    columns = {output_column: [None if row is None else row.tolist() for row in clipped]}
    if raw_column:
        columns[raw_column] = [None if row is None else row.tolist() for row in raw]
    for how in aggregates:
        columns[aggregate_column(output_column, how)] = aggregate(clipped, how)
    return columns
