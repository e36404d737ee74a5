"""Ray Data integration (extra ``[ray]``): score and filter a ``ray.data.Dataset`` across machines.

Scoring is a ``map_batches`` over an actor pool: each actor loads the scorer
once and scores Arrow batches; with GPUs in the cluster each actor takes one
GPU (Ray sets ``CUDA_VISIBLE_DEVICES``, so the default device is that GPU),
otherwise actors run on CPUs. Typical use reads and writes parquet::

    import ray
    from modeling_icc import ray as icc_ray

    ds = ray.data.read_parquet("s3://bucket/pool/")
    kept = icc_ray.filter_by_icc(ds, threshold=0.5)
    kept.write_parquet("s3://bucket/pool-concrete/", mode="error")

``mode="error"``: Ray's ``write_parquet`` appends by default, so a second run into the same folder would
double every row; ``"error"`` refuses a folder that exists (``"overwrite"`` replaces it).

Rows are kept by the same :class:`~modeling_icc.curation.filter_plan.FilterPlan` as in every
other engine. Top-k / top-fraction rank the whole dataset: the scores are materialized,
the ranking values are gathered on the driver (8 bytes per row) to fit the cut, and
each block is masked with it. Ray fixes no global row order to break ties by, so rows
tied exactly at the cutoff are all kept (slightly more than k can pass) unless
``tie_break_column`` names a column of unique row ids (DataComp's ``uid``, say): then
exactly k rows pass, ties going to the smallest ids. Nested caption columns (GBC node
captions) are kept by row aggregate or, with ``level="node"``, node by node.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import pyarrow as pa
import ray
import ray.data

from ...scoring.load import named_model_id
from ...scoring.options import ScoringOptions, takes_scoring_options
from ...scoring.threads import set_cpu_threads
from ..columns import AGGREGATES, SCORE_COLUMN, is_nested, language_column, model_column
from ..filter_options import FilterOptions, format_columns, takes_filter_options
from ..filter_plan import APART_SPLIT, KEPT_SPLIT, RAW_SCORE_COLUMN, Cuts, FilterPlan, require_columns
from .passes import fit_in_memory, gather
from .scoring import DEFAULT_MAP_BATCH_SIZE, ScoreColumns, score_columns


class ScoreBatches:
    """Ray Data callable class around the engines' scoring callable: one scorer per actor, Arrow batches in and out."""

    def __init__(self, score: ScoreColumns, column: str, threads: int) -> None:
        set_cpu_threads(threads)
        score.scorer()  # loaded once, as the actor starts
        self.score, self.column = score, column

    def __call__(self, batch: pa.Table) -> pa.Table:
        new = self.score(batch.column(self.column))
        for name, values in new.items():
            if name == model_column(self.score.output_column):
                kind = pa.string()
            elif name == language_column(self.score.output_column):
                kind = pa.list_(pa.string()) if self.score.nested else pa.string()
            else:
                kind = pa.list_(pa.float32()) if isinstance(values, list) else pa.float32()
            array = pa.array(values, type=kind)
            if name in batch.column_names:
                batch = batch.set_column(batch.column_names.index(name), name, array)
            else:
                batch = batch.append_column(name, array)
        return batch


@dataclass(frozen=True)
class _KeepRows:
    """``map_batches`` function keeping the rows (and, at node level, the node captions) a plan passes."""

    plan: FilterPlan
    cuts: Cuts | None

    def __call__(self, batch: pa.Table) -> pa.Table:
        if self.plan.level == "node":
            for name, values in self.plan.keep_nodes(_columns(batch)).items():
                index = batch.column_names.index(name)
                batch = batch.set_column(index, name, pa.array(values, type=batch.schema.field(name).type))
        if self.plan.rules():
            batch = batch.filter(pa.array(self.plan.mask(_columns(batch), batch.num_rows, self.cuts)))
        return batch


@dataclass(frozen=True)
class _ApartRows:
    """``map_batches`` function keeping the rows a plan writes apart (in a language the model does not read)."""

    plan: FilterPlan

    def __call__(self, batch: pa.Table) -> pa.Table:
        return batch.filter(pa.array(self.plan.apart(_columns(batch))))


def _columns(table: pa.Table) -> dict[str, pa.ChunkedArray]:
    return {name: table.column(name) for name in table.column_names}


