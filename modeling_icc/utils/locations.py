"""Where a job reads and writes: local paths, or fsspec URLs (``s3://``, ``gs://``, ``hf://``, ``memory://``).

A local path (also ``file://``) stays a :class:`pathlib.Path`, with every guarantee of local files (a temporary
file renamed into place, locks). Any other URL becomes a :class:`upath.UPath` (universal_pathlib), which
offers the same ``pathlib`` calls over the URL's fsspec filesystem, so the engines read and write both
through one set of calls. Credentials and endpoints come from each filesystem's own environment and
configuration (``AWS_*``, ``~/.aws``, ``FSSPEC_S3_ENDPOINT_URL``, ``HF_TOKEN`` ...), never from icc; a URL
of an object store that carries credentials (``s3://KEY:SECRET@bucket/...``, which s3fs would read as a
bucket name) is refused, and those a URL may carry (``http://user:PASSWORD@host/...``) are never recorded
or printed (:mod:`.redaction`). Every filesystem is opened with timeouts, bounded retries and no listing
cache (:mod:`.remote_options`), and its answers are taken as they come: only "not found" means absent
(:func:`kind`), never a timeout or a refusal.

Object stores differ from disks in two ways the writers rely on (:mod:`.atomic_files`): an object appears only
when uploaded whole, so a file is written locally and uploaded as one object; and nothing renames or locks
atomically, so a job's completion markers are written after the data they vouch for.
"""

from __future__ import annotations

import glob
import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, BinaryIO, Union

from .errors import UserInputError
from .redaction import has_user_info, public_url, redact, remember
from .remote_options import TIMEOUT_ENV, bounded, storage_options, timeout

if TYPE_CHECKING:
    from upath import UPath

#: A file or folder: local, or remote (a ``UPath`` that is not a ``Path``).
Location = Union[Path, "UPath"]
#: Protocols fsspec means the local disk by.
_LOCAL_PROTOCOLS = frozenset({"file", "local"})
#: Stores whose filesystems take credentials from their own configuration only: user info in their URLs
#: would be read as part of the bucket's name.
_NO_URL_CREDENTIALS = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "hf", "memory"})


def location(name: str | os.PathLike | UPath) -> Location:
    """``name`` as a ``Path`` (a local path or ``file://`` URL) or, for any other URL, a ``UPath``."""
    if is_remote(name):
        return name
    if isinstance(name, str) and "://" in name:
        from fsspec.utils import get_protocol

        remember(name)
        protocol = get_protocol(name)
        if protocol in _LOCAL_PROTOCOLS and name.startswith(f"{protocol}://"):
            return Path(name.split("://", 1)[1])
        if protocol in _NO_URL_CREDENTIALS and has_user_info(name):
            raise UserInputError(
                f"{public_url(name)}: credentials cannot be given in {protocol}:// URLs (they would be read as "
                "part of the bucket's name): remove them, and give them as the store's library reads them (S3: "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or ~/.aws; GCS: GOOGLE_APPLICATION_CREDENTIALS; the "
                "Hub: HF_TOKEN)"
            )
        from fsspec.registry import known_implementations, registry
        from upath import UPath

        known = protocol in known_implementations or protocol in registry
        try:
            place = UPath(name, **(storage_options(protocol) if known else {}))
            bounded(place.fs)  # its library is imported here: a missing one is named now, in one line
        except ImportError as error:
            raise UserInputError(
                f"{public_url(name)}: {error} (s3:// needs pip install 'icc-concreteness[s3]', gs:// '[gcs]')"
            ) from None
        except ValueError as error:  # fsspec knows no such protocol
            raise UserInputError(redact(f"{name}: {error}")) from None
        if place.protocol != protocol:  # read as a local path with "://" in it: neither a path nor a URL
            raise UserInputError(
                f"{public_url(name)}: not a URL of a filesystem fsspec knows (s3://, gs://, hf://, ...)"
            )
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
    """``place`` opened for reading from start to end, as a stream that can peek (a remote file's is buffered
    for that). An HTTP(S) file is streamed in one request: it needs no Range requests, which not every
    server answers."""
    streamed = is_remote(place) and _is_http(place)
    stream = place.fs.open(place.path, "rb", block_size=0) if streamed else place.open("rb")
    return stream if hasattr(stream, "peek") else io.BufferedReader(stream)


