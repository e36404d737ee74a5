"""Lines and text from files that may not be clean UTF-8.

Lines end at ``\\n`` (``\\r\\n`` too) and nowhere else: form feeds, vertical tabs,
U+0085, U+2028 and friends are caption characters, not row breaks. Bytes that are
not UTF-8, and lone surrogates (which JSON can spell as ``\\ud800`` but no UTF-8 file
can hold), become U+FFFD; each line that needed it is counted, so a scoring job
never dies on one bad line and never hides it either.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from ...utils.caption_text import replace_surrogates

BOM = b"\xef\xbb\xbf"
#: A JSON escape of a UTF-16 surrogate (lone ones decode to unencodable text).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def raw_lines(stream: BinaryIO) -> Iterator[bytes]:
    """Lines of ``stream`` with their line endings, split at ``\\n`` only; a leading BOM is dropped."""
    first = True
    for line in stream:
        if first:
            line, first = line.removeprefix(BOM), False
        yield line


def strip_line_end(line: bytes) -> bytes:
    if line.endswith(b"\n"):
        line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
    return line


class LineDecoder:
    """UTF-8 decoding with replacement; ``bad`` counts the lines that needed a replacement."""

    def __init__(self) -> None:
        self.bad = 0

    def decode(self, line: bytes) -> str:
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            self.bad += 1
            return line.decode("utf-8", errors="replace")

    def clean_json(self, value: Any, line: bytes, counted: bool) -> Any:
        """A parsed JSON ``value`` with lone surrogates replaced; counts ``line`` unless already ``counted``."""
        if not _SURROGATE_ESCAPE.search(line):
            return value
        cleaned = clean_value(value)
        if cleaned != value and not counted:
            self.bad += 1
        return cleaned


def clean_value(value: Any) -> Any:
    """Strings, keys and nested values of ``value`` with lone surrogates replaced by U+FFFD."""
    if isinstance(value, str):
        return replace_surrogates(value)
    if isinstance(value, dict):
        return {clean_value(key): clean_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clean_value(item) for item in value]
    return value
