"""One writer per output on an object store: a lease object, created only where none is (a conditional put).

An object store has no lock that the system drops when its process dies, nor an atomic rename. A job that
writes to a remote output holds a *lease* instead: a small JSON object beside what it writes
(``PREFIX/.icc.lock`` for an output directory, ``.NAME.icc.lock`` beside a single output file) naming
its holder (a random id, host, process, start time) and how long it lasts unless renewed.

The protocol, on S3 (s3fs; AWS and S3-compatible servers with conditional writes):

1. **Take.** The lease is created with ``PutObject`` and ``If-None-Match: *``, which succeeds only where
   no object has that name (a second one gets ``412 Precondition Failed``): of jobs starting together,
   exactly one creates it. The others read it and stop with one line naming its holder.
2. **Renew.** While the job runs, a thread rewrites the lease every quarter of its term (``If-Match`` on
   the ETag of its own last write, so it never overwrites another job's lease).
3. **Lapse.** A lease not renewed for its term (:data:`LEASE_SECONDS`; its age is measured by the server's
   clock: the ``Date`` of the answer against the object's ``LastModified``) has lapsed: its job is gone or
   cut off from the store. The next job takes it over with ``If-Match`` on the ETag it read, so of two jobs
   taking over together, one wins; it says so in a notice. A holder on this machine (same host, boot and
   PID namespace) whose process is gone is known to be gone: its lease is taken over at once.
   Holding the lease, a job aborts the unfinished multipart uploads under what it guards: no other job
   writes there, so they are a killed job's (whose parts S3 would keep, and bill, until aborted).
4. **Release.** A job that ends (also by an error or Ctrl-C) deletes the lease if it is still its own.
   One killed with ``kill -9`` cannot: the next run on the same machine takes it over at once, one elsewhere
   once it lapses (the refusal says in how many seconds).
5. **Lost.** A job that finds its lease replaced, or cannot renew it for a whole term (the store unreachable),
   has lost it: it stops before its next commit, in one line (:meth:`Lease.check`).

What it guarantees: two jobs never hold one lease at once while both reach the store, so two jobs never
write one output prefix (or one output file) together; a live job's lease is never taken over; and no job is
locked out for longer than a term after its holder died. What it does not: a job cut off from the store for
longer than a term (a suspended machine) may complete the one write it was making when it comes back, before
it learns that its lease was taken (only a store that checked a token on every write could prevent that:
fencing); the outputs' record (``_run.json``) is checked again before a job reports them finished, so such a
mix is refused rather than reported (:mod:`~modeling_icc.curation.engines.output_dir`).

Other stores (GCS, the Hub, ``memory://``: no conditional writes through fsspec, or a commit per write) get
the same lease object without renewal: it is created where none is (a check, then a write, so two jobs
starting at the same instant could both proceed), released at the end, taken over at once from a holder
on this machine that is gone, and otherwise stands until its holder ends: the refusal says which object
to delete if that job was stopped.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import UserInputError
from .redaction import public_url

if TYPE_CHECKING:
    from upath import UPath

#: A lease's term: lapsed when not renewed for this long (it is renewed every quarter of it).
LEASE_SECONDS = 120.0
#: At most this long is spent releasing a lease when a job ends (a store that stopped answering must not
#: hold up Ctrl-C: the lease lapses instead).
RELEASE_SECONDS = 2.0
_FORMAT = 1


@dataclass(frozen=True)
class _Seen:
    """A lease as read: its holder's record (``None``: unreadable), its version and its age in seconds
    (``None``: unknown)."""

    holder: dict[str, Any] | None
    version: str | None
    age: float | None


class LeaseLost(UserInputError):
    """This job's lease was taken over, or could not be renewed for a whole term."""


