"""The caption table every reader yields and every writer takes, and the column checks made on it.

Kept free of NumPy and Arrow imports until Arrow tables are built, so that it costs nothing to import.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...utils.errors import UserInputError

if TYPE_CHECKING:
    import pyarrow as pa

#: Column name used for captions read from plain text (one per line), and the default caption column.
TEXT_COLUMN = "caption"
#: Column names shown in an error message, at most.
_SHOWN_COLUMNS = 30


@dataclass
class CaptionTable:
    """Rows read from one file (or one chunk of it), with the caption column picked out.

    ``records`` holds the rows as dicts (text formats, webdataset tars) and
    ``arrow`` the table (Parquet); ``fieldnames`` every column seen so far;
    ``decode_errors`` counts input lines (or tar text members) whose text needed
    U+FFFD replacements (bytes that are not UTF-8, lone surrogates); ``source`` is
    the file read, which tar output copies samples from; ``bytes_read``, for a text
    file, how far into it this chunk ends (progress bars estimate the rows from it).
    """

    fmt: str
    column: str
    captions: list[Any]
    records: list[dict[str, Any]] | None = None
    arrow: pa.Table | None = None
    fieldnames: list[str] = field(default_factory=list)
    decode_errors: int = 0
    source: Path | None = None
    bytes_read: int | None = None

    def __len__(self) -> int:
        return len(self.captions)

    def values(self, name: str) -> list[Any]:
        """Every row's value of column ``name`` (``None`` where a record lacks it; none of an empty
        input without columns, such as an empty JSONL file)."""
        if name == self.column or not (self.fieldnames or self.captions):
            return self.captions
        if name not in self.fieldnames:
            raise UserInputError(missing_column_message(name, self.fieldnames, self.source or "input"))
        if self.arrow is not None:
            return self.arrow.column(name).to_pylist()
        return [record.get(name) for record in self.records]

    def with_values(self, columns: dict[str, list[Any]]) -> CaptionTable:
        """A copy with ``columns`` (one value per row) replacing or added to this table's."""
        fieldnames = self.fieldnames + [name for name in columns if name not in self.fieldnames]
        captions = columns.get(self.column, self.captions)
        if self.arrow is None:
            records = [
                {**record, **{name: values[row] for name, values in columns.items()}}
                for row, record in enumerate(self.records)
            ]
            return replace(self, captions=captions, records=records, fieldnames=fieldnames)
        import pyarrow as pa

        arrow = self.arrow
        for name, values in columns.items():
            if name in arrow.column_names:
                index = arrow.column_names.index(name)
                arrow = arrow.set_column(index, name, pa.array(values, type=arrow.schema.field(index).type))
            else:
                arrow = arrow.append_column(name, pa.array(values))
        return replace(self, captions=captions, arrow=arrow, records=None, fieldnames=fieldnames)

    def as_records(self) -> list[dict[str, Any]]:
        """The rows as dicts (converted once from Arrow for Parquet input)."""
        if self.records is None:
            self.records = self.arrow.to_pylist()
        return self.records


@dataclass(frozen=True)
class Fields:
    """Every column of an input whose rows carry different fields (JSONL, tar), in first-seen order.

    ``schema`` is the Arrow schema that holds all of them (for Parquet output).
    """

    names: list[str]
    schema: pa.Schema | None = None


def records_to_arrow(records: list[dict[str, Any]], names: list[str], schema: pa.Schema | None = None) -> pa.Table:
    """Dict rows as an Arrow table with the columns ``names`` (missing values are null)."""
    import pyarrow as pa

    columns = {name: [record.get(name) for record in records] for name in names}
    try:
        return pa.Table.from_pydict(columns, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
        raise _mixed_types(error) from None


def unify_schemas(schemas: list[pa.Schema]) -> pa.Schema:
    """One schema holding the columns of every one of ``schemas`` (types promoted where they differ)."""
    import pyarrow as pa

    try:
        return pa.unify_schemas(schemas, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
        raise _mixed_types(error) from None


def _mixed_types(error: Exception) -> UserInputError:
    return UserInputError(
        f"a column holds values of different types, which Parquet cannot store ({error}); "
        "write JSONL or CSV output instead"
    )


def missing_column_message(column: str, available: Sequence[object], name: object = None) -> str:
    """``NAME: no column 'x'; available columns: a, b`` (long lists and names shortened; no ``NAME:`` without one)."""
    shown = [_short(str(item)) for item in available[:_SHOWN_COLUMNS]]
    more = f" and {len(available) - _SHOWN_COLUMNS} more" if len(available) > _SHOWN_COLUMNS else ""
    where = "" if name is None else f"{name}: "
    return f"{where}no column {column!r}; available columns: {', '.join(shown) or '(none)'}{more}"


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
