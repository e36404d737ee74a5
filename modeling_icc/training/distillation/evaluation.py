"""Caption-concreteness benchmark: correlation of a student's scores with human annotations."""

from __future__ import annotations

import os

import numpy as np

from ...utils.shipped_data import dev_split
from .distill import correlations, predict


def evaluate_on_dev(model_dir: str | os.PathLike) -> dict[str, object]:
    """Pearson/Spearman/Kendall of the student's raw scores with the 0-3 human labels of the
    shipped development split, next to the published model's on the same captions."""
    rows = dev_split()
    annotations = np.array([row["concreteness_annotation"] for row in rows], dtype=np.float64)
    scores = predict(model_dir, [row["caption"] for row in rows])
    published = np.array([row["icc_score"] for row in rows], dtype=np.float64)
    return {
        "benchmark": "caption concreteness, shipped development split",
        "n": len(rows),
        "student": correlations(scores, annotations),
        "published_moranyanuka_icc": correlations(published, annotations),
    }
