"""One resume protocol for jobs that write many units (shards) into one output directory.

Sharded curation jobs (``icc score|filter --output-dir``) and teacher scoring
(:func:`~modeling_icc.teachers.scoring.score_to_shards`) both follow it; docs/curation.md
("Resuming a job") describes it for users:

- one job per directory at a time (:func:`locked` holds :data:`LOCK_FILE`: a lock file on a disk, a lease
  object on an object store, :mod:`.leases`);
- :data:`RUN_FILE` records the job's settings and inputs (:func:`bind_settings`); once the directory
  holds saved work, a re-run must match them, else a one-line error names the settings that differ.
  The settings of a run that saved nothing are simply replaced, and saved work without a
  :data:`RUN_FILE` is refused, so runs are never mixed;
- every unit is written atomically (:mod:`.atomic_files`) and is done when the last file written
  for it is there: a re-run skips done units and redoes the others, so no row is lost or written twice;
- temporary files of a killed run are removed (:func:`remove_partial_files`).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .atomic_files import not_our_file, remove_dead_temp_files, remove_quietly
from .errors import UserInputError
from .leases import leased
from .locations import Location, is_file, is_remote, kind
from .provenance import write_json
from .redaction import public_url

#: The job's settings and inputs, which a resumed run must match.
RUN_FILE = "_run.json"
#: Held while a job runs; removed when it ends.
LOCK_FILE = ".icc.lock"


def bind_settings(
    directory: Path,
    settings: dict[str, Any],
    *,
    holds_work: bool,
    advice: str,
    record: dict[str, Any] | None = None,
    explain: Callable[[dict[str, Any], list[str]], str | None] | None = None,
    added_later: dict[str, Any] | None = None,
) -> None:
    """Record ``settings`` (plus ``record``, kept but not compared) in ``directory``'s :data:`RUN_FILE`, or,
    if it ``holds_work``, check them against the recorded ones (:func:`recorded_settings`).

    A difference is a one-line error: ``explain(previous, changed)`` where it says more, else
    ``DIR holds a run with different KEYS; ADVICE``.
    """
    path = directory / RUN_FILE
    if holds_work and is_file(path):
        previous = recorded_settings(directory, added_later)
        changed = [key for key in settings if previous.get(key) != settings[key]]
        if changed:
            message = explain(previous, changed) if explain is not None else None
            raise UserInputError(message or f"{directory} holds a run with different {', '.join(changed)}; {advice}")
        return
    if holds_work:
        raise UserInputError(f"{directory} holds saved work but no {RUN_FILE}, so its settings are unknown; {advice}")
    write_json(path, {**settings, **(record or {})})


def recorded_settings(directory: Path, added_later: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """What :func:`bind_settings` recorded in ``directory``, or ``None``. ``added_later``: settings recorded only
    since a later version, with the value every earlier run had, so that a directory an earlier version started
    still resumes."""
    path = directory / RUN_FILE
    return {**(added_later or {}), **json.loads(path.read_text(encoding="utf-8"))} if is_file(path) else None


def remove_partial_files(directories: Sequence[Path]) -> None:
    """Temporary files of a run that was killed mid-write (never renamed into place); a temporary file
    that a running writer still holds (another job writing into the same folder) is left alone."""
    for directory in directories:
        if not is_remote(directory):  # objects are uploaded whole: a killed run leaves none half-written
            remove_dead_temp_files(directory)


@contextmanager
def locked(directory: Location, notice: Callable[[str], None] | None = None) -> Iterator[Callable[[], None]]:
    """One job per directory at a time (the OS drops the lock if the job dies); creates ``directory``.

    An object store has no such lock (nor folders to create): there the job holds a lease,
    :data:`LOCK_FILE` as an object (:mod:`.leases`; ``notice`` tells of one taken over from a job that is
    gone). Yields the check to call before each commit: it raises if the lease was lost.
    """
    if kind(directory) not in (None, "directory"):
        raise UserInputError(f"the output directory {directory} is an existing file; choose a directory")
    if is_remote(directory):
        with leased(directory / LOCK_FILE, public_url(str(directory)), notice, guards=directory, under=True) as lease:
            yield lease.check
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UserInputError(f"cannot create the output directory {directory}: {error.strerror}") from None
    with exclusive(
        directory / LOCK_FILE,
        busy=f"another icc job is writing to {directory}",
        unwritable=f"cannot write to the output directory {directory}",
    ):
        yield _still_held


def _still_held() -> None:
    """A lock the OS holds for this process is held until it ends: nothing to check."""


@contextmanager
def exclusive(path: Path, busy: str, unwritable: str) -> Iterator[None]:
    """Hold the lock file ``path`` for the block (the OS drops the lock if the process dies); ``busy`` is the
    error when another job holds it, ``unwritable`` (with the reason) when it cannot be created.

    The lock file is opened without following a link and never truncated (:func:`open_lock_file`): what
    stands at ``path`` other than a regular file (a symlink, a FIFO, a folder) is refused, and no file
    is ever written through it. The lock file is removed when the block ends, still locked. A job that
    opened it just before and locks it just after would hold a lock on a file no longer there,
    so a lock counts only when the path still names the locked file.
    """
    while True:
        handle = open_lock_file(path, unwritable)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(handle)
            raise UserInputError(busy) from None
        if _same_file(handle, path):
            break
        os.close(handle)  # removed by the job that held it: lock the file that stands there now
    try:
        yield
    finally:
        _release(path, handle)


def open_lock_file(path: Path, unwritable: str) -> int:
    """A descriptor of the lock file ``path``, created if missing: never through a link (``O_NOFOLLOW``), never
    truncated, and only a regular file (a lock file holds nothing; one left by a killed job is taken over)."""
    try:
        handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UserInputError(not_our_file(path, "a symbolic link")) from None
        if error.errno == errno.EISDIR:
            raise UserInputError(not_our_file(path, "a directory")) from None
        raise UserInputError(f"{unwritable}: {error.strerror}") from None  # a read-only folder
    if not stat.S_ISREG(os.fstat(handle).st_mode):
        os.close(handle)
        raise UserInputError(not_our_file(path, "not a regular file"))
    return handle


def _release(path: Path, handle: int) -> None:
    """Remove the lock file, then unlock it by closing it. A removal that fails (the folder turned
    read-only) is no error: the job's own error is the one to report, and a lock file left behind locks
    nothing once closed."""
    remove_quietly(path)
    os.close(handle)


def _same_file(handle: int, path: Path) -> bool:
    try:
        named = path.stat()
    except FileNotFoundError:
        return False
    opened = os.fstat(handle)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)
