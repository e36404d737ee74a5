"""Score a caption set with a teacher into resumable parquet shards.

Shard ``k`` always holds rows ``[k * shard_size, (k + 1) * shard_size)`` of the
caption set and is written atomically (temporary file, then rename), so a
finished shard is complete by construction: a killed run restarted with the same
arguments skips finished shards and never writes a row twice. ``manifest.json``
records the run's identity; a restart with different captions, shard size, seed
or teacher settings is refused instead of mixing results.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from ..utils.atomic_files import atomic_file
from ..utils.errors import UserInputError
from ..utils.provenance import write_json
from .captions import CaptionSet, count_words
from .teacher import Teacher

MANIFEST = "manifest.json"
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
    out_dir.mkdir(parents=True, exist_ok=True)
    provenance = teacher.provenance()
    _check_manifest(out_dir, teacher.name, captions, seed, shard_size, provenance)
    provenance_json = json.dumps(provenance, sort_keys=True)
    n_shards = -(-len(captions) // shard_size)
    todo = [k for k in range(n_shards) if not (out_dir / shard_name(k)).is_file()]
    rows_todo = sum(min(shard_size, len(captions) - k * shard_size) for k in todo)
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
    return out_dir


def read_shards(out_dir: str | os.PathLike) -> pa.Table:
    """All shards of a finished run, in row order; refuses an unfinished run."""
    out_dir = Path(out_dir)
    manifest_path = out_dir / MANIFEST
    if not manifest_path.is_file():
        raise UserInputError(f"{out_dir} holds no teacher scores (no {MANIFEST})")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    n_shards = -(-manifest["n_rows"] // manifest["shard_size"])
    missing = [shard_name(k) for k in range(n_shards) if not (out_dir / shard_name(k)).is_file()]
    if missing:
        raise UserInputError(f"{out_dir} is unfinished: {len(missing)} of {n_shards} shards missing; re-run scoring")
    if n_shards == 0:
        return SHARD_SCHEMA.empty_table()
    return pa.concat_tables([pq.read_table(out_dir / shard_name(k), schema=SHARD_SCHEMA) for k in range(n_shards)])


def _check_manifest(
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
    path = out_dir / MANIFEST
    if path.is_file():
        previous = json.loads(path.read_text(encoding="utf-8"))
        changed = sorted(key for key in identity if previous.get(key) != identity[key])
        if changed:
            raise UserInputError(
                f"{out_dir} holds a run with different {', '.join(changed)}; use a new output directory "
                "or delete the old one"
            )
        return
    if any(out_dir.glob(SHARD_GLOB)):
        raise UserInputError(f"{out_dir} has shards but no {MANIFEST}; refusing to mix runs")
    write_json(path, {**identity, "provenance": provenance})


def _write_parquet_atomic(table: pa.Table, path: Path) -> None:
    with atomic_file(path) as stream:
        pq.write_table(table, stream)
