"""Table formats by name and extension, and the checks every reader makes before reading.

Kept free of NumPy and Arrow so that the ``icc`` command builds its options instantly.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ...utils.errors import UserInputError

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
#: Formats whose rows may each carry different fields (a first pass collects them all).
VARYING_FIELDS = frozenset({"jsonl", "tar"})
#: Column names shown in an error message, at most.
_SHOWN_COLUMNS = 30


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


def missing_column_message(column: str, available: Sequence[object], name: object) -> str:
    """``NAME: no column 'x'; available columns: a, b`` (long lists and names shortened)."""
    shown = [_short(str(item)) for item in available[:_SHOWN_COLUMNS]]
    more = f" and {len(available) - _SHOWN_COLUMNS} more" if len(available) > _SHOWN_COLUMNS else ""
    return f"{name}: no column {column!r}; available columns: {', '.join(shown) or '(none)'}{more}"


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
