"""Hugging Face ``datasets`` integration: add ICC scores with batched ``map`` and filter by them.

Scoring runs the engines' scoring callable (:mod:`modeling_icc.curation.engines.scoring`) in
batched ``map`` calls; each process loads the scorer once. ``num_proc=n`` on a ``Dataset`` starts ``n``
processes and, with GPUs present, places process ``r`` on ``cuda:r % n_gpus``.

Filtering keeps rows by one :class:`~modeling_icc.curation.selection.KeepRule`, optionally
together with a rule on an image-text score column (CLIPScore). A threshold
decides row by row, so it streams. Top-k and top-fraction compare every row
with every other: on a ``Dataset`` the scores are computed first; on a streaming
``IterableDataset`` :func:`filter_by_icc` reads the stream twice (the first pass
scores and ranks, the returned stream attaches the scores by position and
keeps the chosen rows), so the stream must yield the same rows in the same
order each time it is iterated.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from datasets import Dataset, DatasetDict, Features, IterableDataset, LargeList, List, Value
from datasets import Sequence as SequenceFeature
from datasets import config as datasets_config
from datasets.utils.tqdm import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars
from tqdm.auto import tqdm

from ...scoring.load import named_model_id
from ...scoring.options import ScoringOptions, takes_scoring_options
from ...utils.errors import UserInputError
from ..columns import AGGREGATES, SCORE_COLUMN, aggregate_column, is_nested, language_column, model_column, to_pylist
from ..filter_options import FilterOptions, format_columns, takes_filter_options
from ..filter_plan import APART_SPLIT, KEPT_SPLIT, RAW_SCORE_COLUMN, FilterPlan, require_columns
from .passes import fit_in_memory, gather
from .scoring import DEFAULT_MAP_BATCH_SIZE, ScoreColumns, score_columns

#: Rows of a stream whose recorded model is checked before its stored scores are used.
STREAM_CHECK_ROWS = 1000

AnyDataset = Dataset | IterableDataset
Function = TypeVar("Function", bound=Callable[..., Any])


def _bars_on_a_terminal_only(function: Function) -> Function:
    """``datasets``' own bars (``map``, ``filter``) during ``function`` only when stderr is a terminal:
    a redirected stderr (a log, a pipe) gets no bar lines, as the scorers' and jobs' bars behave.
    ``HF_DATASETS_DISABLE_PROGRESS_BARS=0`` (bars asked for) is left alone."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        asked_for = datasets_config.HF_DATASETS_DISABLE_PROGRESS_BARS is False
        if sys.stderr.isatty() or asked_for or are_progress_bars_disabled():
            return function(*args, **kwargs)
        disable_progress_bars()
        try:
            return function(*args, **kwargs)
        finally:
            enable_progress_bars()

    return wrapper  # type: ignore[return-value]


def _features(score: ScoreColumns, base: Features | None) -> Features | None:
    """``base`` plus the types of the columns ``score`` adds (``None`` when the input's types are unknown)."""
    if base is None:
        return None
    kind = List(Value("float32")) if score.nested else Value("float32")
    features = Features(base.copy())
    features[score.output_column] = kind
    if score.raw_column:
        features[score.raw_column] = kind
    for how in score.aggregates:
        features[aggregate_column(score.output_column, how)] = Value("float32")
    features[model_column(score.output_column)] = Value("string")
    features[language_column(score.output_column)] = List(Value("string")) if score.nested else Value("string")
    return features


@dataclass(frozen=True)
class _Scoring:
    """How to score here: the shared options, and the processes ``map`` runs (``Dataset`` only)."""

    options: ScoringOptions
    map_batch_size: int
    num_proc: int | None

    def columns(
        self, output_column: str, nested: bool, raw_column: str | None, aggregates: Sequence[str]
    ) -> ScoreColumns:
        return score_columns(self.options, output_column, nested, raw_column, aggregates, workers=self.num_proc)

    def add(
        self, dataset: AnyDataset, column: str, output_column: str, aggregates: Sequence[str], raw_column: str | None
    ) -> AnyDataset:
        """``dataset`` (unformatted) with the score columns added by batched ``map``."""
        if self.num_proc is not None and isinstance(dataset, IterableDataset):
            raise UserInputError("num_proc works with datasets.Dataset; a streaming IterableDataset is scored lazily")
        function = self.columns(output_column, _column_is_nested(dataset, column), raw_column, aggregates)
        features = _features(function, dataset.features)
        batch_size = self.map_batch_size
        if isinstance(dataset, IterableDataset):
            return dataset.map(function, batched=True, batch_size=batch_size, input_columns=[column], features=features)
        if len(dataset) == 0:  # map() returns an empty Dataset as it is, without the new columns
            for name, feature in features.items():
                if name not in dataset.column_names:
                    dataset = dataset.add_column(name, [], feature=feature)
            return dataset
        return dataset.map(
            function,
            batched=True,
            batch_size=batch_size,
            input_columns=[column],
            with_rank=True,
            num_proc=self.num_proc,
            features=features,
            desc="icc scores",
        )


