"""A teacher-score parquet file in the schema the dataset card documents, for offline card and push tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..shipped_data import dev_split


def write_teacher_scores_parquet(path: str | Path, n_rows: int = 40, seed: int = 0) -> Path:
    """``n_rows`` shipped captions with random teacher outputs in the documented columns."""
    rng = np.random.default_rng(seed)
    captions = [row["caption"] for row in dev_split()[:n_rows]]
    sba, vba = rng.uniform(0, 1, len(captions)), rng.uniform(0, 1, len(captions))
    table = pa.table(
        {
            "id": pa.array([f"row-{index:06d}" for index in range(len(captions))]),
            "caption": captions,
            "n_words": pa.array([len(caption.split()) for caption in captions], pa.int32()),
            "sba_reconstruction": captions,
            "sba_similarity": sba,
            "vba_caption": ["a photo of something"] * len(captions),
            "vba_similarity": vba,
            "sba_standardized": sba,
            "vba_standardized": vba,
            "icc_target": 1 / (1 + np.exp(-(vba + sba - 1))),
            "sba_teacher": ["tiny-sba"] * len(captions),
            "vba_teacher": ["tiny-vba"] * len(captions),
            "seed": pa.array(range(len(captions)), pa.int64()),
        }
    )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path
