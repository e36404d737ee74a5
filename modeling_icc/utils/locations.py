"""Where a job reads and writes: local paths, or fsspec URLs (``s3://``, ``gs://``, ``hf://``, ``memory://``).

A local path (also ``file://``) stays a :class:`pathlib.Path`, with every guarantee of local files (a temporary
file renamed into place, locks). Any other URL becomes a :class:`upath.UPath` (universal_pathlib), which
offers the same ``pathlib`` calls over the URL's fsspec filesystem, so the engines read and write both
through one set of calls. Credentials and endpoints come from each filesystem's own environment and
configuration (``AWS_*``, ``~/.aws``, ``FSSPEC_S3_ENDPOINT_URL``, ``HF_TOKEN`` ...), never from icc.

Object stores differ from disks in two ways the writers rely on (:mod:`.atomic_files`): an object appears only
when uploaded whole, so a file is written locally and uploaded as one object; and nothing renames or locks
atomically, so a job's completion markers are written after the data they vouch for.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, BinaryIO, Union

from .errors import UserInputError

if TYPE_CHECKING:
    from upath import UPath

#: A file or folder: local, or remote (a ``UPath`` that is not a ``Path``).
Location = Union[Path, "UPath"]
#: Protocols fsspec means the local disk by.
_LOCAL_PROTOCOLS = frozenset({"file", "local"})


def location(name: str | os.PathLike | UPath) -> Location:
    """``name`` as a ``Path`` (a local path or ``file://`` URL) or, for any other URL, a ``UPath``."""
    if is_remote(name):
        return name
    if isinstance(name, str) and "://" in name:
        from fsspec.utils import get_protocol

        protocol = get_protocol(name)
        if protocol in _LOCAL_PROTOCOLS and name.startswith(f"{protocol}://"):
            return Path(name.split("://", 1)[1])
        from upath import UPath

        try:
            place = UPath(name)
            _filesystem = place.fs  # its library is imported here: a missing one is named now, in one line
        except ImportError as error:
            raise UserInputError(
                f"{name}: {error} (s3:// needs pip install 'icc-concreteness[s3]', gs:// '[gcs]')"
            ) from None
        except ValueError as error:  # fsspec knows no such protocol
            raise UserInputError(f"{name}: {error}") from None
        if place.protocol != protocol:  # read as a local path with "://" in it: neither a path nor a URL
            raise UserInputError(f"{name}: not a URL of a filesystem fsspec knows (s3://, gs://, hf://, ...)")
        return place
    return Path(name)


def is_remote(place: object) -> bool:
    """Whether ``place`` is a remote location (a ``UPath`` that is not a local ``Path``)."""
    if isinstance(place, Path | str | bytes) or not hasattr(place, "protocol"):
        return False
    return place.protocol not in _LOCAL_PROTOCOLS


def is_url(name: object) -> bool:
    """Whether ``name`` names a remote location (a URL whose protocol is not the local disk's)."""
    return is_remote(location(name)) if isinstance(name, str) else is_remote(name)


def open_to_read(place: Location) -> BinaryIO:
    """``place`` opened for reading as a stream that can peek (a remote file's is buffered for that)."""
    stream = place.open("rb")
    return stream if hasattr(stream, "peek") else io.BufferedReader(stream)


def pure(place: str | os.PathLike | UPath) -> PurePosixPath:
    """The name part of ``place`` for suffix and stem arithmetic (a URL's path, a local path as it is)."""
    return PurePosixPath(place.path if is_remote(place) else os.fspath(place))


def glob_remote(pattern: UPath) -> list[UPath]:
    """The files matching a remote ``pattern`` (``**`` allowed), sorted, as locations of the same filesystem."""
    from upath import UPath

    fs = pattern.fs
    found = [path for path, info in fs.glob(pattern.path, detail=True).items() if info.get("type") == "file"]
    return [UPath(fs.unstrip_protocol(path), **pattern.storage_options) for path in sorted(found)]


def fingerprint(place: Location) -> dict[str, object]:
    """What tells whether an input changed between two runs: its path, size and modification stamp (local), or
    its URL, size and the filesystem's checksum of its current version (S3: the ETag, so the same bytes
    uploaded again are the same input)."""
    if not is_remote(place):
        status = place.stat()
        return {"path": str(place.resolve()), "bytes": status.st_size, "mtime_ns": status.st_mtime_ns}
    info = place.fs.info(place.path)
    return {"path": str(place), "bytes": info.get("size"), "checksum": place.fs.checksum(place.path)}


def remove_tree(place: Location) -> None:
    """Remove a folder and what it holds, if it is there (a job's work files once it is done)."""
    if is_remote(place):
        if place.fs.exists(place.path):
            place.fs.rm(place.path, recursive=True)
        place.fs.invalidate_cache()
        return
    import shutil

    shutil.rmtree(place, ignore_errors=True)


@contextmanager
def storage_errors(place: object) -> Iterator[None]:
    """Failures of a remote filesystem (no bucket, no credentials, a key gone, the network) as one line each,
    naming ``place``; local errors pass as they are."""
    if not is_url(place):
        yield
        return
    try:
        yield
    except UserInputError:
        raise
    except Exception as error:  # each filesystem library raises its own kinds; all stop the job the same way
        if not _is_storage_error(error):
            raise
        reason = " ".join(str(error).split()) or type(error).__name__
        raise UserInputError(f"cannot read or write {place}: {type(error).__name__}: {reason}") from None


def _is_storage_error(error: BaseException) -> bool:
    """OS-level errors (fsspec's FileNotFoundError, PermissionError ...) and the storage clients' own."""
    if isinstance(error, OSError):
        return True
    module = type(error).__module__ or ""
    return module.split(".")[0] in {"botocore", "aiobotocore", "s3fs", "gcsfs", "google", "huggingface_hub", "aiohttp"}