@_bars_on_a_terminal_only
@takes_scoring_options(model_after="column")
def add_icc_scores(
    dataset: AnyDataset,
    column: str | None = None,
    map_batch_size: int = DEFAULT_MAP_BATCH_SIZE,
    output_column: str = SCORE_COLUMN,
    *,
    scoring_options: ScoringOptions,
    aggregates: Sequence[str] = AGGREGATES,
    num_proc: int | None = None,
    raw_column: str | None = None,
) -> AnyDataset:
    """Add ``output_column`` with the ICC score (clipped to [0, 1]) of ``column``.

    ``model``: anything :func:`~modeling_icc.load_scorer` loads (``"mini"``, ``"lite"``, a Hub id, a local
    directory) or a ready scorer (default: ``load_scorer``'s, mini). ``map_batch_size`` rows go to the scorer
    per ``map`` call; ``batch_size`` caps rows per forward pass; ``fallback``, ``device``, ``dtype``,
    ``compile`` and ``tokenize_workers`` are those of
    :class:`~modeling_icc.scoring.options.ScoringOptions` (see :func:`~modeling_icc.load_scorer`).
    Blank, null or non-text captions score NaN. A column holding a list of captions per row (e.g. GBC
    node captions) gets one list of scores per row plus per-row
    ``{output_column}_min/_mean/_max`` (choose with ``aggregates``).
    ``raw_column`` also stores the unclipped model output. The scorer's ``model_id`` goes to
    :func:`~modeling_icc.curation.columns.model_column` (``icc_model``). ``num_proc`` (``Dataset``
    only) runs that many processes, one per GPU when GPUs exist. A streaming
    ``IterableDataset`` is scored lazily as it is iterated.
    """
    column = column or format_columns()[0]
    _check_dataset(dataset)
    require_columns(dataset.column_names, [column])
    scoring = _Scoring(scoring_options, map_batch_size, num_proc)
    plain, restore_format = _without_format(dataset)
    return restore_format(scoring.add(plain, column, output_column, aggregates, raw_column))


@_bars_on_a_terminal_only
@takes_filter_options
@takes_scoring_options()
def filter_by_icc(
    dataset: AnyDataset,
    options: FilterOptions,
    *,
    scoring_options: ScoringOptions,
    map_batch_size: int = DEFAULT_MAP_BATCH_SIZE,
    num_proc: int | None = None,
) -> AnyDataset | DatasetDict:
    """Keep rows (or node captions) by exactly one of ``threshold``, ``top_fraction``, ``top_k``.

    The filter options and their defaults are those of
    :class:`~modeling_icc.curation.filter_options.FilterOptions`. Scores come from ``score_column``
    when the dataset has it and either no ``model`` is named or its model column (``icc_model``)
    records that model; else they are computed first (see :func:`add_icc_scores`) and kept in the
    result. NaN scores are never kept; top-k ties are broken by row order.

    Nested columns (a list of captions per row): ``level="row"`` keeps rows by
    the per-row ``aggregate`` (``"min"``: every node concrete, ``"mean"``, ``"max"``);
    ``level="node"`` keeps every row but only its node captions that pass the rule,
    applied within each row, along with the same positions of ``node_columns``
    (lists aligned with the captions, e.g. node ids or types).

    ``clip`` adds a rule on ``clip_column`` (e.g. a CLIPScore column): rows must
    pass both. Each rule ranks the whole input, so ``top_fraction`` on both is an
    intersection of the two top sets, as in DataComp's combined baselines.

    ``other_languages="apart"`` returns a ``DatasetDict``: the kept rows as ``"kept"``, and as
    ``"other_languages"`` the rows whose caption is in a language the model does not read (a ``Dataset``
    only: a stream would be read and scored once per part).
    """
    plan = options.filter_plan()
    _check_dataset(dataset)
    scoring = _Scoring(scoring_options, map_batch_size, num_proc)
    dataset, restore_format = _without_format(dataset)
    plan = plan.bind_to_dataset(
        dataset.column_names,
        named_model_id(scoring_options.model),
        functools.partial(_values_in, dataset),
        functools.partial(_column_is_nested, dataset),
    )
    if isinstance(dataset, Dataset):
        kept, apart = _filter_dataset(dataset, plan, scoring)
        if apart is None:
            return restore_format(kept)
        return DatasetDict({KEPT_SPLIT: restore_format(kept), APART_SPLIT: restore_format(apart)})
    if plan.writes_apart:
        raise UserInputError(
            "other_languages='apart' splits a Dataset in two; a streaming IterableDataset would be read and scored "
            "once per part: pass other_languages='keep' and split the stream on its icc_language column"
        )
    if num_proc is not None:
        raise UserInputError("num_proc works with datasets.Dataset; a streaming IterableDataset is scored lazily")
    if plan.needs_all_rows:
        return restore_format(_filter_stream_two_passes(dataset, plan, scoring))
    scored = dataset if plan.has_scores else scoring.add(dataset, plan.column, plan.score_column, AGGREGATES, None)
    if plan.level == "node":
        scored = scored.map(plan.keep_nodes, batched=True, batch_size=map_batch_size)
    if plan.rules():
        scored = scored.filter(_RowFilter(plan), batched=True, batch_size=map_batch_size)
    return restore_format(scored)