class Lease:
    """A lease held on ``place`` (see the module docstring); :meth:`check` raises :class:`LeaseLost` once lost."""

    def __init__(self, place: UPath, where: str, seconds: float | None) -> None:
        self.place, self.where, self.seconds = place, where, seconds
        self.owner = uuid.uuid4().hex
        self._started = _now()
        self._version: str | None = None
        self._renewed = time.monotonic()
        self._lost: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def conditional(self) -> bool:
        """Whether the store writes the lease conditionally (S3): then it is renewed and lapses."""
        return _is_s3(self.place)

    def check(self) -> None:
        """Raise :class:`LeaseLost` if this job no longer holds its lease (before anything is committed)."""
        if self._lost is not None:
            raise LeaseLost(self._lost)

    # -- taking, renewing, releasing --------------------------------------------------------------------

    def take(self, notice: Callable[[str], None]) -> None:
        """Create the lease, or take over a lapsed one or one whose holder is gone; else a one-line error."""
        for _ in range(3):  # a lease released or taken while we looked: look again
            if self._create():
                return
            seen = self._read()
            if seen is None:
                continue
            gone = _holder_gone(seen.holder)
            lapsed = self._lapsed(seen)
            if not (gone or lapsed):
                raise UserInputError(self._busy(seen))
            if self._replace(seen.version):
                notice(self._taken_over(seen, gone))
                return
        raise UserInputError(f"another icc job is taking {self.where} at the same time; run this command again")

    def start_renewing(self) -> None:
        if self.conditional and self.seconds:
            self._thread = threading.Thread(target=self._renew_loop, name="icc-lease", daemon=True)
            self._thread.start()

    def release(self) -> None:
        """Stop renewing and delete the lease if it is still this job's, spending at most :data:`RELEASE_SECONDS`."""
        self._stop.set()
        if self._lost is not None:
            return
        done = threading.Event()

        def delete() -> None:
            with suppress(Exception):  # not ours any more, or the store unreachable: it lapses
                seen = self._read()
                if seen is not None and seen.holder and seen.holder.get("owner") == self.owner:
                    self.place.fs.rm_file(self.place.path)
            done.set()

        threading.Thread(target=delete, name="icc-lease-release", daemon=True).start()
        done.wait(RELEASE_SECONDS)

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.seconds / 4):
            try:
                if not self._replace(self._version):
                    self._lost = (
                        f"{self.where} was taken over by another job while this one could not renew its lease "
                        f"{public_url(str(self.place))}: this job stops; run it again once the other has finished"
                    )
                    return
            except Exception:  # the store unreachable: try again until the term is over
                if time.monotonic() - self._renewed > self.seconds:
                    self._lost = (
                        f"this job could not renew its lease {public_url(str(self.place))} on {self.where} for "
                        f"{self.seconds:.0f} s (the store did not answer), so another job may write there now: "
                        "it stops; run it again once the store answers"
                    )
                    return

    # -- the store's calls ------------------------------------------------------------------------------

    def _record(self) -> bytes:
        record = {
            "icc_lease": _FORMAT,
            "owner": self.owner,
            **_this_process(),
            "started": self._started,
            "renewed": _now(),
            "seconds": self.seconds if self.conditional else None,
        }
        return (json.dumps(record) + "\n").encode()

    def _create(self) -> bool:
        """Create the lease where none is; ``False`` if one is there."""
        try:
            answer = self.place.fs.pipe_file(self.place.path, self._record(), mode="create")
        except FileExistsError:
            return False
        self._wrote(answer)
        return True

    def _replace(self, version: str | None) -> bool:
        """Write the lease over the one of ``version``; ``False`` if it changed since (another job's now)."""
        fs, path = self.place.fs, self.place.path
        if not self.conditional:
            seen = self._read()
            if seen is None or seen.version != version:
                return False
            fs.pipe_file(path, self._record())
            self._wrote(None)
            return True
        try:
            answer = fs.pipe_file(path, self._record(), IfMatch=version) if version else None
        except (FileNotFoundError, FileExistsError):
            return False
        except OSError as error:
            if _precondition_failed(error):
                return False
            raise
        if answer is None:  # the lease had no version: create it anew
            return self._create()
        self._wrote(answer)
        return True

    def _wrote(self, answer: object) -> None:
        self._version = answer.get("ETag") if isinstance(answer, dict) else None
        if self._version is None:
            with suppress(FileNotFoundError):
                self._version = _version_of(self.place)
        self._renewed = time.monotonic()

    def _read(self) -> _Seen | None:
        """The lease as it is now, or ``None`` if there is none."""
        try:
            if self.conditional:
                data, version, age = _read_s3(self.place)
            else:
                data, version, age = self.place.fs.cat_file(self.place.path), _version_of(self.place), None
        except FileNotFoundError:
            return None
        try:
            holder = json.loads(data)
            holder = holder if isinstance(holder, dict) and holder.get("icc_lease") else None
        except ValueError:
            holder = None
        return _Seen(holder, version, age)

    # -- what is said --------------------------------------------------------------------------------------

    def _lapsed(self, seen: _Seen) -> bool:
        if not self.conditional:
            return seen.holder is None  # not an icc lease: nothing holds it
        term = (seen.holder or {}).get("seconds") or LEASE_SECONDS
        return seen.age is not None and seen.age >= term

    def _busy(self, seen: _Seen) -> str:
        holder = seen.holder or {}
        who = f"pid {holder.get('pid')} on {_host_of(holder)}, since {holder.get('started', '?')}"
        lease = public_url(str(self.place))
        if _on_this_machine(holder):  # alive, or it would have been taken over
            return (
                f"another icc job is writing to {self.where} ({who}): wait for it to end, or stop it and run "
                "this command again"
            )
        if not self.conditional:
            return (
                f"another icc job is writing to {self.where} ({who}; it holds {lease}): wait for it to end; if it "
                f"was stopped, delete {lease} and run this command again"
            )
        term = holder.get("seconds") or LEASE_SECONDS
        left = max(1, round(term - (seen.age or 0)))
        return (
            f"another icc job is writing to {self.where} ({who}; its lease {lease} was renewed "
            f"{seen.age or 0:.0f} s ago): wait for it to end; if it was stopped, run this command again in {left} s, "
            "when its lease lapses"
        )

    def _taken_over(self, seen: _Seen, gone: bool) -> str:
        holder = seen.holder or {}
        who = f"pid {holder.get('pid')} on {_host_of(holder)}" if holder else "a job"
        why = "is gone" if gone else f"has not renewed its lease for {seen.age or 0:.0f} s"
        return f"taking over {self.where}: the icc job that held it ({who}) {why}"


