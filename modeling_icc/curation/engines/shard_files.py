"""The files a sharded job writes for each shard besides its output, and what makes a shard done.

A shard's stats (``NAME.stats.json``) are written last, after its output and its kept uids: they mark it
done (see :mod:`.output_dir` for the whole directory).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...utils.atomic_files import atomic_file, not_our_file
from ...utils.errors import UserInputError
from ...utils.locations import Location, is_file, is_remote
from ...utils.provenance import write_json
from ...utils.redaction import public_url
from ..io import datacomp
from .job import Job, Unit
from .unit_result import UnitResult
from .unit_scores import SavedScores

STATS_SUFFIX = ".stats.json"
WORK_DIR = ".icc-work"


@dataclass(frozen=True)
class ShardFiles:
    """What a sharded job writes for one unit besides its output: its stats (the mark that it is done), and
    in the work folder its saved scores and its kept uids."""

    stats: Location
    scores: SavedScores
    kept_uids: Location

    @classmethod
    def of(cls, job: Job, unit: Unit) -> ShardFiles:
        work = job.output_dir / WORK_DIR
        return cls(
            job.output_dir / f"{unit.name}{STATS_SUFFIX}",
            SavedScores(work / f"{unit.name}.raw.npz"),
            work / f"{unit.name}.uids.npy",
        )


def check_work_folder(output_dir: Location) -> None:
    """The work folder is icc's own: a symlink there (to a folder elsewhere) or a file is refused, so that
    nothing is written, nor any killed run's file removed, through it."""
    work = output_dir / WORK_DIR
    if is_remote(work):  # an object store has no links
        return
    if work.is_symlink():
        raise UserInputError(not_our_file(work, "a symbolic link"))
    if work.exists() and not work.is_dir():
        raise UserInputError(not_our_file(work, "not a directory"))


def done(job: Job, unit: Unit, with_uids: bool = False) -> bool:
    """Finished: stats written, and the output (the rows written apart, the kept uids with ``with_uids``) still
    there as written."""
    files = ShardFiles.of(job, unit)
    if not (is_file(files.stats) and is_file(unit.output)) or (with_uids and not is_file(files.kept_uids)):
        return False
    recorded = json.loads(files.stats.read_text(encoding="utf-8"))
    written = [(unit.output, recorded.get("output_bytes"))]
    if unit.apart_output is not None:
        written.append((unit.apart_output, recorded.get("apart_bytes", -1)))  # -1: a shard written without it
    return all(is_file(path) and size in (None, path.stat().st_size) for path, size in written)


def commit_unit(job: Job, unit: Unit, result: UnitResult, before_commit: Callable[[], None] | None = None) -> None:
    """After a shard's output: its kept uids (with a DataComp subset), then its stats, which mark it done."""
    files = ShardFiles.of(job, unit)
    if job.datacomp_subset is not None:
        kept = np.concatenate(result.kept_uids) if result.kept_uids else datacomp.uids_to_array([])
        with atomic_file(files.kept_uids, before_commit) as stream:  # a work file: a link there is replaced
            np.save(stream, kept, allow_pickle=False)
    stats = {
        "input": public_url(str(unit.source)),  # never a password a URL carried
        "output": public_url(str(unit.output)),
        "rows": result.rows,
        "kept": result.kept,
        "nan": result.stats.nan,
        "not_read": result.stats.not_read,
        "languages": dict(result.stats.languages.most_common()),
        "decode_errors": result.decode_errors,
        "output_bytes": unit.output.stat().st_size,
        **(_apart_stats(unit, result) if unit.apart_output is not None else {}),
        "model": result.model_id,
        "seconds": round(result.seconds, 3),
    }
    if before_commit is not None:
        before_commit()
    write_json(files.stats, stats)


def _apart_stats(unit: Unit, result: UnitResult) -> dict[str, object]:
    """What a shard wrote apart (``--other-languages apart``): the file, its rows and its size."""
    return {
        "apart_output": public_url(str(unit.apart_output)),
        "apart": result.apart,
        "apart_bytes": unit.apart_output.stat().st_size,
    }
