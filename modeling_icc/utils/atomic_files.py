"""The one atomic writer: files that appear only when complete, whatever module writes them.

Every file the package writes (outputs, shards, JSON records, cards, figures) goes through
:func:`atomic_file`, so one set of guarantees holds everywhere:

- the data goes to a hidden temporary file beside the target (``.NAME.icc-XXXXXXXX.tmp``), renamed
  over the target only when the block succeeds: a reader never sees a half-written file;
- on any error (also ``KeyboardInterrupt`` or ``SystemExit``) the temporary file is removed;
- the temporary file is locked while it is written, so one left by a killed process (nothing holds its
  lock) is removed by the next write of the same path, and a running writer's never is;
- the file gets the permissions of any new file (the umask's), not ``mkstemp``'s 0600.

Nothing is written through a link: temporary files are created new (``O_EXCL``), a symlink at the
target is replaced by the file (layers that write through links resolve them first: a job's ``--output``),
and a work file is opened again only as the regular file it was made (:func:`open_work_file`).
On an object store (a remote location, :mod:`.locations`) nothing renames atomically, but an object
appears only once uploaded whole: the data go to a local temporary file (removed in any case) and are
uploaded as one object when the block succeeds, so a failed or killed block leaves nothing there. The
local copy lies in a folder ``TMPDIR/icc-upload-XXXXXXXX/`` locked while it is used, so the folders a
killed job left are removed by the next upload, and a running job's never are.
"""

from __future__ import annotations

import errno
import fcntl
import glob
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

from .locations import Location, is_remote

#: Marks the temporary files of :func:`atomic_file` (``.NAME.icc-XXXXXXXX.tmp``).
TEMP_MARK = ".icc-"


@contextmanager
def atomic_file(
    path: str | os.PathLike | Location, before_rename: Callable[[], None] | None = None
) -> Iterator[BinaryIO]:
    """A binary stream that becomes ``path`` only when the block succeeds (see the module docstring);
    ``before_rename`` runs right before the file is renamed (uploaded) into place: an error there leaves
    nothing behind either."""
    if is_remote(path):
        with _uploaded_whole(path) as stream:
            yield stream
            if before_rename is not None:
                before_rename()
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temp_files(path)
    temp_name: str | None = None
    lock: int | None = None
    try:
        handle, temp_name = new_temp_file(path)
        lock = os.dup(handle)  # the lock lasts until after the rename, past the stream's close
        with suppress(OSError):  # a file system without locks: then no run can remove it either
            fcntl.flock(lock, fcntl.LOCK_EX)
        with os.fdopen(handle, "wb") as stream:
            yield stream
        if before_rename is not None:
            before_rename()
        os.fchmod(lock, 0o666 & ~_current_umask())  # the file made, never what its name may point at now
        os.replace(temp_name, path)
    except BaseException:
        remove_own_temp_file(path, temp_name)
        raise
    finally:
        if lock is not None:
            os.close(lock)


#: The folders of local copies being uploaded (``TMPDIR/icc-upload-XXXXXXXX``), locked while used.
UPLOAD_FOLDER_PREFIX = "icc-upload-"


