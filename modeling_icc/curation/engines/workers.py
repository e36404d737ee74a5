"""Worker processes of the data engines: GPU placement by rank, CPU thread sharing, and ending with the job.

(Each process loads its scorer once through :func:`modeling_icc.scoring.load.load_scorer` with ``cache=True``.)
"""

from __future__ import annotations

import os
import select
import threading
import time
from collections.abc import Callable

from ...scoring.tokenize_workers import usable_cores
from ...utils.extras import module_available
from ...utils.parent_death import die_with_parent


def device_for_rank(device: object, rank: int | None, cuda_devices: int | None = None) -> str | None:
    """Where worker ``rank`` should run.

    An explicit device with an index (``"cuda:1"``, ``"cpu"``) is kept. ``None`` or
    a bare ``"cuda"`` puts rank ``r`` on ``cuda:{r % n_gpus}`` when GPUs exist, so
    ``num_proc=n_gpus`` spreads the work one process per GPU. ``cuda_devices``
    defaults to ``torch.cuda.device_count()`` (which does not initialize CUDA).
    """
    requested = None if device is None else str(device)
    if requested not in (None, "cuda") or rank is None:
        return requested
    if cuda_devices is None:
        if not module_available("torch"):  # the core install: no GPU scoring
            return requested
        import torch  # only here: a job on a CPU model need not import it

        cuda_devices = torch.cuda.device_count()
    count = cuda_devices
    if count == 0:
        return requested
    return f"cuda:{rank % count}"


def threads_per_worker(n_workers: int) -> int:
    """This process's share of the CPU cores when ``n_workers`` processes score at once (no oversubscription)."""
    return max(1, (os.cpu_count() or 1) // max(1, n_workers))


def end_with(main_pid: int) -> Callable[[], None]:
    """End this worker process when the job's main process ``main_pid`` ends, however it ends (``kill -9``).

    A daemon thread waits on ``main_pid`` (a pidfd; polled every 0.1 s where there is none) and
    exits the process at once; and on Linux the kernel kills it when its own parent (the pool's
    forkserver) dies (``PR_SET_PDEATHSIG``). With the workers gone, the forkserver and the resource
    tracker, which live while a worker holds their pipes, end too. Returns a check to call right
    before a file is renamed into place: it exits if the main process is gone, so a worker never
    commits a file without the job's lock (which the main process holds).
    """
    die_with_parent()
    try:
        watched = os.pidfd_open(main_pid)
    except ProcessLookupError:
        os._exit(1)
    except (AttributeError, OSError):  # no pidfd (not Linux 5.3+): poll
        watched = None

    def gone(timeout: float | None) -> bool:
        if watched is not None:
            return bool(select.select([watched], [], [], timeout)[0])
        try:
            os.kill(main_pid, 0)
        except ProcessLookupError:
            return True
        if timeout:
            time.sleep(timeout)
        return False

    def watch() -> None:
        while not gone(None if watched is not None else 0.1):
            pass
        os._exit(1)

    def check() -> None:
        if gone(0):
            os._exit(1)

    threading.Thread(target=watch, name="icc-end-with-job", daemon=True).start()
    return check


def worker_count(requested: int, shards: int) -> int:
    """The worker processes worth starting: no more than the shards to score or the CPU cores
    this process may use (each worker needs at least one; more would only compete for them)."""
    return max(1, min(requested, shards, usable_cores()))
