"""One piece of a file job (a chunk of a file, a whole shard), scored and cut by a FilterPlan.

What the passes (:mod:`.passes`) do to each piece: the raw scores of every caption (every node
caption of a nested column), the plan's ranking values, and what to write: the table (with only
the kept node captions at node level), its new columns, and the rows to keep.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...scoring.base import ConcretenessScorer
from ...scoring.languages import caption_languages, forget_languages
from ...scoring.progress import reporting_to
from ...utils.errors import UserInputError
from ..columns import (
    AGGREGATES,
    flat_captions,
    is_nested,
    language_column,
    model_column,
    per_row,
    score_columns,
    score_flat_stream,
)
from ..filter_plan import RAW_SCORE_COLUMN, Cuts, FilterPlan
from ..io.table import CaptionTable

#: Captions per scorer call: scorers that batch (mini, students) also report each finished batch,
#: so a job's bar moves several times a second; lite (about 27,000 captions a second on one core)
#: reports once per call.
PROGRESS_CHUNK = 16_384


@dataclass
class ScoredPiece:
    """What a job writes for one piece, and the clipped score of every caption it scored (for statistics)."""

    table: CaptionTable
    columns: dict[str, Any]
    keep: np.ndarray | None
    scores: np.ndarray
    #: The language code of every caption scored (flat, as ``scores``; ``None``: blank or non-text).
    languages: list[str | None]
    #: The rows to write apart (in a language the model does not read; ``None``: the plan writes none apart).
    apart: np.ndarray | None = None


def bind(
    plan: FilterPlan, table: CaptionTable, output_format: str, column_names: list[str] | None = None
) -> FilterPlan:
    """``plan`` checked against the first piece of an input (its columns, or all ``column_names``;
    whether its captions come in lists). An input with neither rows nor columns (an empty JSONL
    file) has no column to check: it gives an empty output, as an empty ``.txt`` file does."""
    nested = is_nested(table.captions)
    if nested and output_format == "txt":
        raise UserInputError(
            f"column {plan.column!r} holds a list of captions per row, which .txt output cannot hold; "
            "pass --output-format jsonl, csv, tsv or parquet"
        )
    if plan.aggregate is not None and not nested and len(table):
        raise UserInputError(
            f"column {plan.column!r} holds one caption per row: --aggregate applies to lists of captions (GBC)"
        )
    names = column_names or table.fieldnames or (None if len(table) == 0 else [])
    return plan.bind(names, nested, use_scores=False, source=table.source or "input")


def score_tables(
    scorer: ConcretenessScorer, plan: FilterPlan, tables: Iterable[CaptionTable], report: Callable[[int], Any]
) -> Iterator[tuple[CaptionTable, np.ndarray, list[str | None]]]:
    """Each table with the raw scores and the language of every caption, flat and in order, reporting progress
    as it goes: batch by batch where the scorer batches, and every caption of a part once its scores are back.

    The tables' captions go to the scorer as one stream of parts (:meth:`~ConcretenessScorer.score_stream`):
    a scorer on a GPU tokenizes and launches the next parts, reading ``tables`` ahead, while a table is
    written. Other scorers read one table at a time. A part's languages are read back as soon as its scores
    are, while the scorer's names of them are still remembered (a shard read whole is far larger than what is
    remembered), then forgotten."""
    reported = due = 0
    tables_read: deque[tuple[CaptionTable, int]] = deque()  # each table read with its number of parts
    parts_read: deque[list[Any]] = deque()  # the captions of each part given to the scorer, not yet scored

    def batch_done(count: int) -> None:  # distinct non-blank captions of a part: at most the part's length
        nonlocal reported
        reported += count
        report(count)

    def parts() -> Iterator[list[Any]]:
        for table in tables:
            captions = flat_captions(table.captions, plan.nested)
            starts = range(0, len(captions), PROGRESS_CHUNK) or range(1)  # a table without captions is one part
            tables_read.append((table, len(starts)))
            for start in starts:
                parts_read.append(captions[start : start + PROGRESS_CHUNK])
                yield parts_read[-1]

    done: list[np.ndarray] = []
    languages: list[str | None] = []
    with reporting_to(batch_done):
        for raw in score_flat_stream(scorer, parts()):
            done.append(raw)
            part = parts_read.popleft()
            languages += caption_languages(part)
            forget_languages(part)
            due += len(raw)
            if reported < due:  # what the batches did not report: blanks, repeats, junk, a scorer that does not batch
                report(due - reported)
                reported = due
            table, part_count = tables_read[0]
            if len(done) == part_count:
                tables_read.popleft()
                yield table, np.concatenate(done), languages
                done, languages = [], []


def caption_digest(table: CaptionTable) -> str:
    """A hash of the piece's captions, row by row: a job that reads its input twice (a top-k or top-fraction
    cut needs every score first) compares the second read's with the first's, so scores saved from the first
    pass are never pinned to other captions (an input rewritten in place, in another order, same row count)."""
    digest = hashlib.blake2b(digest_size=16)
    for caption in table.captions:
        digest.update(repr(caption).encode("utf-8", "surrogatepass"))
        digest.update(b"\x1e")
    return digest.hexdigest()


def ranking_values(plan: FilterPlan, table: CaptionTable, raw: np.ndarray) -> dict[str, np.ndarray]:
    return plan.ranking_values(_view(plan, table, raw))


def finish(
    plan: FilterPlan,
    table: CaptionTable,
    raw: np.ndarray,
    model_id: str,
    cuts: Cuts | None = None,
    languages: list[str | None] | None = None,
) -> ScoredPiece:
    """The piece to write; ``cuts`` apply ranking rules fitted over every piece (without them: this piece alone).

    Each caption's language (``languages``, flat as ``raw``, from :func:`score_tables` or a first pass; named
    here where not given: scores an older icc kept) beside its score."""
    captions = flat_captions(table.captions, plan.nested)
    if languages is None:
        languages = caption_languages(captions)
        forget_languages(captions)  # named: they need not stay in memory
    view = _view(plan, table, raw)
    if plan.level == "node":
        names = (plan.column, *plan.node_columns)
        kept = plan.keep_nodes({**view, **{name: table.values(name) for name in names}})
        table = table.with_values({name: kept.pop(name) for name in names})
        view.update(kept)
    view[language_column(plan.score_column)] = (
        _nested_languages(table.captions, captions, languages) if plan.nested else np.array(languages, dtype=object)
    )
    keep = plan.mask(view, len(table), cuts) if plan.rules() else None
    apart = plan.apart(view)
    hidden = {RAW_SCORE_COLUMN, *(rule.column for rule in (plan.other,) if rule is not None)}
    columns = {name: values for name, values in view.items() if name not in hidden}
    # An object array goes to Arrow without a Python step per row.
    columns[model_column(plan.score_column)] = np.full(len(table), model_id, dtype=object)
    name = language_column(plan.score_column)
    columns[name] = columns.pop(name)  # after the model's column, as the other engines write it
    return ScoredPiece(table, columns, keep, np.clip(raw, 0.0, 1.0), languages, apart)


def _nested_languages(
    rows: list[Any], captions: list[Any], languages: list[str | None]
) -> list[list[str | None] | None]:
    """One list of languages per row of ``rows`` (those a node rule kept), from the ``languages`` of every caption
    of the piece (``captions``, flat); ``None`` for a null row, a blank or non-text caption."""
    named = {
        caption: language for caption, language in zip(captions, languages, strict=True) if isinstance(caption, str)
    }
    return [None if row is None else [named.get(c) if isinstance(c, str) else None for c in row] for row in rows]


def _view(plan: FilterPlan, table: CaptionTable, raw: np.ndarray) -> dict[str, Any]:
    """What the plan reads of a piece: its scores (raw too, or per-row aggregates) and the other rule's column."""
    scores = per_row(raw, table.captions) if plan.nested else raw
    raw_column = None if plan.nested else RAW_SCORE_COLUMN
    view = score_columns(scores, plan.score_column, raw_column=raw_column, aggregates=AGGREGATES)
    if plan.other is not None:
        view[plan.other.column] = table.values(plan.other.column)
    return view
