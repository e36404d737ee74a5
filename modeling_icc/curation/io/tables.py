"""Caption tables: ``.txt``, ``.jsonl``, ``.csv``/``.tsv``, ``.parquet`` and webdataset ``.tar``.

The names callers use, in one place: formats (:mod:`.formats`), tables read whole or
in chunks (by each format's reader), and written whole or in chunks to files that appear
only when complete (:mod:`.writers`, :mod:`.outputs`). Bad text never stops a job: bytes that
are not UTF-8 and lone surrogates become U+FFFD and are counted (:mod:`.text`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import closing
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

from ...utils.errors import UserInputError
from ...utils.locations import is_remote
from .formats import FORMATS, format_named, infer_format, open_writer
from .outputs import atomic_output
from .readers import open_input
from .table import TEXT_COLUMN, CaptionTable, Fields, missing_column_message, records_to_arrow, unify_schemas
from .writers import NewColumns

if TYPE_CHECKING:
    import pyarrow as pa

#: Rows read, scored and written at a time by single-file jobs.
CHUNK_ROWS = 32_768

Source = str | os.PathLike | BinaryIO

__all__ = [
    "CHUNK_ROWS",
    "FORMATS",
    "TEXT_COLUMN",
    "CaptionTable",
    "atomic_output",
    "infer_format",
    "iter_tables",
    "read_table",
    "scan_fields",
    "write_table",
]


def iter_tables(source: Source, fmt: str, column: str = TEXT_COLUMN, rows: int = CHUNK_ROWS) -> Iterator[CaptionTable]:
    """``source`` (a path or a binary stream such as stdin) in tables of at most ``rows`` rows (``fmt``'s reader).

    Always yields at least one table (empty for an empty input) so that callers see the
    columns; the caption column is checked against the first one.
    """
    opened = open_input(source, fmt)
    with closing(format_named(fmt).read(opened, column, rows)) as chunks:
        first = True
        for table in chunks:
            table.source = opened.path
            if first and (table.fmt == "parquet" or len(table)) and table.column not in table.fieldnames:
                raise UserInputError(missing_column_message(table.column, table.fieldnames, opened.name))
            first = False
            yield table
            del table  # not held while the next one is read


def read_table(source: Source, fmt: str, column: str = TEXT_COLUMN) -> CaptionTable:
    """The whole of ``source`` as one table (for inputs known to fit in memory, e.g. one shard)."""
    return _concat(list(iter_tables(source, fmt, column)))


def _concat(tables: list[CaptionTable]) -> CaptionTable:
    first = tables[0]
    whole = CaptionTable(
        first.fmt,
        first.column,
        [caption for table in tables for caption in table.captions],
        fieldnames=tables[-1].fieldnames,
        decode_errors=sum(table.decode_errors for table in tables),
        source=first.source,
    )
    if first.arrow is not None:
        import pyarrow as pa

        whole.arrow = pa.concat_tables([table.arrow for table in tables])
    else:
        whole.records = [record for table in tables for record in table.records]
    return whole


def scan_fields(source: Source, fmt: str, column: str, arrow_schema: bool) -> Fields:
    """A first pass over a JSONL or tar input: every field name, and (``arrow_schema``) one schema for all rows."""
    names: dict[str, None] = {}
    parts: list[pa.Schema] = []
    for table in iter_tables(source, fmt, column):
        names.update(dict.fromkeys(table.fieldnames))
        if arrow_schema and len(table):
            parts.append(records_to_arrow(table.records, list(names)).schema)
    if not arrow_schema:
        return Fields(list(names))
    import pyarrow as pa

    schema = unify_schemas(parts) if parts else pa.schema([])
    return Fields(
        list(names), pa.schema([schema.field(n) if n in schema.names else pa.field(n, pa.null()) for n in names])
    )


def write_table(
    table: CaptionTable,
    destination: str | os.PathLike | BinaryIO,
    fmt: str,
    new_columns: NewColumns,
    keep: np.ndarray | None = None,
    *,
    before_rename: Callable[[], None] | None = None,
) -> None:
    """Write ``table`` plus ``new_columns``, keeping only rows where ``keep`` is true.

    Files are written to a temporary name and renamed, so a crash never leaves
    a half-written output behind (``before_rename``: see :func:`~.outputs.atomic_output`).
    """
    rows = np.arange(len(table)) if keep is None else np.flatnonzero(keep)
    if isinstance(destination, (str, os.PathLike)) or is_remote(destination):
        with atomic_output(destination, before_rename=before_rename) as stream:
            _write_whole(table, stream, fmt, new_columns, rows)
    else:
        _write_whole(table, destination, fmt, new_columns, rows)


def _write_whole(table: CaptionTable, stream: BinaryIO, fmt: str, new_columns: NewColumns, rows: np.ndarray) -> None:
    with open_writer(stream, fmt) as writer:
        writer.write(table, new_columns, rows)
