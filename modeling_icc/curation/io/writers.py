"""Each format's writer: caption tables written chunk by chunk, with new columns, to a binary stream.

What each format does with values it cannot hold as such:

- ``.txt`` (``score<TAB>caption`` per line): a line break inside a caption is written as
  the two characters ``\\n`` (``\\r`` likewise), so one row stays one line; counted.
- JSONL and CSV/TSV: binary values (e.g. a Parquet ``jpg`` column) are written as
  base64 text (standard alphabet, padded); dates and times in ISO 8601; decimals as
  text. CSV cells holding lists or objects are written as JSON.
- Parquet keeps every Arrow type; tar copies samples byte for byte.
"""

from __future__ import annotations

import base64
import csv
import datetime
import decimal
import io
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from ...utils.errors import UserInputError
from . import webdataset as webdataset_tar
from .table import CaptionTable, Fields, records_to_arrow

if TYPE_CHECKING:
    import pyarrow as pa

NewColumns = dict[str, Sequence[Any]]


class TableWriter(ABC):
    """Writes chunks of one table in one format to a binary stream; ``close()`` (or leaving a
    ``with`` block) ends the format and leaves the stream open.

    ``fields`` names every column of the input up front (needed by CSV headers and
    Parquet schemas when rows carry different fields); by default the first chunk's.
    """

    def __init__(self, stream: BinaryIO, fields: Fields | None = None) -> None:
        self.stream, self.fields = stream, fields
        #: Rows whose caption had a line break written as ``\\n`` (``.txt`` output).
        self.escaped_line_breaks = 0
        #: Columns whose binary values were written as base64 text.
        self.base64_columns: dict[str, None] = {}

    @abstractmethod
    def write(self, table: CaptionTable, new_columns: NewColumns, rows: np.ndarray) -> None:
        """Write the rows at positions ``rows`` of ``table``, each with its values of ``new_columns``."""

    def close(self) -> None:
        self.stream.flush()

    def __enter__(self) -> TableWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def note_binary_columns(self, table: CaptionTable) -> None:
        """Record the columns whose binary values text formats write as base64 (Arrow input only)."""
        if table.arrow is not None:
            for arrow_field in table.arrow.schema:
                if _holds_binary(arrow_field.type):
                    self.base64_columns[arrow_field.name] = None


class _TextWriter(TableWriter):
    def __init__(self, stream: BinaryIO, fields: Fields | None = None) -> None:
        super().__init__(stream, fields)
        self.text = io.TextIOWrapper(stream, encoding="utf-8", newline="", write_through=True)

    def close(self) -> None:
        self.text.flush()
        self.text.detach()
        super().close()


class TxtWriter(_TextWriter):
    """``score<TAB>caption`` per row (the first new column is the score)."""

    def write(self, table: CaptionTable, new_columns: NewColumns, rows: np.ndarray) -> None:
        scores = next(iter(new_columns.values()))
        lines = []
        for row in rows:
            caption = table.captions[row]
            caption = "" if caption is None else str(caption)
            if "\n" in caption or "\r" in caption:
                caption = caption.replace("\r", "\\r").replace("\n", "\\n")
                self.escaped_line_breaks += 1
            lines.append(f"{_cell(scores[row]) or 'nan'}\t{caption}\n")
        self.text.write("".join(lines))


class JsonlWriter(_TextWriter):
    def write(self, table: CaptionTable, new_columns: NewColumns, rows: np.ndarray) -> None:
        self.note_binary_columns(table)
        records = table.as_records()
        lines = []
        for row in rows:
            record = dict(records[row])
            record.update({name: _json_value(values[row]) for name, values in new_columns.items()})
            lines.append(json.dumps(record, ensure_ascii=False, default=_plain) + "\n")
        self.text.write("".join(lines))


class CsvWriter(_TextWriter):
    def __init__(self, stream: BinaryIO, fields: Fields | None = None, delimiter: str = ",") -> None:
        super().__init__(stream, fields)
        self.delimiter = delimiter
        self.writer: csv.DictWriter | None = None

    def write(self, table: CaptionTable, new_columns: NewColumns, rows: np.ndarray) -> None:
        if self.writer is None:
            names = self.fields.names if self.fields else table.fieldnames
            self.writer = csv.DictWriter(
                self.text,
                fieldnames=[name for name in names if name not in new_columns] + list(new_columns),
                delimiter=self.delimiter,
                lineterminator="\n",
            )
            self.writer.writeheader()
        self.note_binary_columns(table)
        records = table.as_records()
        for row in rows:
            record = {name: _csv_value(value) for name, value in records[row].items()}
            record.update({name: _cell(values[row]) for name, values in new_columns.items()})
            self.writer.writerow(record)


