"""Progress of scoring calls: the scorers' own bar, or a caller's report of captions scored.

Kept free of torch, so that jobs on lite import it at no cost.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

#: Seconds a call runs before its progress bar appears by default (when stderr is a terminal): quick
#: calls stay quiet, and any call that takes longer shows its rate and time left.
PROGRESS_DELAY = 2.0
#: Where a caller's own progress (a job's bar over its rows) is told of the captions scored, batch by batch.
_REPORT: ContextVar[Callable[[int], Any] | None] = ContextVar("icc_progress_report", default=None)


def progress_options(progress: bool | None) -> dict[str, Any]:
    """tqdm options of a scorer's own bar: ``True`` at once, ``False`` never, ``None`` on a terminal
    once a call has run :data:`PROGRESS_DELAY` seconds."""
    if progress is not None:
        return {"disable": not progress}
    return {"disable": not sys.stderr.isatty(), "delay": PROGRESS_DELAY}


@contextmanager
def reporting_to(report: Callable[[int], Any]) -> Iterator[None]:
    """Inside the block, scorers tell ``report`` the captions of each finished batch instead of drawing
    their own bar (a job shows one bar over all its rows, moving as batches finish)."""
    token = _REPORT.set(report)
    try:
        yield
    finally:
        _REPORT.reset(token)


def current_report() -> Callable[[int], Any] | None:
    """The report set by :func:`reporting_to` around this call, if any."""
    return _REPORT.get()
