"""How the batch engines (``datasets``, Ray) score: one scoring callable over the job spec's scoring options.

``add_icc_scores`` and ``filter_by_icc`` of both engines take the fields of
:class:`~modeling_icc.scoring.options.ScoringOptions` as keywords, with its defaults
(:func:`~modeling_icc.scoring.options.takes_scoring_options` builds their signatures), plus
``map_batch_size``, rows per engine batch (:data:`DEFAULT_MAP_BATCH_SIZE`).
:class:`ScoreColumns` is what each engine runs on a batch of captions (a ``datasets`` ``map``
function, wrapped by Ray's actor class): each worker process loads its scorer once
(:meth:`ScoringOptions.load` with ``cache=True``) and returns the new columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...scoring.base import ConcretenessScorer
from ...scoring.threads import set_cpu_threads
from ...utils.errors import UserInputError
from ..columns import AGGREGATES, scored_columns
from ..job_spec import ScoringOptions
from .workers import device_for_rank, threads_per_worker

#: Rows per engine batch (a ``map`` call, a Ray batch): large enough for length-sorted batching inside the
#: scorer to pay off. Not ``batch_size``, which is rows per forward pass (:class:`ScoringOptions`).
DEFAULT_MAP_BATCH_SIZE = 4096


def score_columns(
    options: ScoringOptions,
    output_column: str,
    nested: bool,
    raw_column: str | None = None,
    aggregates: Sequence[str] = (),
    workers: int | None = None,
) -> ScoreColumns:
    """The scoring callable writing ``output_column`` (and ``raw_column``, per-row ``aggregates`` when nested)."""
    unknown = [how for how in aggregates if how not in AGGREGATES]
    if unknown:
        raise UserInputError(f"aggregates must be among {', '.join(AGGREGATES)}, got {unknown[0]!r}")
    options.check()
    return ScoreColumns(options, output_column, nested, raw_column, tuple(aggregates) if nested else (), workers)


@dataclass(frozen=True)
class ScoreColumns:
    """New score columns for a batch of the caption column.

    ``workers``: processes scoring at once on this machine (``datasets``' ``num_proc``): with several,
    each runs torch with its share of the cores, and on GPUs also tokenizes with that share.
    """

    options: ScoringOptions
    output_column: str
    nested: bool
    raw_column: str | None = None
    aggregates: tuple[str, ...] = ()
    workers: int | None = None

    def scorer(self, rank: int | None = None) -> ConcretenessScorer:
        """This process's scorer (loaded once); worker ``rank`` goes to its GPU (see ``device_for_rank``)."""
        several = bool(self.workers and self.workers > 1)
        if several:
            set_cpu_threads(threads_per_worker(self.workers))
        device = device_for_rank(self.options.device, rank)
        tokenize_workers = self.options.tokenize_workers
        if tokenize_workers is None and several and str(device).startswith("cuda"):
            tokenize_workers = threads_per_worker(self.workers)  # each GPU's worker tokenizes with its share
        return replace(self.options, device=device, tokenize_workers=tokenize_workers).load(cache=True)

    def __call__(self, values: Any, rank: int | None = None) -> dict[str, Any]:
        return scored_columns(
            self.scorer(rank),
            values,
            self.output_column,
            nested=self.nested,
            raw_column=self.raw_column,
            aggregates=self.aggregates,
        )
