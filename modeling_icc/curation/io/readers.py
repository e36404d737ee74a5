"""Each format's reader: caption tables read in chunks of rows, so that a job's memory does not grow with its input.

Every format streams: text formats line by line, Parquet one row group at a time (so
the file's row group size bounds the memory), webdataset tars sample by sample (text
members only); a COCO captions file is one JSON document, read whole. Every other
column is carried through unchanged: CSV cells stay text, JSON objects keep their
fields, Parquet keeps its Arrow schema. A reader takes an :class:`Input` and yields tables;
which reader reads which format is said once, in :mod:`.formats`.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tarfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ...utils.errors import UserInputError
from ...utils.extras import module_available
from ...utils.locations import (
    Location,
    is_remote,
    is_url,
    kind,
    location,
    open_to_read,
    open_to_seek,
    raised_by_store,
)
from . import compression
from . import webdataset as webdataset_tar
from .table import TEXT_COLUMN, CaptionTable
from .text import BOM, LineDecoder, raw_lines

if TYPE_CHECKING:
    import pyarrow as pa

#: Columns of Conceptual Captions' TSV files, which have no header.
CC3M_COLUMNS = ("caption", "url")
_COCO_START = re.compile(rb'\A\s*\{\s*"(info|images|licenses|annotations|categories|type)"\s*:')
#: Bytes of a file's start that its signature is read from (a tar header's ``ustar`` ends at byte 262).
_SNIFF_BYTES = 512
#: The first bytes of files that are not caption text, and what they are. A file is refused by its start
#: only: a NUL byte is a caption character like any other control (a caption of nothing else scores NaN),
#: so the same bytes get the same verdict wherever they are in the file.
_SIGNATURES = {
    b"PAR1": "a Parquet file",
    b"\x1f\x8b": "gzip-compressed data",
    b"\xff\xfe": "UTF-16 text (convert it to UTF-8)",
    b"\xfe\xff": "UTF-16 text (convert it to UTF-8)",
    b"\x89PNG\r\n\x1a\n": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF87a": "a GIF image",
    b"GIF89a": "a GIF image",
    b"RIFF": "a RIFF file (WebP image, WAV audio)",
    b"%PDF-": "a PDF document",
    b"PK\x03\x04": "a zip archive",
    b"7z\xbc\xaf\x27\x1c": "a 7z archive",
    b"ARROW1": "an Arrow file",
    b"\x93NUMPY": "a NumPy array file",
    b"SQLite format 3\x00": "an SQLite database",
}
#: Bytes of a text file split into lines at a time.
_TEXT_BLOCK = 1 << 16


@dataclass(frozen=True)
class Input:
    """An input being read: ``source`` is its path (local or remote), or a stream that can peek (stdin);
    ``name`` is what messages call it; ``fmt`` the format it is read as (also named in messages)."""

    source: Location | BinaryIO
    name: object
    fmt: str

    @property
    def path(self) -> Location | None:
        return self.source if isinstance(self.source, Path) or is_remote(self.source) else None


#: A format's reader: the tables of an input, at most ``rows`` rows each, with ``column`` as captions.
Reader = Callable[[Input, str, int], Iterator[CaptionTable]]
#: A text format's parser: the tables of a decompressed stream that can peek.
TextParser = Callable[[BinaryIO, str, int, object], Iterator[CaptionTable]]


def open_input(source: str | os.PathLike | BinaryIO, fmt: str) -> Input:
    """``source`` checked (a path must be a readable file) and ready for a reader."""
    if is_url(source):
        return Input(check_input_file(source), str(source), fmt)
    if isinstance(source, (str, os.PathLike)):
        return Input(check_input_file(source), os.fspath(source), fmt)
    return Input(_peekable(source), getattr(source, "name", "input"), fmt)


def check_input_file(path: str | os.PathLike | Location) -> Location:
    """``path`` as a ``Path`` (a URL: a ``UPath``) if it is a readable file; otherwise a one-line error
    saying what it is."""
    path = location(path)
    found = kind(path)  # on a store, a failure (timeout, offline Hub) is raised, not taken for "not found"
    if found == "directory":
        raise UserInputError(f"input {path} is a directory, not a file")
    if found is None:
        raise UserInputError(f"input file not found: {path}")
    if found != "file":
        raise UserInputError(f"input {path} is not a regular file")
    return path


def is_parquet(source: str | os.PathLike | Location | BinaryIO) -> bool:
    """Whether ``source`` (a path, or a stream that can peek) starts with Parquet's magic bytes."""
    if hasattr(source, "peek"):
        return source.peek(4)[:4] == b"PAR1"
    with location(source).open("rb") as stream:
        return stream.read(4) == b"PAR1"


def sniff_binary(head: bytes) -> str | None:
    """What ``head`` (a file's first bytes) is if its signature says it is not text, else ``None``."""
    kind = next((kind for signature, kind in _SIGNATURES.items() if head.startswith(signature)), None)
    if kind is None and head[257:262] == b"ustar":
        return "a tar archive"
    return kind


