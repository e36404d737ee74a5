"""A small teacher-score dataset in the pipeline's own format, for offline card and push tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..training.distillation.teacher_dataset import teacher_table_from_records, with_scores, write_dataset
from ..utils.shipped_data import dev_split


def write_teacher_score_dataset(directory: str | Path, n_rows: int = 40, seed: int = 0) -> Path:
    """``directory/data/train-*.parquet`` with ``n_rows`` shipped captions and random teacher scores.

    Written by the pipeline's own ``write_dataset``, so the schema is the real one.
    """
    rng = np.random.default_rng(seed)
    captions = [row["caption"] for row in dev_split()[:n_rows]]
    sba, vba = rng.uniform(0.05, 0.95, len(captions)), rng.uniform(0.05, 0.95, len(captions))
    teachers = {
        "sba_teacher": json.dumps(
            {"text_model": "tiny-clip-text", "lm": "tiny-llama", "similarity": "char_levenshtein"}
        ),
        "vba_teacher": json.dumps({"text_to_image": "tiny-sd2", "captioner": "tiny-blip2", "prompt": "a photo of"}),
    }
    records = [
        {"id": f"row-{i:05d}", "caption": caption, "sba_similarity": s, "vba_similarity": v, "seed": seed, **teachers}
        for i, (caption, s, v) in enumerate(zip(captions, sba, vba, strict=True))
    ]
    target = 1 / (1 + np.exp(-(vba + sba - 1)))
    write_dataset(with_scores(teacher_table_from_records(records), sba, vba, target), directory)
    return Path(directory)
