"""The formats, one entry each: how a file is recognized, read and written.

Adding a format is one :class:`Format` in :data:`REGISTRY` (its reader in :mod:`.readers`, its
writer in :mod:`.writers`); everything else (``--format`` choices, detection, default output
format, output suffix) is looked up here. Besides the table formats, the datasets this field
starts from are read as they are downloaded: Conceptual Captions' headerless ``caption<TAB>url``
TSV (``cc3m``), COCO's captions JSON (``coco``) and Graph-Based Captioning graphs in JSON lines
or Parquet (``gbc``, an adapter over those two readers).

Kept free of Arrow imports so that the ``icc`` command builds its options instantly.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import BinaryIO

from ...utils.errors import UserInputError
from ...utils.extras import ARROW, require
from ...utils.locations import is_file, location, open_to_read
from . import compression, gbc, readers, writers
from .table import TEXT_COLUMN, Fields

#: Tells, from a file's first line (decompressed) and its path, whether a file is of a format.
Sniff = Callable[[bytes, os.PathLike], bool]
#: Bytes of a first line read to detect a format (a longer GBC record needs ``--format gbc``).
_SNIFF_LINE = 16 << 20


@dataclass(frozen=True)
class Format:
    """One format. ``extensions`` name it (the first is its output suffix); ``refines`` maps a format
    named by extension to the test that tells this one apart (``cc3m`` refines ``tsv``); ``written_as``
    is the format written when no output format is named (by default itself; a function of the input
    path where it depends on the file); ``columns`` the caption column and the columns aligned with it."""

    name: str
    read: readers.Reader
    write: Callable[[BinaryIO, Fields | None], writers.TableWriter] | None = None
    extensions: tuple[str, ...] = ()
    refines: Mapping[str, Sniff] = field(default_factory=dict)
    written_as: str | Callable[[str | os.PathLike | None], str] | None = None
    columns: tuple[str, tuple[str, ...]] = (TEXT_COLUMN, ())
    #: Rows may each carry different fields (a first pass collects them all for CSV headers and Parquet schemas).
    varying_fields: bool = False
    #: Read and written with Arrow, which the core install does not hold (:data:`~modeling_icc.utils.extras.ARROW`).
    needs_arrow: bool = False

    def require_installed(self) -> Format:
        """This format, or a one-line error naming the extra that reads and writes it."""
        if self.needs_arrow:
            require([(f"reading or writing {self.name.capitalize()}", ARROW)])
        return self


REGISTRY: tuple[Format, ...] = (
    # Plain text has no room for the model beside the score: written as TSV unless .txt is asked for by name.
    Format("txt", readers.read_txt, writers.TxtWriter, (".txt",), written_as="tsv"),
    Format("jsonl", readers.read_jsonl, writers.JsonlWriter, (".jsonl", ".json"), varying_fields=True),
    Format("csv", readers.read_csv, writers.CsvWriter, (".csv",)),
    Format("tsv", readers.read_tsv, partial(writers.CsvWriter, delimiter="\t"), (".tsv",)),
    Format("parquet", readers.read_parquet, writers.ParquetTableWriter, (".parquet",), needs_arrow=True),
    Format("tar", readers.read_tar, writers.TarWriter, (".tar",), varying_fields=True),
    Format("cc3m", readers.read_cc3m, refines={"tsv": readers.looks_like_cc3m}, written_as="tsv"),
    Format("coco", readers.read_coco, refines={"jsonl": readers.looks_like_coco}, written_as="jsonl"),
    Format(
        "gbc",
        gbc.read,
        refines={"jsonl": gbc.in_json_lines, "parquet": gbc.in_parquet},
        written_as=gbc.written_as,
        columns=(gbc.CAPTIONS, (gbc.VERTEX_IDS, gbc.LABELS)),
    ),
)
#: Formats that are read and written.
FORMATS = tuple(entry.name for entry in REGISTRY if entry.write is not None)
#: Formats that are read: the table formats and the datasets' own layouts.
INPUT_FORMATS = tuple(entry.name for entry in REGISTRY)
#: The caption column, and the columns aligned with it, of formats whose captions are not in ``caption``.
FORMAT_COLUMNS = {entry.name: entry.columns for entry in REGISTRY if entry.columns != (TEXT_COLUMN, ())}
#: Formats whose rows may each carry different fields.
VARYING_FIELDS = frozenset(entry.name for entry in REGISTRY if entry.varying_fields)


def format_named(name: str) -> Format:
    """The registry's entry for ``name``; a one-line error for an unknown one."""
    entry = next((entry for entry in REGISTRY if entry.name == name), None)
    if entry is None:
        raise UserInputError(f"unknown format {name!r}")
    return entry.require_installed()


def infer_format(
    path: str | os.PathLike, explicit: str | None = None, formats: Sequence[str] = FORMATS, option: str = "--format"
) -> str:
    """The table format from ``explicit`` or the file extension; ``option`` is the flag an error names. A format
    or compression the core install cannot read or write is named with its extra here, before any work."""
    if compression.by_extension(path) == "zstd":
        compression.require_zstd()
    if explicit:
        if explicit not in formats:
            raise UserInputError(f"unknown format {explicit!r}; choose one of {', '.join(formats)}")
        return format_named(explicit).name
    by_extension = {extension: entry.name for entry in REGISTRY for extension in entry.extensions}
    suffix = compression.table_suffix(path)
    if suffix not in by_extension:
        raise UserInputError(
            f"cannot tell the format of {str(path)!r} from its extension; use one of "
            f"{', '.join(sorted(by_extension))} (inputs also compressed: .jsonl.gz, .csv.zst, ...) or pass {option}"
        )
    return format_named(by_extension[suffix]).name


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
    tests = [(entry.name, entry.refines[fmt]) for entry in REGISTRY if fmt in entry.refines]
    place = location(path)
    if tests and is_file(place):  # a store's failure is raised, not taken for "no file"
        with open_to_read(place) as raw, compression.decompressed(raw) as stream:
            try:
                first_line = stream.readline(_SNIFF_LINE).removeprefix(b"\xef\xbb\xbf")
            except compression.decompression_errors() as error:
                if stream is raw:
                    raise
                raise compression.damaged_input(path, compression.name_of(stream), raw, 0, error) from None
        return next((name for name, test in tests if test(first_line, path)), fmt)
    return fmt


def default_output_format(fmt: str, path: str | os.PathLike | None = None) -> str:
    """What an input format is written as when no output format is named: itself, or the table
    format its rows are read as (see :attr:`Format.written_as`)."""
    written_as = format_named(fmt).written_as
    if callable(written_as):
        return written_as(path)
    return written_as or fmt


def output_suffix(fmt: str) -> str:
    """The extension of an output file written as ``fmt`` (``.jsonl``)."""
    return format_named(fmt).extensions[0]


def open_writer(stream: BinaryIO, fmt: str, fields: Fields | None = None) -> writers.TableWriter:
    """The writer of ``fmt`` into ``stream``; ``fields``: every column of the input, when known up front."""
    entry = next((entry for entry in REGISTRY if entry.name == fmt and entry.write is not None), None)
    if entry is None:
        raise UserInputError(f"unknown output format {fmt!r}")
    return entry.require_installed().write(stream, fields)