def text_reader(parse: TextParser) -> Reader:
    """The reader of a text format parsed by ``parse``: compressed input is read through its decompressor,
    binary input refused, and each table told how far into the file it ends (for progress bars)."""

    def read(opened: Input, column: str, rows: int) -> Iterator[CaptionTable]:
        with ExitStack() as stack:
            path = opened.path
            raw = stack.enter_context(open_to_read(path)) if path is not None else opened.source
            stream = compression.decompressed(raw)
            compressed = stream is not raw
            if compressed:
                stack.enter_context(stream)
            # Progress counts the file's bytes read so far (compressed bytes, for compressed input;
            # .txt tables count their own lines' bytes, unless compressed).
            done = 0
            try:
                text = _check_text(_peekable(stream), opened.fmt, opened.name)
                for table in parse(text, column, rows, opened.name):
                    if path is not None and (compressed or table.bytes_read is None):
                        table.bytes_read = raw.tell()
                    done += len(table)
                    yield table
                    del table  # not held while the next one is read
            except compression.decompression_errors() as error:
                if not compressed:
                    raise
                raise compression.damaged_input(opened.name, compression.name_of(stream), raw, done, error) from None

    return read


def read_parquet(opened: Input, column: str, rows: int) -> Iterator[CaptionTable]:
    """A Parquet file (or stream), one row group at a time; compressed ones are refused (read by seeking)."""
    compression.refuse_compressed(opened.source, "parquet", opened.name)
    yield from _parquet_tables(opened.source, column, rows, opened.name)


def read_tar(opened: Input, column: str, rows: int) -> Iterator[CaptionTable]:
    """A webdataset tar file, local or remote, sample by sample (a stream is refused: output copies samples
    from the file)."""
    compression.refuse_compressed(opened.source, "tar", opened.name)
    if opened.path is None:
        raise UserInputError("webdataset tar input must be a file, not a stream")
    yield from _tar_tables(opened.path, column, rows)


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
    """Lines as one-column tables, split and decoded a block at a time (lines are decoded one by one, and
    counted, only in a block holding bytes that are not UTF-8). Arrow tables, without a Python step per line,
    where pyarrow is installed; rows in the core install, which has none (:data:`~modeling_icc.utils.extras.ARROW`)."""
    table = _txt_arrow_table if module_available("pyarrow") else _txt_record_table
    captions: list[str] = []
    bad: list[int] = []  # positions in ``captions`` of lines that needed U+FFFD
    consumed = 0  # bytes of the lines yielded so far (the stream reads ahead a block)
    for lines, block_bad in _text_blocks(stream):
        bad += [len(captions) + position for position in block_bad]
        captions += lines
        while len(captions) >= rows:
            chunk = table(captions[:rows], sum(position < rows for position in bad), consumed)
            consumed = chunk.bytes_read
            yield chunk
            captions = captions[rows:]
            bad = [position - rows for position in bad if position >= rows]
    yield table(captions, len(bad), consumed)


def _txt_arrow_table(captions: list[str], decode_errors: int, consumed: int) -> CaptionTable:
    """One Arrow table; ``bytes_read`` counts the UTF-8 bytes and line ends of its lines and all before them."""
    import pyarrow as pa
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


def _txt_record_table(captions: list[str], decode_errors: int, consumed: int) -> CaptionTable:
    """:func:`_txt_arrow_table` as rows, for an install without pyarrow."""
    return CaptionTable(
        "txt",
        TEXT_COLUMN,
        captions,
        records=[{TEXT_COLUMN: caption} for caption in captions],
        fieldnames=[TEXT_COLUMN],
        decode_errors=decode_errors,
        bytes_read=consumed + sum(len(caption.encode()) for caption in captions) + len(captions),
    )


def _text_blocks(stream: BinaryIO) -> Iterator[tuple[list[str], list[int]]]:
    """``(lines, positions of the lines that needed U+FFFD)`` per block of ``stream``, by :func:`raw_lines`'s rules:
    lines end at ``\\n`` (``\\r\\n`` too) only, a leading BOM is dropped, a last line without ``\\n`` counts.

    Linear in the input's size however long its lines: each block is searched for its last line end once,
    and the blocks of a line still open are kept as they came and joined once, when the line ends (a line of
    100 MB is not copied and searched again for every block that extends it).
    """
    # read1: what has arrived (at most a block), so piped rows are scored without waiting for a whole block
    read = getattr(stream, "read1", stream.read)
    head, first, bom_alone = b"", True, False
    open_line: list[bytes] = []  # the blocks of a line whose end has not arrived yet
    while True:
        block = read(_TEXT_BLOCK)
        if first:
            head += block
            if block and len(head) < len(BOM):  # too short yet to tell whether a BOM starts it
                continue
            first, bom_alone, block = False, head == BOM, head.removeprefix(BOM)
            if bom_alone:  # a BOM alone is one (empty) line, unless more follows
                continue
        elif block:
            bom_alone = False
        if not block:
            if open_line or bom_alone:
                yield _split_lines(b"".join(open_line))
            return
        cut = block.rfind(b"\n") + 1
        if not cut:
            open_line.append(block)
            continue
        open_line.append(block[:cut])
        yield _split_lines(b"".join(open_line))
        open_line = [block[cut:]] if cut < len(block) else []


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
    fieldnames = refuse_duplicate_columns(list(header or _next_csv_row(reader, name) or []), name)
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


