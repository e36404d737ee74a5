"""What to keep, as every engine takes it: the options of a filter and their defaults, defined once.

:class:`FilterOptions` is the filter part of a :class:`~.job_spec.JobSpec`: ``filter_by_icc`` of
``datasets`` and of Ray take its fields as their keywords (:func:`takes_filter_options` builds their
signatures from it), single-file and sharded jobs take it in the spec, and :meth:`FilterOptions.plan`
turns it into the :class:`~.filter_plan.FilterPlan` every engine applies. See docs/curation.md,
"Adding an option".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..utils.option_keywords import takes_options
from .columns import SCORE_COLUMN
from .filter_plan import ColumnRule, FilterPlan, Level, OtherLanguages
from .io.formats import FORMAT_COLUMNS
from .io.table import TEXT_COLUMN
from .selection import KeepRule

#: The other rule's column unless told another: a CLIPScore column's usual name.
CLIP_COLUMN = "clip_score"


@dataclass(frozen=True)
class FilterOptions:
    """The options of a filter with their defaults.

    Exactly one of ``threshold``, ``top_fraction`` and ``top_k`` is given to filter (a job given none
    scores without filtering); ``clip`` is a rule on ``clip_column``; ``level``, ``aggregate`` and
    ``node_columns`` are those of :class:`FilterPlan`. ``column`` ``None`` is the input's caption column
    (``caption``; a GBC graph's node captions) and ``node_columns`` ``None`` its aligned columns at node level.
    ``other_languages``: what the ICC rule does with captions in a language the model does not read (NaN):
    ``drop`` or ``keep`` them (:class:`FilterPlan`).
    """

    threshold: float | None = None
    top_fraction: float | None = None
    top_k: int | None = None
    column: str | None = None
    score_column: str = SCORE_COLUMN
    level: Level = FilterPlan.level
    aggregate: str | None = None
    node_columns: Sequence[str] | None = None
    clip: KeepRule | None = None
    clip_column: str = CLIP_COLUMN
    other_languages: OtherLanguages = FilterPlan.other_languages

    @property
    def rule(self) -> KeepRule | None:
        """The ICC rule, checked; ``None`` when no rule is given."""
        given = (self.threshold, self.top_fraction, self.top_k)
        return None if all(value is None for value in given) else KeepRule(*given)

    def plan(self, tie_break_column: str | None = None, *, input_format: str | None = None) -> FilterPlan:
        """The plan of these options for ``input_format`` (its caption column; ``None``: a table's).

        ``tie_break_column``: unique row ids for engines without a row order (Ray). Only a job that
        scores every row plans without a rule (:attr:`rule` ``None``); a filter engine refuses that.
        """
        column, node_columns = format_columns(input_format)
        if self.node_columns is not None:
            node_columns = tuple(self.node_columns)
        elif self.level != "node":
            node_columns = ()
        other = None if self.clip is None else ColumnRule(self.clip_column, self.clip)
        return FilterPlan(
            self.rule,
            self.column or column,
            self.score_column,
            self.level,
            self.aggregate,
            node_columns,
            other,
            tie_break_column,
            self.other_languages,
        )

    def filter_plan(self, tie_break_column: str | None = None) -> FilterPlan:
        """:meth:`plan` for an engine that filters: exactly one rule is required."""
        KeepRule(self.threshold, self.top_fraction, self.top_k)  # one line unless exactly one rule is given
        return self.plan(tie_break_column)


def format_columns(input_format: str | None = None) -> tuple[str, tuple[str, ...]]:
    """The caption column an input of ``input_format`` is read from unless told another, and the columns
    aligned with it at node level (a GBC graph's); ``None``: a table's, :data:`TEXT_COLUMN`."""
    return FORMAT_COLUMNS.get(input_format or "", (TEXT_COLUMN, ()))


#: The options a caller may also give by position, after the dataset (as ``filter_by_icc(dataset, 0.5)``).
RULE_OPTIONS = ("threshold", "top_fraction", "top_k")


#: Gives an engine ``engine(dataset, options, *, ...)`` the fields of :class:`FilterOptions` as keywords,
#: :data:`RULE_OPTIONS` also by position (see :func:`~modeling_icc.utils.option_keywords.takes_options`).
takes_filter_options = takes_options(FilterOptions, "options", positional=RULE_OPTIONS)