@contextmanager
def leased(
    place: UPath,
    where: str,
    notice: Callable[[str], None] | None = None,
    seconds: float = LEASE_SECONDS,
    guards: UPath | None = None,
    under: bool = False,
) -> Iterator[Lease]:
    """Hold the lease ``place`` on the output ``where`` names for the block (see the module docstring);
    ``notice`` tells of a lease taken over from a job that is gone (default: a warning); ``guards``: the
    output object (``under``: the prefix) whose dead multipart uploads are aborted once the lease is held."""
    lease = Lease(place, where, seconds)
    lease.take(notice or _warn)
    if guards is not None and lease.conditional:
        abort_dead_uploads(guards, under)
    lease.start_renewing()
    try:
        yield lease
    finally:
        lease.release()


def abort_dead_uploads(guarded: UPath, under: bool = False) -> None:
    """Abort the unfinished S3 multipart uploads of the object ``guarded`` names (``under``: of every object
    under that prefix): called by the holder of its lease, for whom they are a killed job's. Best effort: a
    store that does not list them to this user (no ``s3:ListBucketMultipartUploads``) keeps them, as before."""
    fs = guarded.fs
    bucket, key, _ = fs.split_path(guarded.path)
    key = key.rstrip("/") + "/" if under else key
    with suppress(Exception):
        answer = fs.call_s3("list_multipart_uploads", Bucket=bucket, Prefix=key)
        for upload in answer.get("Uploads", []):
            if upload["Key"] == key or (under and upload["Key"].startswith(key)):
                fs.call_s3("abort_multipart_upload", Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"])


def _warn(line: str) -> None:
    warnings.warn(line, stacklevel=4)


def _is_s3(place: UPath) -> bool:
    return place.protocol in ("s3", "s3a")


def _precondition_failed(error: BaseException) -> bool:
    """Whether a store's error is a failed condition (``412``; ``409`` for a conflicting write)."""
    response = getattr(error.__cause__, "response", None) or {}
    code = response.get("Error", {}).get("Code")
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return code in ("PreconditionFailed", "ConditionalRequestConflict") or status in (409, 412)


def _read_s3(place: UPath) -> tuple[bytes, str | None, float | None]:
    """The lease's bytes, ETag and age by the server's clock (its answer's ``Date`` less ``LastModified``)."""
    from fsspec.asyn import sync

    fs = place.fs
    bucket, key, _ = fs.split_path(place.path)

    async def get() -> tuple[bytes, dict[str, Any]]:
        answer = await fs._call_s3("get_object", Bucket=bucket, Key=key)
        try:
            return await answer["Body"].read(), answer
        finally:
            answer["Body"].close()

    data, answer = sync(fs.loop, get)
    age = None
    date = answer.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("date")
    if date and answer.get("LastModified") is not None:
        age = (parsedate_to_datetime(date) - answer["LastModified"]).total_seconds()
    return data, answer.get("ETag"), age


def _version_of(place: UPath) -> str | None:
    info = place.fs.info(place.path)
    return str(info.get("ETag") or info.get("checksum") or info.get("mtime") or info.get("size"))


def _this_process() -> dict[str, Any]:
    """What names this process, and on Linux what tells whether it still runs (see :func:`_holder_gone`)."""
    return {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        **_machine(),
        "process_start": _process_start(os.getpid()),
    }


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _machine() -> dict[str, Any]:
    """This boot of this machine and this PID namespace (Linux), where a pid names one process."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return {}
    return {"boot": boot, "pid_namespace": namespace}


def _process_start(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot), or ``None`` if none runs (or not Linux)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def _on_this_machine(holder: dict[str, Any] | None) -> bool:
    """Whether the lease's holder runs on this machine, where its pid names one process: same host, boot and
    PID namespace (Linux)."""
    if not holder or holder.get("host") != socket.gethostname() or not holder.get("boot"):
        return False
    machine = _machine()
    return bool(machine) and (holder.get("boot"), holder.get("pid_namespace")) == (
        machine["boot"],
        machine["pid_namespace"],
    )


def _holder_gone(holder: dict[str, Any] | None) -> bool:
    """Whether the lease's holder ran on this machine (:func:`_on_this_machine`) and its process is gone."""
    if not _on_this_machine(holder):
        return False
    pid = holder.get("pid")
    return not isinstance(pid, int) or _process_start(pid) != holder.get("process_start")


def _host_of(holder: dict[str, Any]) -> str:
    host = holder.get("host", "?")
    return "this machine" if host == socket.gethostname() else str(host)
