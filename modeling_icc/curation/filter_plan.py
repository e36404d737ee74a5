"""What a filter reads and decides, shared by the ``datasets`` and Ray integrations.

A plan is validated once against the input's column names and then applied to
any mapping of column name to column (a ``datasets`` batch, a dict of Arrow
columns): :meth:`FilterPlan.mask` keeps rows passing the ICC rule and, when
given, the rule on an image-text score column (CLIPScore).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pyarrow.compute as pc

from ..utils.errors import UserInputError
from .columns import AGGREGATES, aggregate, aggregate_column, to_float_array, to_pylist
from .selection import KeepRule, keep_mask

#: Temporary column with unclipped scores, used to rank rows clipped to the same score.
RAW_SCORE_COLUMN = "__icc_raw_score"

Level = Literal["row", "node"]


@dataclass(frozen=True)
class FilterPlan:
    """One ICC rule (on rows, or on node captions within rows) and an optional CLIP rule."""

    rule: KeepRule
    column: str
    score_column: str
    nested: bool
    has_scores: bool
    level: Level
    aggregate: str | None
    node_columns: tuple[str, ...]
    clip: KeepRule | None
    clip_column: str

    @classmethod
    def make(
        cls,
        column_names: Sequence[str] | None,
        nested: bool,
        rule: KeepRule,
        column: str,
        score_column: str,
        level: str = "row",
        how: str | None = None,
        node_columns: Sequence[str] = (),
        clip: KeepRule | None = None,
        clip_column: str = "clip_score",
    ) -> FilterPlan:
        """Validate the options against ``column_names`` (``None``: unknown, not checked).

        ``nested``: whether the caption (or existing score) column holds a list per row.
        """
        if level not in ("row", "node"):
            raise UserInputError(f"level must be 'row' or 'node', got {level!r}")
        has_scores = score_column in (column_names or ())
        require_columns(column_names, [score_column if has_scores else column])
        if clip is not None:
            require_columns(column_names, [clip_column])
        if nested and level == "row" and how is None:
            raise UserInputError(
                f"column {column!r} holds a list of captions per row: pass aggregate='min', 'mean' or 'max' "
                "to keep whole rows, or level='node' to keep individual node captions"
            )
        if how is not None and how not in AGGREGATES:
            raise UserInputError(f"aggregate must be one of {', '.join(AGGREGATES)}, got {how!r}")
        if level == "node":
            if not nested:
                raise UserInputError(f"level='node' needs a column with a list of captions per row; {column!r} is not")
            require_columns(column_names, [column, *node_columns])
        elif node_columns:
            raise UserInputError("node_columns only apply with level='node'")
        return cls(rule, column, score_column, nested, has_scores, level, how, tuple(node_columns), clip, clip_column)

    @property
    def row_rule(self) -> KeepRule | None:
        return self.rule if self.level == "row" else None

    @property
    def needs_all_rows(self) -> bool:
        """Whether some rule ranks rows against each other (top-k / top-fraction)."""
        return any(rule is not None and rule.is_ranking for rule in (self.row_rule, self.clip))

    @property
    def raw_column(self) -> str | None:
        """Unclipped scores are kept while ranking flat scores we compute ourselves."""
        ranks = self.row_rule is not None and self.row_rule.is_ranking
        return RAW_SCORE_COLUMN if ranks and not self.nested and not self.has_scores else None

    @property
    def mask_columns(self) -> set[str]:
        """Columns :meth:`mask` may read."""
        names = {RAW_SCORE_COLUMN}
        if self.clip is not None:
            names.add(self.clip_column)
        if self.row_rule is not None:
            names.add(self.score_column)
            if self.aggregate is not None:
                names.add(aggregate_column(self.score_column, self.aggregate))
        return names

    def row_values(self, columns: Mapping[str, Any]) -> np.ndarray:
        """What the row rule compares: the score, or a nested row's aggregate."""
        if not self.nested:
            return to_float_array(columns[self.score_column])
        name = aggregate_column(self.score_column, self.aggregate)
        if name in columns:
            return to_float_array(columns[name])
        return aggregate(float_rows(columns[self.score_column]), self.aggregate)

    def icc_ranking(self, columns: Mapping[str, Any]) -> np.ndarray:
        """What top-k / top-fraction order rows by: raw scores when present, else :meth:`row_values`."""
        if RAW_SCORE_COLUMN in columns:
            return to_float_array(columns[RAW_SCORE_COLUMN])
        return self.row_values(columns)

    def mask(
        self,
        columns: Mapping[str, Any],
        n_rows: int,
        cuts: tuple[GlobalCut | None, GlobalCut | None] = (None, None),
    ) -> np.ndarray:
        """Rows passing the row rule and the CLIP rule, over everything in ``columns``.

        ``cuts`` (ICC, CLIP) replace ranking rules by where they cut the whole
        dataset, for engines that score in pieces and rank globally first.
        """
        mask = np.ones(n_rows, dtype=bool)
        if self.row_rule is not None:
            values, ranking = self.row_values(columns), self.icc_ranking(columns)
            mask &= _keep(self.row_rule, values, ranking, cuts[0], columns)
        if self.clip is not None:
            clip_values = to_float_array(columns[self.clip_column])
            mask &= _keep(self.clip, clip_values, clip_values, cuts[1], columns)
        return mask


@dataclass(frozen=True)
class GlobalCut:
    """Where a ranking rule cuts the whole dataset, applied to one piece of it.

    Keeps ``ranking >= value``; with ``last_tied_id`` set, rows equal to ``value``
    are kept only up to that id of ``tie_break_column`` (so exactly k rows pass).
    """

    value: float
    tie_break_column: str | None = None
    last_tied_id: Any = None

    def keeps(self, ranking: np.ndarray, columns: Mapping[str, Any]) -> np.ndarray:
        ranking = np.asarray(ranking, dtype=np.float64)
        mask = np.nan_to_num(ranking, nan=-np.inf) >= self.value
        tied = ranking == self.value
        if self.last_tied_id is not None and tied.any():
            beyond = pc.fill_null(pc.greater(columns[self.tie_break_column], self.last_tied_id), True)
            mask &= ~(tied & beyond.to_numpy())
        return mask


def _keep(
    rule: KeepRule, values: np.ndarray, ranking: np.ndarray, cut: GlobalCut | None, columns: Mapping[str, Any]
) -> np.ndarray:
    if cut is not None and rule.is_ranking:
        return cut.keeps(ranking, columns)
    return keep_mask(values, rule, ranking=ranking)


def float_rows(values: Any) -> list[np.ndarray | None]:
    """A nested column as one float64 array per row (``None`` rows stay ``None``)."""
    return [None if row is None else np.asarray(row, dtype=np.float64) for row in to_pylist(values)]


def require_columns(available: Sequence[str] | None, names: Sequence[str]) -> None:
    """Raise a one-line error naming the first missing column and the available ones."""
    if available is None:
        return
    missing = [name for name in names if name not in available]
    if missing:
        raise UserInputError(f"no column {missing[0]!r}; available columns: {', '.join(available) or '(none)'}")