@takes_scoring_options(model_after="column")
def add_icc_scores(
    dataset: ray.data.Dataset,
    column: str | None = None,
    *,
    scoring_options: ScoringOptions,
    output_column: str = SCORE_COLUMN,
    map_batch_size: int = DEFAULT_MAP_BATCH_SIZE,
    num_actors: int | None = None,
    num_gpus_per_actor: float | None = None,
    num_cpus_per_actor: float = 1,
    aggregates: Sequence[str] = AGGREGATES,
    raw_column: str | None = None,
) -> ray.data.Dataset:
    """Add ``output_column`` (clipped ICC score; lists plus per-row aggregates for nested columns).

    ``num_actors``: a fixed number of scorer replicas (default: an autoscaling pool
    of 1 up to one per GPU in the cluster, else up to one per ``num_cpus_per_actor``
    CPUs; a fixed pool that takes every CPU leaves none for reading, so keep it
    below). ``num_gpus_per_actor`` defaults to 1 when the cluster has GPUs, else 0.
    The other options are those of :func:`modeling_icc.add_icc_scores`.
    """
    column = column or format_columns()[0]
    nested = _column_is_nested(dataset, column)
    resources = ray.cluster_resources()
    gpus = float(resources.get("GPU", 0))
    if num_gpus_per_actor is None:
        num_gpus_per_actor = 1.0 if gpus else 0.0
    if num_actors is None:
        most = int(gpus // num_gpus_per_actor) if num_gpus_per_actor else 0
        most = most or max(1, int(resources.get("CPU", 1) // num_cpus_per_actor))
        pool = ray.data.ActorPoolStrategy(min_size=1, max_size=most)  # autoscaling leaves room for reads
    else:
        pool = ray.data.ActorPoolStrategy(size=num_actors)
    score = score_columns(scoring_options, output_column, nested, raw_column, aggregates)
    return dataset.map_batches(
        ScoreBatches,
        fn_constructor_args=(score, column, max(1, int(num_cpus_per_actor))),
        batch_size=map_batch_size,
        batch_format="pyarrow",
        compute=pool,
        num_gpus=num_gpus_per_actor or None,
        num_cpus=num_cpus_per_actor,
    )


@takes_filter_options
@takes_scoring_options()
def filter_by_icc(
    dataset: ray.data.Dataset,
    options: FilterOptions,
    *,
    scoring_options: ScoringOptions,
    tie_break_column: str | None = None,
    **scoring: Any,
) -> ray.data.Dataset | dict[str, ray.data.Dataset]:
    """Keep rows by one ICC rule (and optionally a ``clip`` rule on ``clip_column``).

    The filter options and their defaults are those of
    :class:`~modeling_icc.curation.filter_options.FilterOptions`. Uses ``score_column`` when present
    and no ``model`` is named or its ``icc_model`` column records that model, else scores first
    with :func:`add_icc_scores` (``scoring`` takes its options: ``num_actors``, ``map_batch_size``, ...). Nested
    columns take ``aggregate`` (``"min"``, ``"mean"`` or ``"max"``) to keep rows, or
    ``level="node"`` (with aligned ``node_columns``) to keep node captions within rows,
    as :func:`modeling_icc.filter_by_icc` does. Ranking rules keep every row tied at the
    cut unless ``tie_break_column`` names unique row ids; then exactly k rows pass, ties
    going to the smallest ids.

    ``other_languages="apart"`` returns a dict of two datasets: the kept rows as ``"kept"``, and as
    ``"other_languages"`` the rows whose caption is in a language the model does not read; the scores are
    materialized first, so that each part reads them without scoring again.
    """
    plan = options.filter_plan(tie_break_column).bind_to_dataset(
        dataset.schema().names,
        named_model_id(scoring_options.model),
        lambda name: set(dataset.unique(name)),
        functools.partial(_column_is_nested, dataset),
    )
    scored = dataset
    if not plan.has_scores:
        given = {option.name: getattr(scoring_options, option.name) for option in fields(ScoringOptions)}
        scored = add_icc_scores(
            dataset, plan.column, output_column=plan.score_column, raw_column=plan.raw_column, **given, **scoring
        )
    cuts = None
    if plan.needs_all_rows or plan.writes_apart:  # scored once, read once per pass or part
        scored = scored.materialize()
    if plan.needs_all_rows:
        cuts = _fit(scored, plan)
    kept = scored.map_batches(_KeepRows(plan, cuts), batch_format="pyarrow", batch_size=None)
    kept = kept.drop_columns([RAW_SCORE_COLUMN]) if plan.raw_column else kept
    if not plan.writes_apart:
        return kept
    apart = scored.map_batches(_ApartRows(plan), batch_format="pyarrow", batch_size=None)
    return {KEPT_SPLIT: kept, APART_SPLIT: apart.drop_columns([RAW_SCORE_COLUMN]) if plan.raw_column else apart}


def _fit(scored: ray.data.Dataset, plan: FilterPlan) -> Cuts | None:
    """The ranking rules' cuts over the whole dataset, from its ranking values gathered on the driver (Ray fixes
    no row order: ties are kept, or broken by the plan's tie-break ids)."""
    schema = scored.schema()
    if schema is None:  # Ray knows no schema only when there are no rows: nothing to rank or keep
        return None
    needed = [name for name in schema.names if name in plan.mask_columns]
    batches = scored.select_columns(needed).iter_batches(batch_format="pyarrow", batch_size=None)
    columns = gather((_columns(batch) for batch in batches), plan.mask_columns)
    return fit_in_memory(plan, columns or {name: pa.array([], pa.float32()) for name in needed}, ordered=False)


def _column_is_nested(dataset: ray.data.Dataset, column: str) -> bool:
    schema = dataset.schema()
    require_columns(None if schema is None else schema.names, [column])
    if schema is not None:
        kind = dict(zip(schema.names, schema.types, strict=True))[column]
        if isinstance(kind, pa.DataType):
            return pa.types.is_list(kind) or pa.types.is_large_list(kind)
    return is_nested([row.get(column) for row in dataset.take(100)])