@dataclass(frozen=True)
class _RowFilter:
    """Batched ``filter`` function for rules that decide row by row (thresholds)."""

    plan: FilterPlan

    def __call__(self, batch: Mapping[str, Any]) -> list[bool]:
        n_rows = len(next(iter(batch.values()))) if batch else 0
        return self.plan.mask(batch, n_rows).tolist()


@dataclass(frozen=True)
class _AttachByPosition:
    """Batched ``map`` (``with_indices``) adding columns computed in a first pass over the stream."""

    columns: dict[str, Any]

    def __call__(self, batch: Mapping[str, Any], indices: list[int]) -> dict[str, Any]:
        _check_positions(indices, len(next(iter(self.columns.values()))))
        return {name: [values[i] for i in indices] for name, values in self.columns.items()}


@dataclass(frozen=True)
class _KeepPositions:
    """Batched ``filter`` (``with_indices``) keeping the stream positions chosen in the first pass."""

    mask: np.ndarray

    def __call__(self, batch: Mapping[str, Any], indices: list[int]) -> list[bool]:
        _check_positions(indices, len(self.mask))
        return self.mask[np.asarray(indices, dtype=np.int64)].tolist()


def _check_positions(indices: Sequence[int], n_rows: int) -> None:
    if len(indices) and indices[-1] >= n_rows:
        raise UserInputError(
            f"the stream yielded more rows than its first pass ({n_rows}); top_k/top_fraction on a stream "
            "need it to yield the same rows in the same order every time"
        )


def _filter_dataset(dataset: Dataset, plan: FilterPlan, scoring: _Scoring) -> tuple[Dataset, Dataset | None]:
    """The kept rows, and those to write apart where the plan does (:meth:`FilterPlan.apart`)."""
    scored = dataset
    if not plan.has_scores:
        scored = scoring.add(dataset, plan.column, plan.score_column, AGGREGATES, plan.raw_column)
    if plan.level == "node":
        batch_size = scoring.map_batch_size
        scored = scored.map(plan.keep_nodes, batched=True, batch_size=batch_size, desc="icc node filter")
    arrow = scored.with_format("arrow")
    columns = gather([{name: arrow[name] for name in scored.column_names}], plan.mask_columns)
    mask = plan.mask(columns, len(scored), fit_in_memory(plan, columns))
    apart = plan.apart(columns)
    if RAW_SCORE_COLUMN in scored.column_names:
        scored = scored.remove_columns(RAW_SCORE_COLUMN)
    kept = scored if mask.all() else scored.select(np.flatnonzero(mask))
    return kept, None if apart is None else scored.select(np.flatnonzero(apart))


