"""The executor that runs a sharded job's tasks on a pool of local worker processes (``--workers N``).

One pool is kept for the whole job. Workers fork from a forkserver that imported this package once, so each
starts in a fraction of a second and loads its scorer once (on its own GPU where there are several, with its
share of the CPU cores). They report the captions they score to the main process, which draws the bars,
handles Ctrl-C (stopping the shards being written now, each removing its temporary files) and holds the
output directory's lock: a worker renames a file into place only while the main process lives. On an object
store the main process checks its lease as the workers run, and stops them at once if it was lost.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import replace
from queue import Empty
from typing import Any

from ...scoring.threads import set_cpu_threads
from ...utils.leases import LeaseLost
from ...utils.locations import is_remote
from ...utils.parent_death import PARENT_ENV
from ...utils.remote_options import bounded
from .in_process import InProcess
from .job import Job
from .passes import LazyScorer, Task, run_task
from .progress import Counts
from .unit_result import UnitResult
from .workers import device_for_rank, end_with, threads_per_worker


class ProcessPool:
    """Runs tasks on ``job.workers`` processes (a single task, in this process: ``local``). Results are not
    sent back: a sharded job's workers commit what they write themselves."""

    def __init__(self, job: Job, local: InProcess) -> None:
        self.job, self.local = job, local
        self.pool: ProcessPoolExecutor | None = None
        self.reports: Any = None
        #: Processes that scored units: this one alone, or the most the pool ever ran at once.
        self.processes = 1

    def __enter__(self) -> ProcessPool:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc_info: object) -> None:
        if self.pool is not None:
            if exc_type is not None and issubclass(exc_type, KeyboardInterrupt | LeaseLost):
                # Ctrl-C, or the output's lease lost: stop the shards being written now (each removes its temp
                # files), not after them
                for process in list(self.pool._processes.values()):
                    process.terminate()
            self.pool.shutdown(wait=True, cancel_futures=True)

    def run(self, tasks: list[Task]) -> list[UnitResult | None]:
        if len(tasks) <= 1:
            return self.local.run(tasks)
        pool = self._pool()
        with _sigint_deferred():  # submitting starts workers: none may be left half-started by Ctrl-C
            futures: dict[Future, Task] = {pool.submit(_run_in_worker, self.job, task): task for task in tasks}
        self.processes = max(self.processes, len(pool._processes))
        running = set(futures)
        while running:
            finished, running = wait(running, timeout=0.2, return_when=FIRST_COMPLETED)
            if self.local.before_commit is not None:
                self.local.before_commit()  # the output still this job's (a remote lease)
            self._drain()
            for future in finished:
                future.result()
                self.local.done(futures[future])
        self._drain()
        return [None] * len(tasks)

    def _pool(self) -> ProcessPoolExecutor:
        if self.pool is None:
            context = multiprocessing.get_context("forkserver")
            # By name: importing the guard here would tie this process to its own parent. torch too (where it
            # is installed: the forkserver skips a module it cannot import), once for every worker.
            context.set_forkserver_preload([f"{__package__}.forkserver_guard", __name__, "torch"])
            # The server, and the workers it forks, leave Ctrl-C to this process, and die with it.
            with _sigint_ignored(), _environment(PARENT_ENV, str(os.getpid())):
                multiprocessing.forkserver.ensure_running()
            self.reports = context.Queue()
            ranks = context.Value("i", 0)
            self.pool = ProcessPoolExecutor(
                self.job.workers,
                mp_context=context,
                initializer=_init_worker,
                initargs=(ranks, self.reports, self.job.workers, os.getpid()),
            )
        return self.pool

    def _drain(self) -> None:
        while True:
            try:
                self.local.progress.update(self.reports.get_nowait())
            except Empty:
                return


_WORKER: dict[str, Any] = {}


@contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    """``name=value`` in this process's environment for the block (processes started in it inherit it)."""
    previous = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Processes started in the block ignore Ctrl-C (SIGINT) for their whole life (the disposition
    survives ``exec``). Only for blocks of a few milliseconds: a Ctrl-C during them is lost."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Ctrl-C (SIGINT) during the block is raised as ``KeyboardInterrupt`` once the block is done
    (in the main thread; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    except Exception:
        if received:  # what failed was stopped by the same Ctrl-C (a worker dying as it started)
            raise KeyboardInterrupt from None
        raise
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt


def _exit_on_terminate(signum: int, frame: object) -> None:
    """SIGTERM in a worker: exit through Python, so a shard being written removes its temp file (then
    :func:`_run_in_worker` ends the process: the pool would report the exit and start the next task)."""
    raise SystemExit(128 + signum)


def _init_worker(ranks: Any, reports: Any, n_workers: int, main_pid: int) -> None:
    _WORKER["commit_check"] = end_with(main_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles Ctrl-C and stops the workers
    signal.signal(signal.SIGTERM, _exit_on_terminate)
    with ranks.get_lock():
        _WORKER["rank"] = ranks.value % n_workers
        ranks.value += 1
    _WORKER["report"] = reports.put
    set_cpu_threads(threads_per_worker(n_workers))  # torch's threads, or ONNX Runtime's batches side by side


def _run_in_worker(job: Job, task: Task) -> None:
    for place in (task.unit.source, task.unit.output, job.output_dir):
        if is_remote(place):
            bounded(place.fs)  # the filesystems this process opens, with icc's bounded retries
    device = device_for_rank(job.scoring.device, _WORKER["rank"])
    tokenize_workers = job.scoring.tokenize_workers
    if tokenize_workers is None and device is not None and device.startswith("cuda"):
        tokenize_workers = threads_per_worker(job.workers)  # this process's share of the cores
    scoring = replace(job.scoring, device=device, tokenize_workers=tokenize_workers)
    scorer = LazyScorer(lambda: scoring.load(cache=True), scoring.model)
    commit_check: Callable[[], None] = _WORKER["commit_check"]
    try:
        run_task(replace(job, scoring=scoring), task, scorer, Counts(_WORKER["report"]), commit_check)
    except SystemExit as stop:  # stopped by the main process (SIGTERM): the task has cleaned up; end here
        os._exit(stop.code if isinstance(stop.code, int) else 1)
