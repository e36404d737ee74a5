"""``.txt`` input read a block at a time gives exactly the rows of reading it line by line."""

from __future__ import annotations

import io
from itertools import islice

import pytest

from modeling_icc.curation.io import readers
from modeling_icc.curation.io.text import BOM, LineDecoder, raw_lines, strip_line_end

INPUTS = {
    "plain": b"a dog\nthe meaning of life\n",
    "no final line end": b"a dog\nlast",
    "crlf and a kept final cr": b"a\r\nb\r\n\r\nc\r",
    "cr cr lf": b"x\r\r\ny\n",
    "bom and blank lines": BOM + b"first\n\n  \nfourth\n",
    "bom only": BOM,
    "empty": b"",
    "one newline": b"\n",
    "invalid utf-8 in the middle": "caf\u00e9 ok\n".encode() + b"bad \xff\xfe here\nfine\n\xe2\x82\n",
    "separators stay in captions": "f\x0cv\x0bs\x1cu\u0085l\u2028p\u2029end\n".encode(),
    "long lines": b"".join(b"w" * length + b"\n" for length in (0, 1, 50, 300, 7)),
}


def line_by_line(data: bytes, rows: int) -> list[tuple[list[str], int]]:
    """The reader before blocks: one line at a time (``raw_lines``, ``strip_line_end``, ``LineDecoder``)."""
    decoder = LineDecoder()
    lines = (decoder.decode(strip_line_end(line)) for line in raw_lines(io.BytesIO(data)))
    out = []
    while True:
        bad = decoder.bad
        captions = list(islice(lines, rows))
        out.append((captions, decoder.bad - bad))
        if len(captions) < rows:
            return out


@pytest.mark.parametrize("name", INPUTS)
@pytest.mark.parametrize("block", [1, 2, 3, 7, 1 << 20])
@pytest.mark.parametrize("rows", [1, 2, 3, 32_768])
def test_blocks_give_the_rows_of_line_by_line_reading(monkeypatch, name, block, rows):
    monkeypatch.setattr(readers, "_TEXT_BLOCK", block)
    data = INPUTS[name]
    tables = list(readers._txt_tables(io.BufferedReader(io.BytesIO(data)), "caption", rows, "input"))
    got = [(table.captions, table.decode_errors) for table in tables]
    assert got == line_by_line(data, rows)
    for table in tables:
        assert table.arrow.column("caption").to_pylist() == table.captions
        assert table.as_records() == [{"caption": caption} for caption in table.captions]


class CountedBytes(bytes):
    """Bytes that count the bytes searched or copied through them: how much work a reader does on its input,
    told apart from how long it takes (a reader that searches or copies what it carried again for every new
    block does work that grows with the square of a line's length)."""

    work = 0

    def rfind(self, *args):
        CountedBytes.work += len(self)
        return bytes.rfind(self, *args)

    def find(self, *args):
        CountedBytes.work += len(self)
        return bytes.find(self, *args)

    def __add__(self, other):
        CountedBytes.work += len(self) + len(other)
        return CountedBytes(bytes(self) + bytes(other))

    def __radd__(self, other):
        CountedBytes.work += len(self) + len(other)
        return CountedBytes(bytes(other) + bytes(self))


class Arriving:
    """A stream whose blocks arrive as :class:`CountedBytes`."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def read1(self, size: int) -> bytes:
        block = self.data[self.at : self.at + size]
        self.at += len(block)
        return CountedBytes(block)

    read = read1


def work_to_read(line_bytes: int) -> int:
    """The bytes searched or copied while one line of ``line_bytes`` (and a short one after it) is read."""
    data = b"w" * line_bytes + b"\na dog\n"
    CountedBytes.work = 0
    tables = list(readers._txt_tables(Arriving(data), "caption", 32_768, "input"))
    assert [len(caption) for table in tables for caption in table.captions] == [line_bytes, 5]
    return CountedBytes.work


def test_one_long_line_is_read_in_linear_work():
    """Issue 48, item 7: a 10 MB line took 4.8 s and 100 MB 133 s, the carried text searched and copied again
    for each 64 KB block. Work is counted, not timed: four times the line, at most about four times the work."""
    small, large = work_to_read(1 << 20), work_to_read(4 << 20)
    assert large <= 4.2 * small, (small, large)
    assert large <= 2 * (4 << 20), large  # each byte searched about once (quadratic: about 130 MB here)