def _filter_stream_two_passes(dataset: IterableDataset, plan: FilterPlan, scoring: _Scoring) -> IterableDataset:
    """Pass 1 scores (or reads) and ranks the whole stream; the returned stream attaches and keeps by position."""
    batch_size = scoring.map_batch_size
    score = None
    if not plan.has_scores:
        score = scoring.columns(plan.score_column, plan.nested, plan.raw_column, AGGREGATES)
    wanted = plan.mask_columns | ({plan.column} if score is not None else set())
    known = dataset.column_names or [plan.column, *(rule.column for rule in (plan.other,) if rule is not None)]
    read = [name for name in known if name in wanted]
    produced: dict[str, list] = {}

    def first_pass() -> Iterator[dict[str, Any]]:
        # disable=None: no bar unless stderr is a terminal
        with tqdm(unit="row", desc="icc: first pass over the stream (scoring and ranking)", disable=None) as bar:
            for batch in dataset.select_columns(read).iter(batch_size=batch_size):
                columns = dict(batch)
                if score is not None:
                    new = score(batch[plan.column])
                    for name, values in new.items():
                        produced.setdefault(name, []).extend(to_pylist(values))
                    columns.update(new)
                yield columns
                bar.update(len(batch[read[0]]))

    gathered = gather(first_pass(), plan.mask_columns)
    n_rows = len(next(iter(gathered.values()))) if gathered else 0
    mask = plan.mask(gathered, n_rows, fit_in_memory(plan, gathered)) if n_rows else np.zeros(0, dtype=bool)
    streamed = dataset
    if score is not None:
        features = _features(score, dataset.features)
        streamed = streamed.map(
            _AttachByPosition(produced), with_indices=True, batched=True, batch_size=batch_size, features=features
        )
    if plan.level == "node":
        streamed = streamed.map(plan.keep_nodes, batched=True, batch_size=batch_size)
    streamed = streamed.filter(_KeepPositions(mask), with_indices=True, batched=True, batch_size=batch_size)
    return streamed.remove_columns(RAW_SCORE_COLUMN) if plan.raw_column else streamed


def _without_format(dataset: AnyDataset) -> tuple[AnyDataset, Callable[[AnyDataset], AnyDataset]]:
    """The dataset with plain (list) batches, and a function that puts the caller's output format back.

    Under some formats ``map`` hands over DataFrames or Arrow tables and refuses or
    replaces dict results, so the work runs unformatted and the result gets the
    caller's format (new columns included when the format lists columns).
    """
    if isinstance(dataset, IterableDataset):
        # IterableDataset exposes its format only through this attribute (datasets 3-5).
        format_type = getattr(getattr(dataset, "_formatting", None), "format_type", None)
        if format_type is None:
            return dataset, lambda result: result
        return dataset.with_format(None), lambda result: result.with_format(format_type)
    fmt = dataset.format
    all_columns = fmt["columns"] is None or set(fmt["columns"]) == set(dataset.column_names)
    if fmt["type"] is None and all_columns:
        return dataset, lambda result: result

    def restore(result: Dataset) -> Dataset:
        columns = None
        if not all_columns:
            added = [name for name in result.column_names if name not in dataset.column_names]
            columns = [name for name in fmt["columns"] if name in result.column_names] + added
        return result.with_format(
            fmt["type"], columns=columns, output_all_columns=fmt["output_all_columns"], **fmt["format_kwargs"]
        )

    return dataset.with_format(None), restore


def _check_dataset(dataset: object) -> None:
    if not isinstance(dataset, (Dataset, IterableDataset)):
        raise TypeError(
            f"expected a datasets.Dataset or IterableDataset, got {type(dataset).__name__} "
            "(for a DatasetDict, call this on each split)"
        )


def _values_in(dataset: AnyDataset, column: str) -> set[Any]:
    """The distinct values of ``column``: all of a ``Dataset``'s; a stream's first :data:`STREAM_CHECK_ROWS` rows'."""
    if isinstance(dataset, Dataset):
        return set(dataset.unique(column))
    return {row[column] for row in dataset.select_columns([column]).take(STREAM_CHECK_ROWS)}


def _column_is_nested(dataset: AnyDataset, column: str) -> bool:
    """From the declared feature type when known, else from the first rows of the stream."""
    features = dataset.features
    if features is not None and column in features:
        return isinstance(features[column], (List, LargeList, SequenceFeature))
    first_rows = [row[column] for row in dataset.select_columns([column]).take(100)]
    return is_nested(first_rows)
