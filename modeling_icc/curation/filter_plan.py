"""What a filter keeps, decided in one place for every engine.

Engines (a single file read in chunks, sharded jobs, ``datasets``, Ray Data) move data
and run in parallel; a :class:`FilterPlan` decides. It is checked once against the
input's columns (:meth:`FilterPlan.bind`), then applied to pieces of the input given
as mappings of column name to column (a chunk, a shard, a ``datasets`` batch, an Arrow
block):

- :meth:`FilterPlan.ranking_values` is what top-k / top-fraction rules order a piece's
  rows by; :meth:`FilterPlan.fit` turns those of every piece into one
  :class:`~modeling_icc.curation.selection.Cut` per piece and rule (:meth:`FilterPlan.fit_in_passes`:
  the same cuts from values read again per pass, from disk, with memory that does not grow with rows);
- :meth:`FilterPlan.mask` keeps the rows passing the ICC rule AND, when given, another
  column's rule (:class:`ColumnRule`: a CLIPScore, VSR's ``is_related`` ...);
- :meth:`FilterPlan.keep_nodes` keeps, within each row of a nested caption column (GBC
  node captions), the captions passing the rule, with the same positions of aligned columns.

What a user asks an engine to keep, with the defaults, is :class:`~.filter_options.FilterOptions`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

import numpy as np

from ..utils.errors import UserInputError
from .columns import (
    AGGREGATES,
    SCORE_COLUMN,
    aggregate,
    aggregate_column,
    language_column,
    model_column,
    stored_scores_usable,
    to_float_array,
    to_pylist,
)
from .cuts_in_passes import fit_cuts_in_passes
from .io.table import TEXT_COLUMN, missing_column_message
from .selection import Cut, KeepRule, fit_cuts, keep_mask

#: Temporary column with unclipped scores, used to rank rows clipped to the same score.
RAW_SCORE_COLUMN = "__icc_raw_score"

Level = Literal["row", "node"]
#: What a filter does with the rows whose caption is in a language the model does not read (NaN scores):
#: ``drop`` them as every NaN row, ``keep`` them whatever the rule (to score them with another model), or
#: write them ``apart`` from the kept rows (a second output: to score them with another model, kept separate).
OtherLanguages = Literal["drop", "keep", "apart"]
OTHER_LANGUAGES: tuple[str, ...] = get_args(OtherLanguages)
#: The names of what a ``datasets`` or Ray filter returns with ``other_languages="apart"``: the kept rows, and
#: those in a language the model does not read.
KEPT_SPLIT, APART_SPLIT = "kept", "other_languages"
#: Each ranking rule's cut for one piece: ``"icc"`` and ``"other"``.
Cuts = Mapping[str, Cut]


@dataclass(frozen=True)
class ColumnRule:
    """A rule on another column that rows must pass as well (a CLIPScore, a relatedness label or score)."""

    column: str
    rule: KeepRule

    def describe(self) -> str:
        return f"{self.column}: {self.rule.describe()}"


@dataclass(frozen=True)
class FilterPlan:
    """The ICC rule (on rows, or on node captions within rows; ``None``: keep all) and another column's rule.

    ``level="row"`` on a nested column (a list of captions per row) keeps rows by the
    per-row ``aggregate`` (``min``, ``mean`` or ``max``); ``level="node"`` keeps every row
    but only its captions passing the rule (within the row), along with the same positions
    of ``node_columns``. ``tie_break_column`` names unique row ids that break ties at a
    ranking cut where the engine has no global row order (Ray). ``nested`` and
    ``has_scores`` describe the input and are set by :meth:`bind`. An ICC ``threshold``
    outside [0, 1] is refused (scores are clipped to it); another column's may be any number.
    ``other_languages``: what a row rule does with rows in a language the model does not read (NaN score, a
    named language in :func:`~.columns.language_column`): ``drop`` (as any NaN row), ``keep``, or ``apart``
    (not kept; :meth:`apart` gives them to the engine to write on their own). Captions in lists (``nested``)
    are kept or dropped by their row's aggregate, so only ``drop`` applies to them.
    """

    rule: KeepRule | None = None
    column: str = TEXT_COLUMN
    score_column: str = SCORE_COLUMN
    level: Level = "row"
    aggregate: str | None = None
    node_columns: tuple[str, ...] = ()
    other: ColumnRule | None = None
    tie_break_column: str | None = None
    other_languages: OtherLanguages = "drop"
    nested: bool = False
    has_scores: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "node_columns", tuple(self.node_columns))
        if self.other_languages not in OTHER_LANGUAGES:
            raise UserInputError(
                f"other_languages must be one of {', '.join(OTHER_LANGUAGES)}, got {self.other_languages!r}"
            )
        if self.level not in ("row", "node"):
            raise UserInputError(f"level must be 'row' or 'node', got {self.level!r}")
        if self.aggregate is not None and self.aggregate not in AGGREGATES:
            raise UserInputError(f"aggregate must be one of {', '.join(AGGREGATES)}, got {self.aggregate!r}")
        if self.node_columns and self.level != "node":
            raise UserInputError("node_columns only apply with level='node'")
        if self.level == "node" and self.rule is None:
            raise UserInputError("level='node' needs a rule for the node captions")
        threshold = None if self.rule is None else self.rule.threshold
        if threshold is not None and not 0.0 <= threshold <= 1.0:  # it would keep every row or none, silently
            raise UserInputError(f"an ICC threshold must be in [0, 1], the range of the scores; got {threshold:g}")

    def bind(
        self, column_names: Sequence[str] | None, nested: bool, use_scores: bool = True, source: object = None
    ) -> FilterPlan:
        """This plan for an input with ``column_names`` (``None``: unknown, not checked), checked.

        ``nested``: whether the caption (or existing score) column holds a list per row.
        ``use_scores``: an existing ``score_column`` is used instead of scoring again.
        ``source`` names the input in error messages.
        """
        has_scores = use_scores and self.score_column in (column_names or ())
        needed = [self.score_column if has_scores else self.column]
        needed += [name for name in (self.other and self.other.column, self.tie_break_column) if name]
        require_columns(column_names, needed, source)
        if nested and self.level == "row" and self.aggregate is None and self.rule is not None:
            raise UserInputError(
                f"column {self.column!r} holds a list of captions per row: pass aggregate='min', 'mean' or 'max' "
                "(--aggregate) to keep whole rows, or level='node' (--level node) to keep individual node captions"
            )
        if nested and self.other_languages != "drop" and self.rule is not None:
            raise UserInputError(
                f"other_languages={self.other_languages!r} (--other-languages) applies to one caption per row; "
                f"column {self.column!r} holds a list of captions per row, kept or dropped by their scores"
            )
        if self.level == "node":
            if not nested:
                raise UserInputError(
                    f"level='node' needs a column with a list of captions per row; {self.column!r} is not"
                )
            require_columns(column_names, [self.column, *self.node_columns], source)
        return replace(self, nested=nested, has_scores=has_scores)

    def bind_to_dataset(
        self,
        column_names: Sequence[str] | None,
        model_id: str | None,
        stored_models: Callable[[str], set[Any]],
        is_nested: Callable[[str], bool],
    ) -> FilterPlan:
        """This plan for a dataset (``datasets``, Ray) that may hold scores already, checked.

        Its ``score_column`` is used when no model is named (``model_id`` is ``None``) or its
        model column records that model (``stored_models(column)``: the ids found in ``column``);
        ``is_nested(column)`` tells whether a column holds a list per row.
        """
        stored = stored_scores_usable(
            column_names,
            self.score_column,
            self.column,
            model_id,
            lambda: stored_models(model_column(self.score_column)),
        )
        return self.bind(column_names, is_nested(self.score_column if stored else self.column), use_scores=stored)

    @property
    def row_rule(self) -> KeepRule | None:
        return self.rule if self.level == "row" else None

    def rules(self) -> dict[str, KeepRule]:
        """The rules rows must pass, by name: ``"icc"`` (row level) and ``"other"``."""
        rules = {"icc": self.row_rule, "other": None if self.other is None else self.other.rule}
        return {name: rule for name, rule in rules.items() if rule is not None}

    def ranked(self) -> dict[str, KeepRule]:
        """The rules that rank rows against each other (top-k / top-fraction)."""
        return {name: rule for name, rule in self.rules().items() if rule.is_ranking}

    @property
    def needs_all_rows(self) -> bool:
        """Whether some rule ranks rows against each other, so every piece is seen before any is cut."""
        return bool(self.ranked())

    @property
    def raw_column(self) -> str | None:
        """Unclipped scores are kept while ranking flat scores we compute ourselves."""
        return RAW_SCORE_COLUMN if "icc" in self.ranked() and not self.nested and not self.has_scores else None

    @property
    def mask_columns(self) -> set[str]:
        """Columns :meth:`mask` and :meth:`ranking_values` may read."""
        names = {RAW_SCORE_COLUMN, *(name for name in (self.tie_break_column,) if name)}
        if self.other is not None:
            names.add(self.other.column)
        if self.row_rule is not None:
            names.add(self.score_column)
            if self.other_languages != "drop":
                names.add(language_column(self.score_column))
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

    def ranking_values(self, columns: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """What each ranking rule orders this piece's rows by."""
        return {name: self._values(name, columns) for name in self.ranked()}

    def fit(
        self, pieces: Sequence[Mapping[str, np.ndarray]], ids: Sequence[Any] | None = None, ordered: bool = True
    ) -> list[Cuts]:
        """Each piece's cuts, from the :meth:`ranking_values` of every piece in input order.

        Ties at a cut go to the first rows in piece then row order (``ordered``), to the
        smallest ``ids`` (the ``tie_break_column`` of each piece), or else are all kept.
        """
        by_rule = {
            name: fit_cuts([piece[name] for piece in pieces], rule, ids=ids, ordered=ordered)
            for name, rule in self.ranked().items()
        }
        return [{name: cuts[index] for name, cuts in by_rule.items()} for index in range(len(pieces))]

    def fit_in_passes(self, values: Mapping[str, Iterable[np.ndarray]]) -> list[Cuts]:
        """The cuts of :meth:`fit` (ties by input order) from each ranking rule's values, piece by piece.

        ``values[name]`` gives rule ``name``'s :meth:`ranking_values` of every piece in input
        order, again for each pass (arrays read back from disk, say): memory does not grow with rows.
        """
        if not self.needs_all_rows:
            raise ValueError("fit_in_passes is for plans with a top_k / top_fraction rule")
        by_rule = {name: fit_cuts_in_passes(values[name], rule) for name, rule in self.ranked().items()}
        sizes = {len(cuts) for cuts in by_rule.values()}
        if len(sizes) != 1:
            raise ValueError(f"the rules' ranking values come in different numbers of pieces: {sorted(sizes)}")
        return [{name: cuts[index] for name, cuts in by_rule.items()} for index in range(sizes.pop())]

    def mask(self, columns: Mapping[str, Any], n_rows: int, cuts: Cuts | None = None) -> np.ndarray:
        """Rows of a piece passing every rule.

        ``cuts`` (from :meth:`fit`) apply ranking rules fitted over the whole input;
        without them, ``columns`` is the whole input.
        """
        ids = columns.get(self.tie_break_column) if self.tie_break_column else None
        mask = np.ones(n_rows, dtype=bool)
        for name, rule in self.rules().items():
            values = self._values(name, columns)
            if not rule.is_ranking:
                mask &= keep_mask(values, rule)
                continue
            cut = fit_cuts([values], rule)[0] if cuts is None else cuts[name]
            mask &= cut.mask(values, ids)
        if self.other_languages == "keep" and self.row_rule is not None and not self.nested:
            mask |= self.unread(columns)
        return mask

    @property
    def writes_apart(self) -> bool:
        """Whether rows in a language the model does not read go to an output of their own (:meth:`apart`)."""
        return self.other_languages == "apart" and self.row_rule is not None and not self.nested

    def apart(self, columns: Mapping[str, Any]) -> np.ndarray | None:
        """Rows of a piece to write apart from the kept ones (:attr:`writes_apart`; else ``None``): those in a
        language the model does not read, which :meth:`mask` never keeps."""
        return self.unread(columns) if self.writes_apart else None

    def unread(self, columns: Mapping[str, Any]) -> np.ndarray:
        """Rows in a language the model does not read: a NaN score beside a named language (a blank caption's
        language is null). Without the language column (scores stored by an older version) there are none."""
        languages = columns.get(language_column(self.score_column))
        scores = to_float_array(columns[self.score_column])
        if languages is None:
            return np.zeros(len(scores), dtype=bool)
        named = np.fromiter((language is not None for language in to_pylist(languages)), bool, len(scores))
        return np.isnan(scores) & named

    def keep_nodes(self, columns: Mapping[str, Any]) -> dict[str, list]:
        """The caption, score and node columns of a batch with, in each row, only the captions passing the rule.

        Per-row aggregate columns present in ``columns`` are recomputed over the kept captions.
        """
        names = (self.column, self.score_column, *self.node_columns)
        lists = {name: to_pylist(columns[name]) for name in names}
        out: dict[str, list] = {name: [] for name in names}
        for index, row_scores in enumerate(float_rows(lists[self.score_column])):
            if row_scores is None:
                for name in names:
                    out[name].append(lists[name][index])
                continue
            keep = np.flatnonzero(keep_mask(row_scores, self.rule))
            for name in names:
                row = lists[name][index]
                if row is None or len(row) != len(row_scores):
                    raise UserInputError(
                        f"column {name!r} must hold one item per caption of {self.column!r} "
                        f"(a row has {0 if row is None else len(row)} items for {len(row_scores)} captions)"
                    )
                out[name].append([row[position] for position in keep])
        kept_scores = float_rows(out[self.score_column])
        for how in AGGREGATES:
            if aggregate_column(self.score_column, how) in columns:
                out[aggregate_column(self.score_column, how)] = aggregate(kept_scores, how)
        return out

    def describe(self) -> str:
        """The rules in words, for summaries."""
        words = "keep all rows" if self.rule is None else self.rule.describe()
        if self.level == "node":
            words = f"node captions: {words}"
        elif self.aggregate is not None:
            words = f"row {self.aggregate} of node scores: {words}"
        return words + (f" and {self.other.describe()}" if self.other is not None else "")

    def _values(self, name: str, columns: Mapping[str, Any]) -> np.ndarray:
        """What rule ``name`` compares: the other column's values, or ICC scores (raw when ranking, if present)."""
        if name == "other":
            return to_float_array(columns[self.other.column], self.other.column)
        raw = columns.get(RAW_SCORE_COLUMN) if self.row_rule.is_ranking else None
        return self.row_values(columns) if raw is None else to_float_array(raw)


def float_rows(values: Any) -> list[np.ndarray | None]:
    """A nested column as one float64 array per row (``None`` rows stay ``None``)."""
    return [None if row is None else np.asarray(row, dtype=np.float64) for row in to_pylist(values)]


def require_columns(available: Sequence[str] | None, names: Sequence[str], source: object = None) -> None:
    """Raise a one-line error naming the first missing column and the available ones (and ``source``)."""
    if available is None:
        return
    missing = [name for name in names if name not in available]
    if missing:
        raise UserInputError(missing_column_message(missing[0], list(available), source))
