"""Compressed inputs: gzip, bzip2, xz and zstd text files, read as a stream (memory stays bounded).

Web pools and the ``datasets`` world ship JSON lines (and CSV, TSV, text) compressed. The
compression is known by the file's extension (``pool.jsonl.gz``: JSON lines in gzip) and by
its first bytes, so ``--format jsonl`` on a gzip file, or a compressed stdin, is read too.
gzip, bzip2 and xz come from the standard library, zstd from Arrow (the ``parquet`` extra).
Parquet and tar are read by seeking, so compressed ones are refused with the command that
decompresses them. A text output named with a compression extension (``kept.jsonl.gz``) is
written compressed (:func:`compressed_output`, inside the atomic temp file). Kept free of
NumPy and Arrow imports until a zstd file is read or written.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import BinaryIO

from ...utils.errors import UserInputError
from ...utils.extras import ARROW, require
from ...utils.locations import is_remote, pure

#: Compression by file extension.
EXTENSIONS = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd", ".zstd": "zstd"}
#: Compression by the first bytes of the file.
_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd"}
#: The compression of each kind of stream :func:`decompressed` returns (zstd's is a plain buffered reader).
_OPENED_AS = {"GzipFile": "gzip", "BZ2File": "bzip2", "LZMAFile": "xz"}
#: The command that decompresses each one (for messages).
_TOOLS = {"gzip": "gunzip -k", "bzip2": "bunzip2 -k", "xz": "unxz -k", "zstd": "unzstd"}


def by_extension(path: str | os.PathLike) -> str | None:
    """The compression a file name announces (``a.jsonl.gz``: ``"gzip"``), else ``None``."""
    return EXTENSIONS.get(pure(path).suffix.lower())


def by_content(head: bytes) -> str | None:
    """The compression whose magic bytes ``head`` starts with, else ``None``."""
    return next((name for magic, name in _MAGIC.items() if head.startswith(magic)), None)


def require_zstd() -> None:
    """A one-line error naming the extra to install where zstd is used without Arrow (the core install)."""
    require([("zstd compression", ARROW)])


def table_suffix(path: str | os.PathLike) -> str:
    """The extension that names the table format, past a compression extension (``.jsonl`` for ``a.jsonl.gz``)."""
    path = pure(path)
    return Path(path.stem).suffix.lower() if by_extension(path) else path.suffix.lower()


def table_stem(path: str | os.PathLike) -> str:
    """The file name without its format and compression extensions (``a`` for ``a.jsonl.gz``)."""
    name = pure(path).name
    for suffix in (Path(name).suffix if by_extension(name) else "", table_suffix(name)):
        name = name[: -len(suffix)] if suffix and name.lower().endswith(suffix) else name
    return name


def decompressed(stream: BinaryIO) -> BinaryIO:
    """``stream`` (which can peek) as its decompressed bytes, if its first bytes say it is compressed."""
    compression = by_content(stream.peek(6)[:6])
    if compression == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=stream, mode="rb")
    if compression == "bzip2":
        import bz2

        return bz2.BZ2File(stream)
    if compression == "xz":
        import lzma

        return lzma.LZMAFile(stream)
    if compression == "zstd":
        require_zstd()
        import pyarrow as pa

        return io.BufferedReader(pa.CompressedInputStream(pa.PythonFile(stream, mode="r"), "zstd"))
    return stream


def name_of(stream: BinaryIO) -> str:
    """The compression :func:`decompressed` opened ``stream`` with."""
    return _OPENED_AS.get(type(stream).__name__, "zstd")


def decompression_errors() -> tuple[type[BaseException], ...]:
    """What reading a decompressed stream raises when the compressed bytes are damaged: ``EOFError`` (cut
    short), zlib's and lzma's errors, ``OSError`` (gzip's CRC check, bzip2's "invalid data stream", zstd)."""
    import lzma
    import zlib

    return (EOFError, OSError, zlib.error, lzma.LZMAError)


def damaged_input(name: object, compression: str, raw: BinaryIO, rows: int, error: BaseException) -> UserInputError:
    """The one-line error for ``compression``-compressed input that stopped decompressing: where in ``raw``
    (the compressed bytes) it stopped, and how many rows were read whole before it."""
    where = ""
    try:
        where = f" at compressed byte {raw.tell():,}"
        size = os.fstat(raw.fileno()).st_size
        where += f" of {size:,}" if size else ""  # a pipe: no size
    except (OSError, ValueError):  # a pipe: no position
        pass
    after = f", after row {rows:,}" if rows else ""
    return UserInputError(f"{name}: {compression} data is corrupt or cut short{where}{after} ({error})")


def refuse_compressed(source: Path | BinaryIO, fmt: str, name: object) -> None:
    """A one-line error if ``source`` of a format read by seeking (Parquet, tar) is compressed."""
    if isinstance(source, Path) or is_remote(source):
        with source.open("rb") as stream:
            head = stream.read(6)
    else:
        head = source.peek(6)[:6]
    compression = by_content(head)
    if compression is not None:
        raise UserInputError(
            f"{name} is {compression}-compressed {fmt}, which is read by seeking: decompress it first "
            f"({decompress_command(compression, name, fmt)}); compressed txt, jsonl, csv and tsv are read as they are"
        )


def decompress_command(compression: str, name: object, fmt: str) -> str:
    """The shell command that decompresses the file ``name`` into one to pass instead, and that file's name.

    A local name with the compression's extension is decompressed beside it (``gunzip -k pool.parquet.gz``
    gives ``pool.parquet``); any other name (no such extension: the tools refuse it; a URL: they cannot
    read it) is decompressed from a stream into a new local file."""
    text = str(name)
    tool = _TOOLS[compression]
    if by_extension(text) == compression and "://" not in text:
        return f"{tool} {text}, then pass {text[: -len(pure(text).suffix)]}"
    stem = compression_stem(pure(text).name)
    target = f"{stem}.decompressed.{fmt}"
    source = f"{text}" if "://" not in text else f"a local copy of {text}"
    return f"{tool.split()[0]} -c {source} > {target}, then pass {target}"


def compression_stem(name: str) -> str:
    """``name`` without its compression extension and the format extension before it (``pool`` for
    ``pool.parquet.gz`` and ``pool.parquet``)."""
    name = name[: -len(Path(name).suffix)] if by_extension(name) else name
    return name[: -len(Path(name).suffix)] if Path(name).suffix else name


def compressed_output(stream: BinaryIO, compression: str | None) -> Iterator[BinaryIO]:
    """A context giving a stream that writes ``compression`` (``None``: ``stream`` itself) into ``stream``."""
    if compression is None:
        return nullcontext(stream)
    return _compressing(stream, compression)


@contextmanager
def _compressing(stream: BinaryIO, compression: str) -> Iterator[BinaryIO]:
    if compression == "gzip":
        import gzip

        writer = gzip.GzipFile(fileobj=stream, mode="wb", mtime=0)  # mtime=0: the same bytes every run
    elif compression == "bzip2":
        import bz2

        writer = bz2.BZ2File(stream, "wb")
    elif compression == "xz":
        import lzma

        writer = lzma.LZMAFile(stream, "wb")  # noqa: SIM115 (closed by the with below)
    else:
        require_zstd()
        import pyarrow as pa

        writer = pa.CompressedOutputStream(pa.PythonFile(stream, mode="w"), "zstd")
    with writer:  # closing writes the compressed stream's end into ``stream``
        yield writer
