"""Where a job's output goes: a file replaced atomically, or a stream (FIFO, device, ``/dev/stdout``) written into.

A layer over the package's one atomic writer (:mod:`modeling_icc.utils.atomic_files`) for the
special cases of a job's ``--output``: streams written in place, symlinks written through, a check
right before the rename, an output that is the input refused, a place that cannot be written
refused before any work.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ...utils.atomic_files import atomic_file, new_temp_file, remove_own_temp_file
from ...utils.errors import UserInputError
from ...utils.locations import Location, is_remote

if TYPE_CHECKING:
    from .table import CaptionTable

#: Paths naming an open descriptor of this process (``/dev/stdout`` when the shell sent it to a file, say).
_DESCRIPTOR_PATH = re.compile(r"/dev/(?:stdout|stderr)|/dev/fd/\d+|/proc/(?:self|thread-self|\d+)/fd/\d+")


@contextmanager
def atomic_output(
    path: str | os.PathLike | Location, before_rename: Callable[[], None] | None = None
) -> Iterator[BinaryIO]:
    """A binary stream that becomes ``path`` only when the block succeeds (see :mod:`~modeling_icc.utils.atomic_files`).

    What is not a regular file is never replaced: a FIFO, a character device and a path naming
    an open descriptor (``/dev/stdout``, ``/dev/fd/N``, also when the shell sent it to a file) are
    written into as they are (appending, as a stream: a reader sees rows as they come);
    a directory or another special file is refused. A symlink is written through: its
    target is replaced, the link kept. ``before_rename`` runs right before the rename (an error
    there leaves nothing behind either).
    """
    if not is_remote(path):  # an object store has no streams to write into, nor links: an object is uploaded whole
        path = Path(path)
        if writes_in_place(path):
            with _open_in_place(path) as stream:
                yield stream
            return
        if path.is_symlink():
            path = Path(os.path.realpath(path))
    with atomic_file(path, before_rename) as stream:
        yield stream


def writes_in_place(path: Path) -> bool:
    """Whether ``path`` is a stream to write into rather than a file to replace (see :func:`atomic_output`)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return True
    if stat.S_ISDIR(mode):
        raise UserInputError(f"the output {path} is a directory; name a file")
    if not stat.S_ISREG(mode):
        raise UserInputError(f"the output {path} is not a regular file, a FIFO or a character device; name a file")
    return bool(_DESCRIPTOR_PATH.fullmatch(os.path.abspath(path)))


@contextmanager
def _open_in_place(path: Path) -> Iterator[BinaryIO]:
    """``path`` opened for appending, never created or truncated (a FIFO waits here for its reader)."""
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_APPEND), "wb") as stream:
        yield stream


def refuse_writing_over_input(source: Path | BinaryIO | CaptionTable, output: Path, what: str = "--output") -> None:
    """Refuse an output that is the input file itself (by device and inode: also through symlinks and hard links).

    The output is renamed into place only at the end, so such a job would replace its input with its result.
    ``what`` names the output in the error.
    """
    try:
        written = os.stat(output)
        if isinstance(source, Path):
            read = os.stat(source)
        elif hasattr(source, "read") and hasattr(source, "fileno"):
            read = os.fstat(source.fileno())  # stdin redirected from the output file
        else:
            return
    except (OSError, ValueError):  # no output yet, or a stream without a file
        return
    same = (read.st_dev, read.st_ino) == (written.st_dev, written.st_ino)
    if same and stat.S_ISREG(written.st_mode):  # a terminal can be both stdin and --output /dev/stdout
        raise UserInputError(f"{what} {output} is the input file; write to another file (the input would be lost)")


def check_writable(path: str | os.PathLike, what: str = "output") -> Path:
    """``path`` if a file can be created there, else a one-line error: checked before a job does any work.

    The test is a real one (a temporary file created and removed where :func:`atomic_output`
    will write, or in the nearest existing folder above it), since permission bits do not
    tell what root may write (a read-only mount, ``/sys``, ``/proc``).
    """
    path = Path(path)
    if path.is_dir():
        raise UserInputError(f"the {what} {path} is a directory; name a file")
    if path.exists() and not path.is_file():  # a FIFO or a device is written where it is, not beside it
        return path
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise UserInputError(f"cannot write the {what} {path}: {folder} is not a directory")
    probe: str | None = None
    try:
        handle, probe = new_temp_file(folder / path.name)
        os.close(handle)
    except OSError as error:
        raise UserInputError(f"cannot write the {what} {path}: {error.strerror}") from None
    finally:
        remove_own_temp_file(folder / path.name, probe)
    return path