def refuse_duplicate_columns(columns: list[str], name: object) -> list[str]:
    """``columns`` if each is named once: rows are read by column name, so a repeated name would keep only
    one of its columns (the caption scored could be either)."""
    counts = Counter(columns)
    repeated = next((column for column in columns if counts[column] > 1), None)
    if repeated is not None:
        raise UserInputError(f"{name}: the header names the column {repeated!r} more than once; rename the others")
    return columns


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


def looks_like_cc3m(first_line: bytes, path: os.PathLike) -> bool:
    """Whether a TSV file is Conceptual Captions': no header, its first line ``caption<TAB>http...``."""
    fields = first_line.rstrip(b"\r\n").split(b"\t")
    return len(fields) == 2 and fields[0] != b"caption" and fields[1].startswith((b"http://", b"https://"))


def looks_like_coco(first_line: bytes, path: os.PathLike) -> bool:
    """Whether a ``.json`` file is COCO captions: one object opening with COCO's keys."""
    return _COCO_START.match(first_line) is not None


def _parquet_tables(source: Location | BinaryIO, column: str, rows: int, name: object) -> Iterator[CaptionTable]:
    """One row group at a time (``iter_batches`` held the whole file in memory), sliced into tables."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if is_remote(source):  # read through its fsspec file, which seeks (to the footer, to each row group)
        with open_to_seek(source, "Parquet") as stream:
            yield from _parquet_tables(stream, column, rows, name)
        return

    if not isinstance(source, Path) and not source.seekable():  # a pipe: Parquet's footer is at the end
        source = pa.BufferReader(source.read())
    try:
        parquet = pq.ParquetFile(source)
        refuse_duplicate_columns(parquet.schema_arrow.names, name)
        binary = _caption_column_is_binary(parquet.schema_arrow, column, name)
        groups = (parquet.read_row_group(index) for index in range(parquet.num_row_groups))
        empty = True
        for group in groups:
            for start in range(0, group.num_rows, rows):
                empty = False
                yield _arrow_table(group.slice(start, rows), column, binary)
            del group
    except (pa.ArrowInvalid, OSError) as error:
        if raised_by_store(error):  # a timeout or refusal of the store, not the file's bytes
            raise
        raise UserInputError(f"{name}: not a readable Parquet file ({error})") from None
    if empty:
        yield _arrow_table(parquet.schema_arrow.empty_table(), column)


def _caption_column_is_binary(schema: pa.Schema, column: str, name: object) -> bool:
    """Whether the caption column is binary (text written by Spark or Impala without ``binaryAsString``),
    to be read as UTF-8; a column of numbers, structs or other non-text is refused rather than scored NaN
    row by row (a filter would keep nothing and exit 0)."""
    import pyarrow as pa

    if column not in schema.names:
        return False  # named by the caller's own missing-column error
    kind = schema.field(column).type
    item = kind.value_type if pa.types.is_list(kind) or pa.types.is_large_list(kind) else kind
    if pa.types.is_binary(item) or pa.types.is_large_binary(item):
        return True
    if pa.types.is_string(item) or pa.types.is_large_string(item) or pa.types.is_null(item):
        return False
    raise UserInputError(
        f"{name}: column {column!r} holds {kind}, not text; name the caption column (--column, column=)"
    )


def _arrow_table(table: pa.Table, column: str, binary: bool = False) -> CaptionTable:
    captions = table.column(column).to_pylist() if column in table.column_names else [None] * table.num_rows
    decode_errors = 0
    if binary:
        captions, decode_errors = _decoded(captions)
    return CaptionTable(
        "parquet", column, captions, arrow=table, fieldnames=list(table.column_names), decode_errors=decode_errors
    )


def _decoded(values: list[Any]) -> tuple[list[Any], int]:
    """Binary captions (or lists of them) as UTF-8 text, bytes that are not UTF-8 replaced with U+FFFD;
    and how many values needed a replacement (counted in the summary like text files' bad lines)."""
    errors = 0

    def text(value: bytes | None) -> str | None:
        nonlocal errors
        if value is None:
            return None
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            errors += 1
            return value.decode("utf-8", "replace")

    out = [[text(item) for item in value] if isinstance(value, list) else text(value) for value in values]
    return out, errors


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


read_txt = text_reader(_txt_tables)
read_jsonl = text_reader(_jsonl_tables)
read_csv = text_reader(_csv_tables)
read_tsv = text_reader(_tsv_tables)
read_cc3m = text_reader(_cc3m_tables)
read_coco = text_reader(_coco_tables)
