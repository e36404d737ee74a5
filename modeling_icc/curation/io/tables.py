"""Reading and writing caption tables: ``.txt``, ``.jsonl``, ``.csv``/``.tsv`` and ``.parquet``.

Every other column of the input is carried through unchanged: CSV cells stay
text, JSON objects keep their fields, Parquet keeps its Arrow schema. Bytes
that are not UTF-8 are decoded with U+FFFD replacements and counted, so a
scoring job never dies on one bad line.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tarfile
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ...utils.errors import UserInputError
from . import webdataset as webdataset_tar

FORMATS = ("txt", "jsonl", "csv", "tsv", "parquet", "tar")
_EXTENSIONS = {
    ".txt": "txt",
    ".jsonl": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".tar": "tar",
}
#: Column name used for captions read from plain text (one per line).
TEXT_COLUMN = "caption"


def infer_format(path: str | os.PathLike, explicit: str | None = None) -> str:
    """The table format from ``explicit`` or the file extension."""
    if explicit:
        if explicit not in FORMATS:
            raise UserInputError(f"unknown format {explicit!r}; choose one of {', '.join(FORMATS)}")
        return explicit
    suffix = Path(path).suffix.lower()
    if suffix not in _EXTENSIONS:
        raise UserInputError(
            f"cannot tell the format of {str(path)!r} from its extension; use one of "
            f"{', '.join(sorted(_EXTENSIONS))} or pass --format"
        )
    return _EXTENSIONS[suffix]


@dataclass
class CaptionTable:
    """Rows read from one file, with the caption column picked out.

    ``records`` holds the rows as dicts (text formats, webdataset tars) and
    ``arrow`` the table (Parquet); ``decode_errors`` counts input lines (or tar
    text members) that were not valid UTF-8; ``source`` is the file read, which
    tar output copies samples from.
    """

    fmt: str
    column: str
    captions: list[Any]
    records: list[dict[str, Any]] | None = None
    arrow: pa.Table | None = None
    fieldnames: list[str] = field(default_factory=list)
    decode_errors: int = 0
    source: Path | None = None

    def __len__(self) -> int:
        return len(self.captions)

    def values(self, name: str) -> list[Any]:
        """Every row's value of column ``name`` (``None`` where a record lacks it)."""
        if name == self.column:
            return self.captions
        if name not in self.fieldnames:
            raise UserInputError(_missing_column_message(name, self.fieldnames, self.source or "input"))
        if self.arrow is not None:
            return self.arrow.column(name).to_pylist()
        return [record.get(name) for record in self.records]