@contextmanager
def _uploaded_whole(place: Location) -> Iterator[BinaryIO]:
    """A local temporary file uploaded to the remote ``place`` as one object when the block succeeds."""
    with _upload_folder() as folder:
        local = folder / place.name
        # Through a descriptor, as atomic_file's streams: writers see the same nameless stream (gzip, for
        # one, would write a file name into its header), so both write the same bytes.
        with os.fdopen(os.open(local, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as stream:
            yield stream
        place.fs.put_file(os.fspath(local), place.path)
        place.fs.invalidate_cache()


@contextmanager
def _upload_folder() -> Iterator[Path]:
    """A new folder ``TMPDIR/icc-upload-XXXXXXXX``, locked for the block (the OS drops the lock if the process
    dies), then removed; those of dead jobs are removed first (:func:`remove_dead_upload_folders`)."""
    remove_dead_upload_folders()
    made = Path(tempfile.mkdtemp(prefix=f".{UPLOAD_FOLDER_PREFIX}"))
    handle = os.open(made, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        with suppress(OSError):  # a file system without locks: then no run can remove it either
            fcntl.flock(handle, fcntl.LOCK_EX)
        folder = made.with_name(made.name[1:])
        os.rename(made, folder)  # named so that the next job's clean-up sees it only once it is locked
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        os.close(handle)


def remove_dead_upload_folders() -> None:
    """Remove the upload folders (:data:`UPLOAD_FOLDER_PREFIX`) of jobs that are gone: this user's folders
    (never followed through a link) whose lock no running job holds."""
    for folder in Path(tempfile.gettempdir()).glob(f"{UPLOAD_FOLDER_PREFIX}*"):
        try:
            handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:  # gone, a link, or not a folder
            continue
        try:
            if os.fstat(handle).st_uid != os.geteuid():
                continue
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            shutil.rmtree(folder)  # removes links inside, never what they point at
        except OSError:  # in use by a running job, or gone meanwhile
            continue
        finally:
            os.close(handle)


def write_bytes(path: str | os.PathLike | Location, data: bytes) -> Location:
    """Write ``data`` to ``path`` atomically."""
    with atomic_file(path) as stream:
        stream.write(data)
    return path if is_remote(path) else Path(path)


def write_text(path: str | os.PathLike | Location, text: str) -> Location:
    """Write ``text`` to ``path`` atomically, as UTF-8 with its line ends as they are."""
    return write_bytes(path, text.encode("utf-8"))


def copy_file(source: str | os.PathLike, path: str | os.PathLike | Location) -> Location:
    """``source``'s bytes written to ``path`` atomically (a link at ``path`` is replaced, never written through)."""
    with open(source, "rb") as read, atomic_file(path) as stream:
        shutil.copyfileobj(read, stream)
    return path if is_remote(path) else Path(path)


@contextmanager
def files_moved_into(folder: str | os.PathLike) -> Iterator[Path]:
    """A fresh hidden scratch folder inside ``folder`` for a library that writes files by name (``save_pretrained``):
    when the block succeeds, each file written there is renamed into ``folder`` at the same relative path (over a
    link there: replaced, never written through); the scratch folder is removed in any case."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=f"{TEMP_MARK}scratch-") as scratch:
        yield Path(scratch)
        for file in sorted(Path(scratch).rglob("*")):
            if file.is_file() and not file.is_symlink():
                target = folder / file.relative_to(scratch)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(file, target)


@contextmanager
def temp_file_beside(path: str | os.PathLike) -> Iterator[Path]:
    """An empty work file named as :func:`atomic_file`'s temporary files for ``path``, locked, removed at the end.

    A job keeps what it needs between passes here: if it is killed, the next job writing ``path`` (or
    asking for such a file) removes the file, as it removes a dead writer's temporary output.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temp_files(path)
    handle: int | None = None
    name: str | None = None
    try:
        handle, name = new_temp_file(path)
        with suppress(OSError):  # a file system without locks: then no run can remove it either
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield Path(name)
    finally:
        remove_own_temp_file(path, name)
        if handle is not None:
            os.close(handle)


#: How :func:`open_work_file` opens a file for each mode: never through a link, never truncated on opening.
_WORK_FILE_FLAGS = {
    "rb": os.O_RDONLY,
    "wb": os.O_WRONLY | os.O_CREAT,
    "ab": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
}


def open_work_file(path: str | os.PathLike, mode: str = "rb") -> BinaryIO:
    """A work file of this job (one :func:`temp_file_beside` made) opened again by its name: ``"rb"``, ``"wb"``
    (emptied) or ``"ab"``, created if missing, but never through a symlink (``O_NOFOLLOW``) nor into anything
    other than a regular file with one name (a hard link to another file is not emptied): such a file is an
    ``OSError`` naming it, and nothing is written."""
    handle = os.open(path, _WORK_FILE_FLAGS[mode] | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o666)
    status = os.fstat(handle)
    if not stat.S_ISREG(status.st_mode) or status.st_nlink > 1:
        os.close(handle)
        raise OSError(errno.EMLINK, "not the work file this job made (a link or a special file took its place)", path)
    os.set_blocking(handle, True)
    if mode == "wb":
        os.ftruncate(handle, 0)
    return os.fdopen(handle, mode)


def not_our_file(path: object, what: str) -> str:
    """The error for something other than a regular file (``what``: "a symbolic link", ...) where icc keeps a
    file of its own (a lock, a record, a work folder): never written through, never removed by icc."""
    return (
        f"{path} is {what}, where icc keeps a file of its own (it never writes through a link): "
        "remove it and run the command again"
    )


def remove_quietly(path: str | os.PathLike) -> None:
    """Remove a work file if the folder lets us: a clean-up that fails (the folder turned read-only) must not
    replace the error being raised, which names what failed; the next run removes the file."""
    with suppress(OSError):
        Path(path).unlink(missing_ok=True)


def new_temp_file(path: str | os.PathLike) -> tuple[int, str]:
    """A new hidden file next to ``path`` (``.NAME.icc-XXXXXXXX.tmp``): its descriptor and name."""
    path = Path(path)
    return tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}{TEMP_MARK}", suffix=".tmp")


def remove_own_temp_file(path: str | os.PathLike, name: str | None) -> None:
    """Remove the temporary file this writer made for ``path``, by its ``name``; with no name yet (a Ctrl-C that
    landed inside :func:`new_temp_file`, after the file was made), every unlocked one of ``path``'s, ours among
    them (it is not locked yet)."""
    if name is None:
        remove_stale_temp_files(path)
    else:
        remove_quietly(name)


def remove_stale_temp_files(path: str | os.PathLike) -> None:
    """Remove the temporary files of :func:`atomic_file` for ``path`` whose writer is gone.

    Only regular files named as ours are considered, and only those whose lock can
    be taken (a running writer holds it), so a concurrent job's file is never touched.
    """
    path = Path(path)
    _remove_unlocked(path.parent.glob(f".{glob.escape(path.name)}{TEMP_MARK}*.tmp"))


def remove_dead_temp_files(directory: str | os.PathLike) -> None:
    """Remove the temporary files of :func:`atomic_file` in ``directory`` whose writer is gone (a killed run's),
    never one a running writer holds (another job writing into the same folder)."""
    _remove_unlocked(Path(directory).glob(f".*{TEMP_MARK}*.tmp"))


def _remove_unlocked(temps: Iterable[Path]) -> None:
    for temp in temps:
        try:
            handle = os.open(temp, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if not stat.S_ISREG(os.fstat(handle).st_mode):
                continue
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            temp.unlink()
        except OSError:  # locked by a running writer, or already gone
            continue
        finally:
            os.close(handle)


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
