"""Score a caption set with a teacher into resumable parquet shards.

Shard ``k`` always holds rows ``[k * shard_size, (k + 1) * shard_size)`` of the
caption set and is written atomically (temporary file, then rename), so a
finished shard is complete by construction: a killed run restarted with the same
arguments skips finished shards and never writes a row twice. ``_run.json``
records the run's identity; a restart with different captions, shard size, seed
or teacher settings is refused instead of mixing results (the resume protocol shared
with sharded curation jobs: :mod:`~modeling_icc.utils.resumable`). A directory written
before ``_run.json`` replaced ``manifest.json`` is refused with a one-line error.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from ..utils import resumable
from ..utils.atomic_files import atomic_file
from ..utils.errors import UserInputError
from .captions import CaptionSet, count_words
from .teacher import Teacher

#: What runs recorded before the shared resume protocol's ``_run.json`` (such directories are refused).
OLD_MANIFEST = "manifest.json"
SHARD_GLOB = "shard-*.parquet"

#: Columns of every teacher shard (documented in docs/teachers.md).
SHARD_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("caption", pa.string()),
        ("n_words", pa.int32()),
        ("candidates", pa.list_(pa.string())),
        ("best_candidate", pa.string()),
        ("similarity", pa.float64()),
        ("teacher", pa.string()),
        ("teacher_provenance", pa.string()),
        ("seed", pa.int64()),
    ]
)


def shard_name(index: int) -> str:
    return f"shard-{index:05d}.parquet"


def captions_fingerprint(captions: CaptionSet) -> str:
    digest = hashlib.sha256()
    for row_id, caption in zip(captions.ids, captions.captions, strict=True):
        digest.update(f"{row_id}\t{caption}\n".encode())
    return digest.hexdigest()


def score_to_shards(
    teacher: Teacher,
    captions: CaptionSet,
    out_dir: str | os.PathLike,
    *,
    seed: int = 0,
    shard_size: int = 1000,
    batch_size: int = 16,
    progress: bool | None = None,
) -> Path:
    """Score every caption with ``teacher`` into ``out_dir/shard-*.parquet``; returns ``out_dir``."""
    if shard_size <= 0 or batch_size <= 0:
        raise UserInputError("shard_size and batch_size must be positive")
    out_dir = Path(out_dir)
    with resumable.locked(out_dir):
        _refuse_old_directory(out_dir)
        provenance = teacher.provenance()
        _bind_settings(out_dir, teacher.name, captions, seed, shard_size, provenance)
        resumable.remove_partial_files([out_dir])
        _score_missing_shards(teacher, captions, out_dir, seed, shard_size, batch_size, progress, provenance)
    return out_dir


def _score_missing_shards(
    teacher: Teacher,
    captions: CaptionSet,
    out_dir: Path,
    seed: int,
    shard_size: int,
    batch_size: int,
    progress: bool | None,
    provenance: dict,
) -> None:
    """Score and write every shard not written yet (shard ``k``: rows ``[k * shard_size, (k + 1) * shard_size)``)."""
    provenance_json = json.dumps(provenance, sort_keys=True)
    n_shards = -(-len(captions) // shard_size)
    todo = [k for k in range(n_shards) if not (out_dir / shard_name(k)).is_file()]
    rows_todo = sum(min(shard_size, len(captions) - k * shard_size) for k in todo)
    if len(todo) < n_shards and progress is not False:  # as a resumed curation job says it (cli/common.py)
        done = n_shards - len(todo)
        tqdm.write(
            f"{teacher.name} teacher, resumed: {done} of {n_shards} shards done before, {len(todo)} this run",
            file=sys.stderr,
        )
    with tqdm(total=rows_todo, unit="caption", desc=f"{teacher.name} teacher", disable=progress is False) as bar:
        for k in todo:
            rows = slice(k * shard_size, (k + 1) * shard_size)
            part = CaptionSet(captions.ids[rows], captions.captions[rows])
            results = []
            for start in range(0, len(part), batch_size):
                batch_ids = part.ids[start : start + batch_size]
                results += teacher.score(part.captions[start : start + batch_size], batch_ids, seed)
                bar.update(len(batch_ids))
            table = pa.Table.from_pydict(
                {
                    "id": part.ids,
                    "caption": part.captions,
                    "n_words": [count_words(c) for c in part.captions],
                    "candidates": [r.candidates for r in results],
                    "best_candidate": [r.best for r in results],
                    "similarity": [r.similarity for r in results],
                    "teacher": [teacher.name] * len(part),
                    "teacher_provenance": [provenance_json] * len(part),
                    "seed": [seed] * len(part),
                },
                schema=SHARD_SCHEMA,
            )
            _write_parquet_atomic(table, out_dir / shard_name(k))


def read_shards(out_dir: str | os.PathLike) -> pa.Table:
    """All shards of a finished run, in row order; refuses an unfinished run."""
    out_dir = Path(out_dir)
    _refuse_old_directory(out_dir)
    manifest = resumable.recorded_settings(out_dir)
    if manifest is None:
        raise UserInputError(f"{out_dir} holds no teacher scores (no {resumable.RUN_FILE})")
    n_shards = -(-manifest["n_rows"] // manifest["shard_size"])
    missing = [shard_name(k) for k in range(n_shards) if not (out_dir / shard_name(k)).is_file()]
    if missing:
        raise UserInputError(f"{out_dir} is unfinished: {len(missing)} of {n_shards} shards missing; re-run scoring")
    if n_shards == 0:
        return SHARD_SCHEMA.empty_table()
    return pa.concat_tables([pq.read_table(out_dir / shard_name(k), schema=SHARD_SCHEMA) for k in range(n_shards)])


def _bind_settings(
    out_dir: Path, teacher: str, captions: CaptionSet, seed: int, shard_size: int, provenance: dict
) -> None:
    identity = {
        "teacher": teacher,
        "n_rows": len(captions),
        "captions_sha256": captions_fingerprint(captions),
        "shard_size": shard_size,
        "seed": seed,
        "settings": {key: value for key, value in provenance.items() if key != "versions"},
    }
    resumable.bind_settings(
        out_dir,
        identity,
        holds_work=any(out_dir.glob(SHARD_GLOB)),
        advice="use a new output directory or delete the old one",
        record={"provenance": provenance},
    )


def _refuse_old_directory(out_dir: Path) -> None:
    """A directory scored before ``_run.json``: refused, never rescored or mixed silently."""
    if (out_dir / OLD_MANIFEST).is_file() and not (out_dir / resumable.RUN_FILE).is_file():
        raise UserInputError(
            f"{out_dir} was scored by an older version (it has {OLD_MANIFEST}, not {resumable.RUN_FILE}); "
            "score into a new output directory"
        )


def _write_parquet_atomic(table: pa.Table, path: Path) -> None:
    with atomic_file(path) as stream:
        pq.write_table(table, stream)
