"""What a file job tells of its progress, and the bars that show it (by default only when stderr is a terminal).

The passes (:mod:`.passes`) tell a :class:`Progress` the captions scored, batch by batch (``update``), and
each table read for scoring (``read``); a single-file job shows one bar over its rows, with a total and so an
ETA, a sharded job a bar over its shards and one over its rows; worker processes send their counts to the
main process.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from ..io.readers import is_parquet
from ..io.table import CaptionTable


class Progress(Protocol):
    """Where a task tells what it did."""

    def update(self, captions: int) -> object:
        """``captions`` more captions were scored."""

    def read(self, table: CaptionTable) -> None:
        """``table`` was read to be scored (one caption per row)."""


@dataclass(frozen=True)
class Counts:
    """Progress told to a callable (a worker's queue to the main process, a bar's ``update``) or nowhere."""

    update: Callable[[int], object] = lambda captions: None

    def read(self, table: CaptionTable) -> None:
        """Tables read are not shown."""


class RowBar:
    """A bar over a single-file job's rows: it moves as the scorer finishes batches, several times a second,
    and gets its total as tables are read: exact for a ready table and for Parquet (its metadata), estimated
    for a text file from the bytes read so far and its size (exact once read to the end); none for a stream."""

    def __init__(self, bar: Any, exact: int | None) -> None:
        self.bar, self.exact, self.rows = bar, exact, 0

    def update(self, captions: int) -> object:
        return self.bar.update(captions)

    def read(self, table: CaptionTable) -> None:
        self.rows += len(table)
        if self.exact is None and table.source is not None and table.fmt != "txt" and is_parquet(table.source):
            import pyarrow.parquet as pq

            self.exact = pq.ParquetFile(table.source).metadata.num_rows
        total = self.exact
        if total is None and table.bytes_read and table.source is not None:
            total = max(self.rows, round(self.rows * table.source.stat().st_size / table.bytes_read))
        if total is not None and total != self.bar.total:
            self.bar.total = total
            self.bar.refresh()


def shown(show: bool | None) -> bool:
    """Whether bars are drawn: ``None`` (the default) when stderr is a terminal."""
    return bool(show) if show is not None else sys.stderr.isatty()


@contextmanager
def row_bar(show: bool | None, exact: int | None) -> Iterator[Progress]:
    """A single-file job's :class:`RowBar` (``exact``: its row count where known up front), or none."""
    if not shown(show):
        yield Counts()
        return
    from tqdm.auto import tqdm

    with tqdm(unit="row", desc="icc rows") as bar:
        yield RowBar(bar, exact)


@dataclass
class ShardBars:
    """A sharded job's two bars: its shards written (``done``) and the captions scored (``update``)."""

    shards: Any
    rows: Any

    def update(self, captions: int) -> object:
        return self.rows.update(captions)

    def read(self, table: CaptionTable) -> None:
        """Shards are counted by the shard bar."""

    def done(self, task: Any) -> None:
        """A task finished: a shard is written when its ``write`` task is (a ``score`` task only scores it)."""
        if task.phase == "write":
            self.shards.update(1)


@contextmanager
def shard_bars(n_shards: int, n_done: int, show: bool | None) -> Iterator[ShardBars]:
    from tqdm.auto import tqdm

    disable = None if show is None else not show  # None: only when stderr is a terminal
    with (
        tqdm(total=n_shards, initial=n_done, unit="shard", desc="icc shards", position=0, disable=disable) as shards,
        tqdm(unit="row", desc="icc rows", position=1, disable=disable) as rows,
    ):
        yield ShardBars(shards, rows)
