"""Table formats by name, extension and content, and the checks every reader makes before reading.

Kept free of NumPy and Arrow so that the ``icc`` command builds its options instantly.
Besides the table formats, the datasets this field starts from are read as they are
downloaded: Conceptual Captions' headerless ``caption<TAB>url`` TSV (``cc3m``), COCO's
captions JSON (``coco``) and Graph-Based Captioning graphs in JSON lines or Parquet (``gbc``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from ...utils.errors import UserInputError
from . import compression, gbc

#: Formats that are read and written.
FORMATS = ("txt", "jsonl", "csv", "tsv", "parquet", "tar")
#: Formats that are read: the table formats and the datasets' own layouts.
INPUT_FORMATS = (*FORMATS, "cc3m", "coco", "gbc")
#: Columns of Conceptual Captions' TSV files, which have no header.
CC3M_COLUMNS = ("caption", "url")
#: The caption column, and the columns aligned with it, of formats whose captions are not in ``caption``.
FORMAT_COLUMNS = {"gbc": (gbc.CAPTIONS, (gbc.VERTEX_IDS, gbc.LABELS))}
#: Bytes of a first line read to detect a format (a longer GBC record needs ``--format gbc``).
_SNIFF_LINE = 16 << 20
_COCO_START = re.compile(rb'\A\s*\{\s*"(info|images|licenses|annotations|categories|type)"\s*:')
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
#: Formats whose rows may each carry different fields (a first pass collects them all).
VARYING_FIELDS = frozenset({"jsonl", "tar"})
#: Column names shown in an error message, at most.
_SHOWN_COLUMNS = 30


def infer_format(
    path: str | os.PathLike, explicit: str | None = None, formats: Sequence[str] = FORMATS, option: str = "--format"
) -> str:
    """The table format from ``explicit`` or the file extension; ``option`` is the flag an error names."""
    if explicit:
        if explicit not in formats:
            raise UserInputError(f"unknown format {explicit!r}; choose one of {', '.join(formats)}")
        return explicit
    suffix = compression.table_suffix(path)
    if suffix not in _EXTENSIONS:
        raise UserInputError(
            f"cannot tell the format of {str(path)!r} from its extension; use one of "
            f"{', '.join(sorted(_EXTENSIONS))} (inputs also compressed: .jsonl.gz, .csv.zst, ...) or pass {option}"
        )
    return _EXTENSIONS[suffix]


def detect_format(path: str | os.PathLike, explicit: str | None = None) -> str:
    """The input format from ``explicit``, else from the extension refined by the file's first bytes.

    A compression extension is looked past (``a.jsonl.gz`` is JSON lines, its first line read
    decompressed). A ``.tsv`` whose first line is ``caption<TAB>http...`` is CC3M (no header); a
    ``.json`` that is one object opening with COCO's keys is COCO captions; JSON lines or Parquet
    whose rows carry ``vertices`` are GBC graphs.
    """
    if explicit:
        return infer_format(path, explicit, INPUT_FORMATS)
    fmt = infer_format(path)
    if fmt in ("tsv", "jsonl", "parquet") and Path(path).is_file():
        with open(path, "rb") as raw, compression.decompressed(raw) as stream:
            first_line = stream.readline(_SNIFF_LINE).removeprefix(b"\xef\xbb\xbf")
        if fmt == "tsv" and _is_cc3m_row(first_line):
            return "cc3m"
        if fmt == "jsonl" and _COCO_START.match(first_line):
            return "coco"
        if (fmt == "jsonl" and _has_vertices(first_line)) or (fmt == "parquet" and _parquet_has_vertices(path)):
            return "gbc"
    return fmt


def default_output_format(fmt: str, path: str | os.PathLike | None = None) -> str:
    """What an input format is written as when no output format is named: itself, or the table
    format its rows are read as. Plain text becomes TSV (``caption``, ``icc_score``, ``icc_model``
    under a header): ``.txt`` output (``score<TAB>caption``) has no room for the model, so it is
    written only when asked for by name."""
    if fmt == "gbc":
        return "parquet" if path is not None and is_parquet(path) else "jsonl"
    return {"txt": "tsv", "cc3m": "tsv", "coco": "jsonl"}.get(fmt, fmt)


def is_parquet(source: str | os.PathLike | BinaryIO) -> bool:
    """Whether ``source`` (a path, or a stream that can peek) starts with Parquet's magic bytes."""
    if hasattr(source, "peek"):
        return source.peek(4)[:4] == b"PAR1"
    with open(source, "rb") as stream:
        return stream.read(4) == b"PAR1"


def _is_cc3m_row(line: bytes) -> bool:
    fields = line.rstrip(b"\r\n").split(b"\t")
    return len(fields) == 2 and fields[0] != b"caption" and fields[1].startswith((b"http://", b"https://"))


def _has_vertices(line: bytes) -> bool:
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and isinstance(record.get(gbc.VERTICES), list)


def _parquet_has_vertices(path: str | os.PathLike) -> bool:
    if not is_parquet(path):
        return False
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return gbc.VERTICES in pq.read_schema(path).names
    except (pa.ArrowInvalid, OSError):  # not readable: the reader says so
        return False


def check_input_file(path: str | os.PathLike) -> Path:
    """``path`` as a ``Path`` if it is a readable file; otherwise a one-line error saying what it is."""
    path = Path(path)
    if path.is_dir():
        raise UserInputError(f"input {path} is a directory, not a file")
    if not path.exists():
        raise UserInputError(f"input file not found: {path}")
    if not path.is_file():
        raise UserInputError(f"input {path} is not a regular file")
    return path


def missing_column_message(column: str, available: Sequence[object], name: object = None) -> str:
    """``NAME: no column 'x'; available columns: a, b`` (long lists and names shortened; no ``NAME:`` without one)."""
    shown = [_short(str(item)) for item in available[:_SHOWN_COLUMNS]]
    more = f" and {len(available) - _SHOWN_COLUMNS} more" if len(available) > _SHOWN_COLUMNS else ""
    where = "" if name is None else f"{name}: "
    return f"{where}no column {column!r}; available columns: {', '.join(shown) or '(none)'}{more}"


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def sniff_binary(head: bytes) -> str | None:
    """What ``head`` (a file's first bytes) looks like if it is not UTF-8 text, else ``None``."""
    if head.startswith(b"PAR1"):
        return "a Parquet file"
    if head.startswith(b"\x1f\x8b"):
        return "gzip-compressed data"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16 text (convert it to UTF-8)"
    if head[257:262] == b"ustar":
        return "a tar archive"
    if b"\x00" in head:
        return "binary data"
    return None
