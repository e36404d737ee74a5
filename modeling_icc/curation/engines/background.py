"""A file job's reading and writing, each in one background thread, side by side with scoring.

Why: a job reads table N+1 and writes table N-1 while it checks and scores table N. Parquet's decoding and
encoding, decompression, compression and the file system's calls release the GIL, and while the scoring
thread waits (on a GPU, on ONNX Runtime's threads, on the tokenizer processes' pipes) the others' Python runs
too. Each stage keeps its order: one thread runs its calls one after another, so every byte written is the
same as written in the scoring thread.

Bounded: at most :data:`AHEAD` calls wait or run beside the scoring thread's own. An error in a background
call is raised in the scoring thread, as it was raised (the same exception), at the next call given or when
the stage ends; a stage that ends on an error (Ctrl-C included) cancels its waiting calls and waits for the
running one (one table read or written) before the error goes on, so the file being written is closed, and
removed, after its last write.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

#: Tables a stage holds beyond the scoring thread's: one read ahead, one being written. One is enough to
#: overlap the stages (each takes less than scoring a table) and keeps memory at a few tables of
#: :data:`~modeling_icc.curation.io.tables.CHUNK_ROWS` rows.
AHEAD = 1

_END = object()


class Stage:
    """One background thread (``icc-NAME``) running the calls it is given in order, at most :data:`AHEAD` not
    yet waited for."""

    def __init__(self, name: str) -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"icc-{name}")
        self._pending: deque[Future] = deque()

    def submit(self, call: Callable[..., Any], *args: Any) -> None:
        """Run ``call(*args)`` after the calls before it, once fewer than :data:`AHEAD` wait (raising their error)."""
        while len(self._pending) >= AHEAD:
            self._pending.popleft().result()
        self._pending.append(self._thread.submit(call, *args))

    def next_result(self) -> Any:
        """The oldest call's result (raising its error)."""
        return self._pending.popleft().result()

    def finish(self) -> None:
        """Wait for every call given (raising the first error)."""
        while self._pending:
            self._pending.popleft().result()

    def stop(self) -> None:
        """Cancel the calls not started, wait for the running one, end the thread."""
        for future in self._pending:
            future.cancel()
        self._pending.clear()
        self._thread.shutdown(wait=True)


@contextmanager
def written_behind() -> Iterator[Callable[..., None]]:
    """``submit(call, *args)``: writes run in a background thread, in order; the block ends once all are done."""
    stage = Stage("write")
    try:
        yield stage.submit
        stage.finish()
    finally:
        stage.stop()


def read_ahead(items: Iterator[T]) -> Iterator[T]:
    """``items``, the next ones read in a background thread while the caller works on one (:data:`AHEAD` ahead).

    The thread starts with the first item asked for; closing this generator stops it, then closes ``items``
    (a reader's file) in the calling thread."""
    stage = Stage("read")
    try:
        stage.submit(next, items, _END)
        while True:
            item = stage.next_result()
            if item is _END:
                return
            stage.submit(next, items, _END)
            yield item
            del item  # not held while the next one is read
    finally:
        stage.stop()
        close = getattr(items, "close", None)
        if close is not None:
            close()
