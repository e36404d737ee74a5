"""The teacher-score dataset: one row per caption with both teachers' results and the ICC target.

Written as parquet shards ``data/train-NNNNN-of-MMMMM.parquet`` that
``datasets.load_dataset("parquet", data_files=...)`` reads directly. The schema
is documented in ``docs/teachers.md``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ...teachers.captions import count_words
from ...utils.atomic_files import atomic_file
from ...utils.errors import UserInputError

#: Teacher results per caption, before standardization (what users with their own teachers provide).
TEACHER_COLUMNS = pa.schema(
    [
        ("id", pa.string()),
        ("caption", pa.string()),
        ("n_words", pa.int32()),
        ("sba_best", pa.string()),
        ("sba_similarity", pa.float64()),
        ("vba_best", pa.string()),
        ("vba_similarity", pa.float64()),
        ("sba_teacher", pa.string()),
        ("vba_teacher", pa.string()),
        ("seed", pa.int64()),
    ]
)
#: The full dataset: teacher results + standardized scores + the combined distillation target.
DATASET_SCHEMA = pa.schema(
    [
        *TEACHER_COLUMNS,
        ("sba_score", pa.float64()),
        ("vba_score", pa.float64()),
        ("target", pa.float64()),
    ]
)
DATA_DIR = "data"


def merge_teacher_shards(sba: pa.Table, vba: pa.Table) -> pa.Table:
    """Join the two teachers' shard tables (same captions, same order) into ``TEACHER_COLUMNS``."""
    if sba.column("id").to_pylist() != vba.column("id").to_pylist():
        raise UserInputError("the SBA and VBA scores cover different captions (ids differ); score the same set")
    return pa.Table.from_pydict(
        {
            "id": sba.column("id"),
            "caption": sba.column("caption"),
            "n_words": sba.column("n_words"),
            "sba_best": sba.column("best_candidate"),
            "sba_similarity": sba.column("similarity"),
            "vba_best": vba.column("best_candidate"),
            "vba_similarity": vba.column("similarity"),
            "sba_teacher": sba.column("teacher_provenance"),
            "vba_teacher": vba.column("teacher_provenance"),
            "seed": vba.column("seed"),
        },
        schema=TEACHER_COLUMNS,
    )


def teacher_table_from_records(records: list[dict]) -> pa.Table:
    """``TEACHER_COLUMNS`` from user-provided rows that have at least caption, sba_similarity, vba_similarity."""
    required = ("caption", "sba_similarity", "vba_similarity")
    if not records or any(key not in records[0] for key in required):
        raise UserInputError(f"teacher scores need the columns {', '.join(required)} (and optionally id)")
    rows = []
    for number, record in enumerate(records):
        caption = record["caption"]
        rows.append(
            {
                "id": str(record.get("id", number)),
                "caption": caption,
                "n_words": count_words(caption),
                "sba_best": record.get("sba_best"),
                "sba_similarity": float(record["sba_similarity"]),
                "vba_best": record.get("vba_best"),
                "vba_similarity": float(record["vba_similarity"]),
                "sba_teacher": record.get("sba_teacher") or json.dumps({"source": "user-provided"}),
                "vba_teacher": record.get("vba_teacher") or json.dumps({"source": "user-provided"}),
                "seed": record.get("seed"),
            }
        )
    return pa.Table.from_pylist(rows, schema=TEACHER_COLUMNS)


def with_scores(teacher_table: pa.Table, sba_score: np.ndarray, vba_score: np.ndarray, target: np.ndarray) -> pa.Table:
    """The dataset: teacher columns + standardized scores + target, in ``DATASET_SCHEMA``."""
    table = teacher_table.select(TEACHER_COLUMNS.names)
    for name, values in (("sba_score", sba_score), ("vba_score", vba_score), ("target", target)):
        table = table.append_column(name, pa.array(np.asarray(values, dtype=np.float64)))
    return table.cast(DATASET_SCHEMA)


def write_dataset(table: pa.Table, directory: str | os.PathLike, rows_per_shard: int = 100_000) -> list[Path]:
    """Write ``table`` as ``directory/data/train-*.parquet`` shards (atomically; stale shards removed)."""
    data_dir = Path(directory) / DATA_DIR
    data_dir.mkdir(parents=True, exist_ok=True)
    n_shards = max(1, -(-table.num_rows // rows_per_shard))
    paths = []
    for k in range(n_shards):
        path = data_dir / f"train-{k:05d}-of-{n_shards:05d}.parquet"
        with atomic_file(path) as stream:
            pq.write_table(table.slice(k * rows_per_shard, rows_per_shard), stream)
        paths.append(path)
    for stale in set(data_dir.glob("train-*.parquet")) - set(paths):
        stale.unlink()
    return paths


def dataset_files(directory: str | os.PathLike) -> list[str]:
    files = sorted(str(p) for p in (Path(directory) / DATA_DIR).glob("train-*.parquet"))
    if not files:
        raise UserInputError(f"{directory} holds no teacher-score dataset ({DATA_DIR}/train-*.parquet)")
    return files


def read_dataset(directory: str | os.PathLike) -> pa.Table:
    return pa.concat_tables([pq.read_table(path) for path in dataset_files(directory)])