@contextmanager
def open_to_seek(place: Location, what: str) -> Iterator[BinaryIO]:
    """``place`` opened for reading by seeks (``what`` needs them: a Parquet file's footer, a tar's members).
    A web server that does not answer Range requests is a one-line error naming the URL."""
    with place.open("rb") as stream:
        try:
            yield stream
        except ValueError as error:  # fsspec's HTTP file, when the server sends the whole file for a range
            if not (is_remote(place) and _is_http(place) and "range requests" in str(error)):
                raise
            raise UserInputError(
                f"{public_url(str(place))}: the server does not answer HTTP Range requests, which reading {what} "
                "needs (it reads parts of the file by their position); download the file and pass the local copy"
            ) from None


def _is_http(place: UPath) -> bool:
    return place.protocol in ("http", "https")


def kind(place: Location) -> str | None:
    """``"file"``, ``"directory"`` or another kind, or ``None`` where nothing is there. On a remote
    filesystem only "not found" means nothing is there: a timeout, a refusal or an offline Hub is raised
    (fsspec's ``exists``, ``is_file`` and ``is_dir`` answer ``False`` for any failure)."""
    if not is_remote(place):
        if place.is_file():
            return "file"
        if place.is_dir():
            return "directory"
        return "other" if place.exists() else None
    try:
        info = place.fs.info(place.path)
    except FileNotFoundError as error:
        cause = error.__cause__  # fsspec's HTTP filesystem says "not found" for any failure: its cause tells
        if _is_http(place) and cause is not None and getattr(cause, "status", None) not in (404, 410):
            raise cause from None
        return None
    return info.get("type") or "file"


def is_file(place: Location) -> bool:
    """Whether ``place`` is a file (see :func:`kind`: a remote failure is raised, not answered ``False``)."""
    return kind(place) == "file"


def is_dir(place: Location) -> bool:
    """Whether ``place`` is a folder (see :func:`kind`)."""
    return kind(place) == "directory"


def pure(place: str | os.PathLike | UPath) -> PurePosixPath:
    """The name part of ``place`` for suffix and stem arithmetic (a URL's path, a local path as it is; a web
    URL's query, such as a presigned URL's signature, is no part of its name)."""
    if not is_remote(place):
        return PurePosixPath(os.fspath(place))
    return PurePosixPath(_without_query(place.path) if _is_http(place) else place.path)


def is_pattern(name: str) -> bool:
    """Whether ``name`` is a glob pattern (``*``, ``?``, ``[``) in its path: a web URL's query
    (``?X-Amz-Signature=...``) makes none."""
    from fsspec.utils import get_protocol

    if "://" in name and get_protocol(name) in ("http", "https"):
        name = _without_query(name)
    return glob.has_magic(name)


def _without_query(url: str) -> str:
    return url.split("?", 1)[0].split("#", 1)[0]


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
    return {"path": public_url(str(place)), "bytes": info.get("size"), "checksum": place.fs.checksum(place.path)}


def remove_tree(place: Location) -> None:
    """Remove a folder and what it holds, if it is there (a job's work files once it is done)."""
    if is_remote(place):
        if kind(place) is not None:
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
        if _is_timeout(error):
            reason += (
                f" (the server did not answer within {timeout():g} s, {TIMEOUT_ENV}, in any of its tries: run the "
                "same command again once it answers)"
            )
        raise UserInputError(redact(f"cannot read or write {place}: {type(error).__name__}: {reason}")) from None


#: The libraries of the stores icc reads and writes through fsspec: their errors are the store's.
_STORE_LIBRARIES = frozenset({"botocore", "aiobotocore", "s3fs", "gcsfs", "google", "huggingface_hub", "aiohttp"})


def _is_storage_error(error: BaseException) -> bool:
    """OS-level errors (fsspec's FileNotFoundError, PermissionError ...) and the storage clients' own."""
    return isinstance(error, OSError) or raised_by_store(error)


def raised_by_store(error: BaseException) -> bool:
    """Whether ``error`` is a storage client's own (a timeout, a refused request), not the data's: a reader
    that reports unreadable data must let it pass (:func:`storage_errors` names the store)."""
    return (type(error).__module__ or "").split(".")[0] in _STORE_LIBRARIES or _is_timeout(error)


def _is_timeout(error: BaseException) -> bool:
    return isinstance(error, TimeoutError) or "Timeout" in type(error).__name__
