"""The executor that runs a job's tasks one after another in this process.

A single-file job always runs here (its one unit, with resuming off), and so does a sharded job with one
worker: the scorer is loaded once, when the first task needs it.
"""

from __future__ import annotations

from collections.abc import Callable

from .job import Job
from .passes import LazyScorer, Task, run_task
from .progress import Progress
from .unit_result import UnitResult


class InProcess:
    """Runs tasks here, in order; ``done(task)`` is called after each (a sharded job's bar over its shards), and
    ``before_commit()`` right before each file is committed (a check that the job still holds its output)."""

    #: Processes that scored units: this one.
    processes = 1

    def __init__(
        self,
        job: Job,
        scorer: LazyScorer,
        progress: Progress,
        done: Callable[[Task], object] = lambda task: None,
        before_commit: Callable[[], None] | None = None,
    ) -> None:
        self.job, self.scorer, self.progress, self.done = job, scorer, progress, done
        self.before_commit = before_commit

    def __enter__(self) -> InProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Nothing to stop: the tasks ran here."""

    def run(self, tasks: list[Task]) -> list[UnitResult | None]:
        results = []
        for task in tasks:
            results.append(run_task(self.job, task, self.scorer, self.progress, self.before_commit))
            self.done(task)
        return results
