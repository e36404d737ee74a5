"""Caption tables: ``.txt``, ``.jsonl``, ``.csv``/``.tsv``, ``.parquet`` and webdataset ``.tar``.

The names callers use, in one place: formats (:mod:`.formats`), tables read whole or
in chunks (:mod:`.readers`), and written whole or in chunks to files that appear only
when complete (:mod:`.writers`). Bad text never stops a job: bytes that are not UTF-8
and lone surrogates become U+FFFD and are counted (:mod:`.text`).
"""

from .formats import FORMATS, TEXT_COLUMN, infer_format
from .readers import CaptionTable, read_table
from .writers import atomic_output, write_table

__all__ = ["FORMATS", "TEXT_COLUMN", "CaptionTable", "atomic_output", "infer_format", "read_table", "write_table"]
