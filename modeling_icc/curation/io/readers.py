"""Caption tables read in chunks of rows, so that a job's memory does not grow with its input.

Every format streams: text formats line by line, Parquet one row group at a time (so
the file's row group size bounds the memory), webdataset tars sample by sample (text
members only); a COCO captions file is one JSON document, read whole. Every other
column is carried through unchanged: CSV cells stay text, JSON objects keep their
fields, Parquet keeps its Arrow schema.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tarfile
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ...utils.errors import UserInputError
from . import compression, gbc
from . import webdataset as webdataset_tar
from .formats import CC3M_COLUMNS, TEXT_COLUMN, check_input_file, is_parquet, missing_column_message, sniff_binary
from .text import BOM, LineDecoder, raw_lines

if TYPE_CHECKING:
    import pyarrow as pa

#: Rows read, scored and written at a time by single-file jobs.
CHUNK_ROWS = 32_768
#: Bytes looked at to tell a binary file from text.
_SNIFF_BYTES = 8192
#: Bytes of a text file split into lines at a time.
_TEXT_BLOCK = 1 << 16

Source = str | os.PathLike | BinaryIO


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


def iter_tables(source: Source, fmt: str, column: str = TEXT_COLUMN, rows: int = CHUNK_ROWS) -> Iterator[CaptionTable]:
    """``source`` (a path or a binary stream such as stdin) as tables of at most ``rows`` rows.

    Always yields at least one table (empty for an empty input) so that callers see the
    columns; the caption column is checked against the first one.
    """
    with ExitStack() as stack:
        position, compressed = None, False
        name = os.fspath(source) if isinstance(source, (str, os.PathLike)) else getattr(source, "name", "input")
        path = check_input_file(source) if isinstance(source, (str, os.PathLike)) else None
        source = path or _peekable(source)
        container = _container(source, fmt)
        if container in ("tar", "parquet"):
            compression.refuse_compressed(source, container, name)
        if container == "tar":
            if path is None:
                raise UserInputError("webdataset tar input must be a file, not a stream")
            chunks = _tar_tables(path, column, rows)
        elif container == "parquet":  # Arrow reads files itself
            chunks = _parquet_tables(source, column, rows, name)
        elif container in _TEXT_READERS:  # compressed text is read through its decompressor
            raw = _peekable(stack.enter_context(path.open("rb")) if path is not None else source)
            stream = compression.decompressed(raw)
            if stream is not raw:
                stack.enter_context(stream)
            # Progress counts the file's bytes read so far (compressed bytes, for compressed input;
            # .txt tables count their own lines' bytes, unless compressed).
            position = raw.tell if path is not None else None
            compressed = stream is not raw
            chunks = _TEXT_READERS[container](_check_text(_peekable(stream), fmt, name), column, rows, name)
        else:
            raise UserInputError(f"unknown format {fmt!r}")
        if fmt == "gbc":
            chunks = gbc.with_node_captions(chunks)
        first = True
        for table in chunks:
            table.source = path
            if position is not None and (compressed or table.bytes_read is None):
                table.bytes_read = position()
            if first and (container == "parquet" or len(table)) and table.column not in table.fieldnames:
                raise UserInputError(missing_column_message(table.column, table.fieldnames, name))
            first = False
            yield table
            del table  # not held while the next one is read


def _container(source: Path | BinaryIO, fmt: str) -> str:
    """The format a reader reads: ``fmt`` itself, or for GBC graphs the file format that holds them."""
    if fmt != "gbc":
        return fmt
    return "parquet" if is_parquet(source) else "jsonl"


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
    parts = []
    for table in iter_tables(source, fmt, column):
        names.update(dict.fromkeys(table.fieldnames))
        if arrow_schema and len(table):
            parts.append(records_to_arrow(table.records, list(names)).schema)
    if not arrow_schema:
        return Fields(list(names))
    import pyarrow as pa

    schema = _unify(parts) if parts else pa.schema([])
    return Fields(
        list(names), pa.schema([schema.field(n) if n in schema.names else pa.field(n, pa.null()) for n in names])
    )


def records_to_arrow(records: list[dict[str, Any]], names: list[str], schema: pa.Schema | None = None) -> pa.Table:
    """Dict rows as an Arrow table with the columns ``names`` (missing values are null)."""
    import pyarrow as pa

    columns = {name: [record.get(name) for record in records] for name in names}
    try:
        return pa.Table.from_pydict(columns, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
        raise _mixed_types(error) from None


def _unify(schemas: list[pa.Schema]) -> pa.Schema:
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


def _peekable(stream: BinaryIO) -> BinaryIO:
    return stream if hasattr(stream, "peek") else io.BufferedReader(stream)


def _check_text(stream: BinaryIO, fmt: str, name: object) -> BinaryIO:
    kind = sniff_binary(stream.peek(_SNIFF_BYTES)[:_SNIFF_BYTES])
    if kind is not None:
        raise UserInputError(
            f"{name} is {kind}, not {fmt} text; pass the right --format (or none, to use the extension)"
        )
    return stream


def _txt_tables(stream: BinaryIO, column: str, rows: int, name: object) -> Iterator[CaptionTable]:
    """Lines as one-column Arrow tables, split and decoded a block at a time (no Python step per line
    unless a block holds bytes that are not UTF-8: then its lines are decoded one by one and counted)."""
    import pyarrow as pa

    captions: list[str] = []
    bad: list[int] = []  # positions in ``captions`` of lines that needed U+FFFD
    consumed = 0  # bytes of the lines yielded so far (the stream reads ahead a block)
    for lines, block_bad in _text_blocks(stream):
        bad += [len(captions) + position for position in block_bad]
        captions += lines
        while len(captions) >= rows:
            table = _txt_table(captions[:rows], sum(position < rows for position in bad), consumed, pa)
            consumed = table.bytes_read
            yield table
            captions = captions[rows:]
            bad = [position - rows for position in bad if position >= rows]
    yield _txt_table(captions, len(bad), consumed, pa)


def _txt_table(captions: list[str], decode_errors: int, consumed: int, pa: Any) -> CaptionTable:
    """One table; ``bytes_read`` counts the UTF-8 bytes and line ends of its lines and all before them."""
    import pyarrow.compute as pc

    arrow = pa.table({TEXT_COLUMN: pa.array(captions, type=pa.string())})
    size = pc.sum(pc.binary_length(arrow.column(TEXT_COLUMN))).as_py() or 0
    return CaptionTable(
        "txt",
        TEXT_COLUMN,
        captions,
        arrow=arrow,
        fieldnames=[TEXT_COLUMN],
        decode_errors=decode_errors,
        bytes_read=consumed + size + len(captions),
    )


def _text_blocks(stream: BinaryIO) -> Iterator[tuple[list[str], list[int]]]:
    """``(lines, positions of the lines that needed U+FFFD)`` per block of ``stream``, by :func:`raw_lines`'s rules:
    lines end at ``\\n`` (``\\r\\n`` too) only, a leading BOM is dropped, a last line without ``\\n`` counts."""
    # read1: what has arrived (at most a block), so piped rows are scored without waiting for a whole block
    read = getattr(stream, "read1", stream.read)
    carry, first, bom_alone = b"", True, False
    while True:
        block = read(_TEXT_BLOCK)
        data = carry + block
        if first and block and len(data) < len(BOM):  # too short yet to tell whether a BOM starts it
            carry = data
            continue
        if first:
            bom_alone, data, first = data == BOM, data.removeprefix(BOM), False
        elif block:
            bom_alone = False
        if not block:
            if data or bom_alone:  # a BOM alone is one (empty) line
                yield _split_lines(data)
            return
        cut = data.rfind(b"\n") + 1
        carry = data[cut:]
        if cut:
            yield _split_lines(data[:cut])


def _split_lines(data: bytes) -> tuple[list[str], list[int]]:
    """The lines of ``data``, which ends with a line end unless it is the end of the input."""
    bad: list[int] = []
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        decoder, lines = LineDecoder(), []
        for position, line in enumerate(data.split(b"\n")):
            before = decoder.bad
            lines.append(decoder.decode(line))
            if decoder.bad > before:
                bad.append(position)
    terminated = data.endswith(b"\n")
    if terminated:
        lines.pop()  # the empty text after the last line end
    if b"\r" in data:  # "\\r\\n" ends a line; a "\\r" on an unterminated last line is kept
        ends = len(lines) if terminated else len(lines) - 1
        lines[:ends] = [line[:-1] if line.endswith("\r") else line for line in lines[:ends]]
    return lines, bad


def _jsonl_tables(stream: BinaryIO, column: str, rows: int, name: object) -> Iterator[CaptionTable]:
    decoder = LineDecoder()
    fieldnames: dict[str, None] = {}
    records: list[dict[str, Any]] = []
    bad = 0
    for number, line in enumerate(raw_lines(stream), start=1):
        if not line.strip():
            continue
        before = decoder.bad
        try:
            record = json.loads(decoder.decode(line))
        except json.JSONDecodeError as error:
            raise UserInputError(f"{name}: line {number} is not valid JSON ({error.msg})") from None
        if not isinstance(record, dict):
            raise UserInputError(f"{name}: line {number} is a JSON {type(record).__name__}, not an object")
        records.append(decoder.clean_json(record, line, counted=decoder.bad > before))
        fieldnames.update(dict.fromkeys(record))
        if len(records) == rows:
            yield _records_table("jsonl", column, records, fieldnames, decoder.bad - bad)
            records, bad = [], decoder.bad
    yield _records_table("jsonl", column, records, fieldnames, decoder.bad - bad)


def _records_table(
    fmt: str, column: str, records: list[dict[str, Any]], fieldnames: dict[str, None], bad: int
) -> CaptionTable:
    captions = [record.get(column) for record in records]
    return CaptionTable(fmt, column, captions, records=records, fieldnames=list(fieldnames), decode_errors=bad)


def _csv_tables(
    stream: BinaryIO,
    column: str,
    rows: int,
    name: object,
    delimiter: str = ",",
    header: tuple[str, ...] | None = None,
    fmt: str = "csv",
) -> Iterator[CaptionTable]:
    """Rows of a CSV (or TSV) file; with ``header``, a file without a header row whose fields are
    never quoted (Conceptual Captions)."""
    decoder = LineDecoder()
    quoting = csv.QUOTE_MINIMAL if header is None else csv.QUOTE_NONE
    lines = (decoder.decode(line) for line in raw_lines(stream))
    reader = csv.reader(lines, delimiter=delimiter, strict=True, quoting=quoting)
    fieldnames = list(header or _next_csv_row(reader, name) or [])
    records: list[dict[str, Any]] = []
    bad = 0
    while True:
        start = reader.line_num + 1
        row = _next_csv_row(reader, name)
        if row is None:
            break
        if not row:
            continue
        if len(row) > len(fieldnames):
            raise UserInputError(
                f"{name}: line {start} has {len(row)} fields but the header names {len(fieldnames)}; "
                "quote fields that contain the delimiter"
            )
        record = dict(zip(fieldnames, row, strict=False))
        if len(row) < len(fieldnames):
            record.update(dict.fromkeys(fieldnames[len(row) :]))
        records.append(record)
        if len(records) == rows:
            yield _records_table(fmt, column, records, dict.fromkeys(fieldnames), decoder.bad - bad)
            records, bad = [], decoder.bad
    yield _records_table(fmt, column, records, dict.fromkeys(fieldnames), decoder.bad - bad)


def _next_csv_row(reader: Any, name: object) -> list[str] | None:
    start = reader.line_num + 1
    try:
        return next(reader, None)
    except csv.Error as error:
        if "unexpected end of data" in str(error):
            raise UserInputError(
                f"{name}: line {start}: a quoted field opened here is never closed (unterminated quote)"
            ) from None
        if "field larger than field limit" in str(error):
            raise UserInputError(
                f"{name}: line {start}: a field is longer than {csv.field_size_limit():,} characters "
                "(an unterminated quote?)"
            ) from None
        raise UserInputError(f"{name}: line {reader.line_num}: malformed CSV ({error})") from None


def _tsv_tables(stream: BinaryIO, column: str, rows: int, name: object) -> Iterator[CaptionTable]:
    return _csv_tables(stream, column, rows, name, delimiter="\t", fmt="tsv")


def _cc3m_tables(stream: BinaryIO, column: str, rows: int, name: object) -> Iterator[CaptionTable]:
    return _csv_tables(stream, column, rows, name, delimiter="\t", header=CC3M_COLUMNS, fmt="tsv")


def _coco_tables(stream: BinaryIO, column: str, rows: int, name: object) -> Iterator[CaptionTable]:
    """The ``annotations`` of a COCO captions file (one JSON document, read whole), one row each."""
    decoder = LineDecoder()
    data = stream.read().removeprefix(BOM)
    try:
        document = decoder.clean_json(json.loads(decoder.decode(data)), data, counted=decoder.bad > 0)
    except json.JSONDecodeError as error:
        raise UserInputError(f"{name}: not valid JSON ({error.msg} at line {error.lineno})") from None
    annotations = document.get("annotations") if isinstance(document, dict) else None
    if not isinstance(annotations, list) or not all(isinstance(item, dict) for item in annotations):
        raise UserInputError(f"{name}: not a COCO captions file (no 'annotations' list of objects)")
    fieldnames: dict[str, None] = {}
    for annotation in annotations:
        fieldnames.update(dict.fromkeys(annotation))
    for start in range(0, max(len(annotations), 1), rows):
        yield _records_table("jsonl", column, annotations[start : start + rows], fieldnames, decoder.bad * (start == 0))


def _parquet_tables(source: Path | BinaryIO, column: str, rows: int, name: object) -> Iterator[CaptionTable]:
    """One row group at a time (``iter_batches`` held the whole file in memory), sliced into tables."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not isinstance(source, Path) and not source.seekable():  # a pipe: Parquet's footer is at the end
        source = pa.BufferReader(source.read())
    try:
        parquet = pq.ParquetFile(source)
        groups = (parquet.read_row_group(index) for index in range(parquet.num_row_groups))
        empty = True
        for group in groups:
            for start in range(0, group.num_rows, rows):
                empty = False
                yield _arrow_table(group.slice(start, rows), column)
            del group
    except (pa.ArrowInvalid, OSError) as error:
        raise UserInputError(f"{name}: not a readable Parquet file ({error})") from None
    if empty:
        yield _arrow_table(parquet.schema_arrow.empty_table(), column)


def _arrow_table(table: pa.Table, column: str) -> CaptionTable:
    captions = table.column(column).to_pylist() if column in table.column_names else [None] * table.num_rows
    return CaptionTable("parquet", column, captions, arrow=table, fieldnames=list(table.column_names))


def _tar_tables(path: Path, column: str, rows: int) -> Iterator[CaptionTable]:
    fieldnames: dict[str, None] = {}
    try:
        samples = webdataset_tar.iter_records(path)
        while True:
            part = list(islice(samples, rows))
            records = [record for record, _ in part]
            for record in records:
                fieldnames.update(dict.fromkeys(record))
            yield _records_table("tar", column, records, fieldnames, sum(bad for _, bad in part))
            if len(part) < rows:
                return
    except tarfile.TarError as error:
        raise UserInputError(f"{path}: not a readable tar file ({error})") from None


_TEXT_READERS = {
    "txt": _txt_tables,
    "jsonl": _jsonl_tables,
    "csv": _csv_tables,
    "tsv": _tsv_tables,
    "cc3m": _cc3m_tables,
    "coco": _coco_tables,
}
