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