def decode_lines(data: bytes) -> tuple[str, int]:
    """UTF-8 text of ``data`` (BOM dropped) and how many lines needed replacement characters."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        bad = 0
        for line in data.split(b"\n"):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                bad += 1
        return data.decode("utf-8", errors="replace"), bad


def read_table(source: str | os.PathLike | BinaryIO, fmt: str, column: str = TEXT_COLUMN) -> CaptionTable:
    """Read a caption table; ``source`` is a path or a binary stream (e.g. stdin)."""
    if isinstance(source, (str, os.PathLike)) and not Path(source).is_file():
        raise UserInputError(f"input file not found: {os.fspath(source)}")
    table = _read_table(source, fmt, column)
    if isinstance(source, (str, os.PathLike)):
        table.source = Path(source)
    return table


def _read_table(source: str | os.PathLike | BinaryIO, fmt: str, column: str) -> CaptionTable:
    name = getattr(source, "name", source)
    if fmt == "parquet":
        return _read_parquet(source, column, name)
    if fmt == "tar":
        return _read_tar(source, column, name)
    data = source.read() if hasattr(source, "read") else Path(source).read_bytes()
    text, bad = decode_lines(data)
    if fmt == "txt":
        lines = text.splitlines()
        return CaptionTable(
            fmt,
            TEXT_COLUMN,
            lines,
            records=[{TEXT_COLUMN: line} for line in lines],
            fieldnames=[TEXT_COLUMN],
            decode_errors=bad,
        )
    if fmt == "jsonl":
        records = _parse_jsonl(text, name)
        fieldnames = list(dict.fromkeys(key for record in records for key in record))
    elif fmt in ("csv", "tsv"):
        reader = csv.DictReader(io.StringIO(text, newline=""), delimiter="\t" if fmt == "tsv" else ",")
        records = list(reader)
        fieldnames = list(reader.fieldnames or [])
    else:
        raise UserInputError(f"unknown format {fmt!r}")
    if records and column not in fieldnames:
        raise UserInputError(_missing_column_message(column, fieldnames, name))
    captions = [record.get(column) for record in records]
    return CaptionTable(fmt, column, captions, records=records, fieldnames=fieldnames, decode_errors=bad)


def _parse_jsonl(text: str, name: object) -> list[dict[str, Any]]:
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise UserInputError(f"{name}: line {number} is not valid JSON ({error.msg})") from None
        if not isinstance(record, dict):
            raise UserInputError(f"{name}: line {number} is a JSON {type(record).__name__}, not an object")
        records.append(record)
    return records


def _read_parquet(source: str | os.PathLike | BinaryIO, column: str, name: object) -> CaptionTable:
    try:
        table = pq.read_table(source)
    except (pa.ArrowInvalid, OSError) as error:
        raise UserInputError(f"{name}: not a readable Parquet file ({error})") from None
    if column not in table.column_names:
        raise UserInputError(_missing_column_message(column, table.column_names, name))
    captions = table.column(column).to_pylist()
    return CaptionTable("parquet", column, captions, arrow=table, fieldnames=list(table.column_names))


def _read_tar(source: str | os.PathLike | BinaryIO, column: str, name: object) -> CaptionTable:
    if not isinstance(source, (str, os.PathLike)):
        raise UserInputError("webdataset tar input must be a file, not a stream")
    try:
        records, bad = webdataset_tar.read_samples(source)
    except tarfile.TarError as error:
        raise UserInputError(f"{name}: not a readable tar file ({error})") from None
    fieldnames = list(dict.fromkeys(key for record in records for key in record))
    if records and column not in fieldnames:
        raise UserInputError(_missing_column_message(column, fieldnames, name))
    captions = [record.get(column) for record in records]
    return CaptionTable("tar", column, captions, records=records, fieldnames=fieldnames, decode_errors=bad)


def _missing_column_message(column: str, available: Sequence[str], name: object) -> str:
    return f"{name}: no column {column!r}; available columns: {', '.join(map(str, available)) or '(none)'}"


def write_table(
    table: CaptionTable,
    destination: str | os.PathLike | BinaryIO,
    fmt: str,
    new_columns: dict[str, Sequence[Any]],
    keep: np.ndarray | None = None,
) -> None:
    """Write ``table`` plus ``new_columns``, keeping only rows where ``keep`` is true.

    Files are written to a temporary name and renamed, so a crash never leaves
    a half-written output behind.
    """
    rows = np.arange(len(table)) if keep is None else np.flatnonzero(keep)
    if isinstance(destination, (str, os.PathLike)):
        with atomic_output(destination) as stream:
            _write(table, stream, fmt, new_columns, rows)
    else:
        _write(table, destination, fmt, new_columns, rows)


@contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary stream that becomes ``path`` only when the block succeeds.

    Data goes to a hidden temporary file in the same directory (``.NAME.*.tmp``),
    renamed over ``path`` at the end; on error the temporary file is removed, so
    readers never see a half-written file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            yield stream
        os.chmod(temp_name, 0o666 & ~_current_umask())  # mkstemp makes 0600; outputs get normal permissions
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write(
    table: CaptionTable, stream: BinaryIO, fmt: str, new_columns: dict[str, Sequence[Any]], rows: np.ndarray
) -> None:
    if fmt == "parquet":
        pq.write_table(_arrow_with_columns(table, new_columns, rows), stream)
        return
    if fmt == "tar":
        if table.fmt != "tar" or table.source is None:
            raise UserInputError("tar output needs a webdataset tar input (samples are copied from it)")
        webdataset_tar.write_samples(
            table.source, stream, rows, lambda row: {name: _json_value(v[row]) for name, v in new_columns.items()}
        )
        return
    records = _records(table)
    names = [name for name in table.fieldnames if name not in new_columns] + list(new_columns)
    text = io.TextIOWrapper(stream, encoding="utf-8", newline="", write_through=True)
    try:
        if fmt == "txt":
            score_name = next(iter(new_columns))
            for row in rows:
                text.write(f"{_cell(new_columns[score_name][row]) or 'nan'}\t{table.captions[row]}\n")
        elif fmt == "jsonl":
            for row in rows:
                record = dict(records[row])
                record.update({name: _json_value(values[row]) for name, values in new_columns.items()})
                text.write(json.dumps(record, ensure_ascii=False) + "\n")
        elif fmt in ("csv", "tsv"):
            writer = csv.DictWriter(
                text,
                fieldnames=names,
                delimiter="\t" if fmt == "tsv" else ",",
                extrasaction="ignore",
                lineterminator="\n",
            )
            writer.writeheader()
            for row in rows:
                record = dict(records[row])
                record.update({name: _cell(values[row]) for name, values in new_columns.items()})
                writer.writerow(record)
        else:
            raise UserInputError(f"unknown output format {fmt!r}")
        text.flush()
    finally:
        text.detach()


def _records(table: CaptionTable) -> list[dict[str, Any]]:
    if table.records is None:
        table.records = table.arrow.to_pylist()
    return table.records


def _arrow_with_columns(table: CaptionTable, new_columns: dict[str, Sequence[Any]], rows: np.ndarray) -> pa.Table:
    base = table.arrow if table.arrow is not None else pa.Table.from_pylist(_records(table))
    base = base.take(pa.array(rows, type=pa.int64()))
    for name, values in new_columns.items():
        column = (
            pa.array(np.asarray(values)[rows])
            if isinstance(values, np.ndarray)
            else pa.array([values[row] for row in rows])
        )
        if name in base.column_names:
            base = base.set_column(base.column_names.index(name), name, column)
        else:
            base = base.append_column(name, column)
    return base


def _json_value(value: Any) -> Any:
    if isinstance(value, (np.floating, float)):
        return None if np.isnan(value) else round(float(value), 6)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _cell(value: Any) -> str:
    if isinstance(value, (np.floating, float)):
        return "" if np.isnan(value) else f"{float(value):.6f}"
    return "" if value is None else str(value)