class ParquetTableWriter(TableWriter):
    """One Parquet file; the schema is fixed by the first chunk (or by ``fields``)."""

    def __init__(self, stream: BinaryIO, fields: Fields | None = None) -> None:
        super().__init__(stream, fields)
        self.writer: Any = None
        self.schema: pa.Schema | None = None

    def write(self, table: CaptionTable, new_columns: NewColumns, rows: np.ndarray) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if table.arrow is not None:
            base = table.arrow
        else:
            schema = self.fields.schema if self.fields and self.fields.schema is not None else None
            names = schema.names if schema is not None else table.fieldnames
            base = records_to_arrow(table.as_records(), names, schema)
        if len(rows) != base.num_rows:  # every row kept: nothing to select
            base = base.take(pa.array(rows, type=pa.int64()))
        for name, values in new_columns.items():
            column = _arrow_column(values, rows)
            if name in base.column_names:
                base = base.set_column(base.column_names.index(name), name, column)
            else:
                base = base.append_column(name, column)
        if self.writer is None:
            self.schema = base.schema
            self.writer = pq.ParquetWriter(self.stream, self.schema)
        # Only columns of another type are cast: Arrow fails to cast some nested structs (GBC
        # vertices) to their own type.
        types = zip(base.columns, self.schema.types, strict=True)
        columns = [column if column.type == kind else column.cast(kind) for column, kind in types]
        self.writer.write_table(pa.Table.from_arrays(columns, schema=self.schema))

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        super().close()


class TarWriter(TableWriter):
    """Copies the kept samples of the tar the chunks were read from (see :func:`~.webdataset.copy_samples`)."""

    def __init__(self, stream: BinaryIO, fields: Fields | None = None) -> None:
        super().__init__(stream, fields)
        self.open = ExitStack()
        self.copy: webdataset_tar.CopySamples | None = None

    def write(self, table: CaptionTable, new_columns: NewColumns, rows: np.ndarray) -> None:
        if table.fmt != "tar" or table.source is None:
            raise UserInputError("tar output needs a webdataset tar input (samples are copied from it)")
        if self.copy is None:
            self.copy = self.open.enter_context(webdataset_tar.copy_samples(table.source, self.stream))
        self.copy(len(table), rows, lambda row: {name: _json_value(v[row]) for name, v in new_columns.items()})

    def close(self) -> None:
        self.open.close()
        super().close()


def _arrow_column(values: Sequence[Any], rows: np.ndarray) -> pa.Array:
    import pyarrow as pa

    column = pa.array(values[rows]) if isinstance(values, np.ndarray) else pa.array([values[row] for row in rows])
    return column.cast(pa.string()) if pa.types.is_null(column.type) else column  # no rows, or only None


def _plain(value: Any) -> Any:
    """A JSON-ready form of values ``json`` cannot write (``json.dumps(default=...)``)."""
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} values cannot be written as JSON")


def _holds_binary(arrow_type: pa.DataType) -> bool:
    import pyarrow as pa

    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return True
    if pa.types.is_fixed_size_binary(arrow_type) or pa.types.is_binary_view(arrow_type):
        return True
    return any(_holds_binary(arrow_type.field(i).type) for i in range(arrow_type.num_fields))


def _csv_value(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, datetime.date, datetime.time, decimal.Decimal)):
        return _plain(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, default=_plain)
    return value


def _json_value(value: Any) -> Any:
    if isinstance(value, (np.floating, float)):
        return None if np.isnan(value) else round(float(value), 6)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list):  # the scores of a row's list of captions
        return [_json_value(item) for item in value]
    return value


def _cell(value: Any) -> str:
    if isinstance(value, (np.floating, float)):
        return "" if np.isnan(value) else f"{float(value):.6f}"
    if isinstance(value, list):
        return json.dumps(_json_value(value))
    return "" if value is None else str(value)
