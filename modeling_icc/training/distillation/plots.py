"""The pipeline's figures as PNG files, so a person can check a run by looking at it."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ...utils.atomic_files import atomic_file
from .combine import ScoreCombiner


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _per_length(values: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    seen = np.unique(lengths)
    stats = np.array([np.quantile(values[lengths == n], [0.1, 0.5, 0.9]) for n in seen])
    return seen, stats[:, 0], stats[:, 1], stats[:, 2]


def plot_standardization(
    teachers: dict[str, tuple[np.ndarray, np.ndarray]], n_words: np.ndarray, path: str | os.PathLike
) -> Path:
    """Before/after standardization per caption length, one row per teacher (the paper's appendix figure).

    ``teachers`` maps a name to ``(raw_similarity, standardized_score)``.
    """
    plt = _pyplot()
    figure, axes = plt.subplots(len(teachers), 2, figsize=(11, 3.6 * len(teachers)), squeeze=False)
    lengths = np.asarray(n_words)
    for row, (name, (raw, standardized)) in enumerate(teachers.items()):
        for column, (values, title) in enumerate(((raw, "raw similarity"), (standardized, "standardized score"))):
            axis = axes[row][column]
            seen, low, median, high = _per_length(np.asarray(values), lengths)
            axis.scatter(lengths, values, s=6, alpha=0.25, color="tab:gray", label="captions")
            axis.plot(seen, median, color="tab:blue", label="median per length")
            axis.fill_between(seen, low, high, color="tab:blue", alpha=0.15, label="10-90 % per length")
            axis.set_title(f"{name.upper()}: {title}")
            axis.set_xlabel("caption length (words)")
            axis.set_ylabel(title)
            axis.set_ylim(-0.02, 1.02)
            axis.legend(loc="lower left", fontsize=7)
    figure.tight_layout()
    return _save(figure, path)


def plot_combination(
    vba: np.ndarray, sba: np.ndarray, labels: np.ndarray, combiner: ScoreCombiner, path: str | os.PathLike
) -> Path:
    """Annotated captions in the (SBA, VBA) plane with the fitted decision line (the paper's Figure 4)."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(6, 5.5))
    labels = np.asarray(labels).astype(bool)
    axis.scatter(sba[~labels], vba[~labels], s=14, color="tab:red", alpha=0.7, label="annotated abstract")
    axis.scatter(sba[labels], vba[labels], s=14, color="tab:green", alpha=0.7, label="annotated concrete")
    xs = np.linspace(0, 1, 50)
    if combiner.vba_weight:
        ys = -(combiner.sba_weight * xs + combiner.intercept) / combiner.vba_weight
        axis.plot(xs, ys, color="black", label="decision line (ICC target = 0.5)")
    axis.set_xlim(0, 1)
    axis.set_ylim(0, 1)
    axis.set_xlabel("SBA score (standardized)")
    axis.set_ylabel("VBA score (standardized)")
    axis.set_title(f"ICC = σ({combiner.vba_weight:.2f}·VBA + {combiner.sba_weight:.2f}·SBA + {combiner.intercept:.2f})")
    axis.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    return _save(figure, path)


def _save(figure, path: str | os.PathLike) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path) as stream:
        figure.savefig(stream, dpi=110, format="png")
    _pyplot().close(figure)
    return path
