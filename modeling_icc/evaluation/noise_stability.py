"""How far web noise moves a scorer's scores on unlabelled captions: the label-free half of the
``noisy_captions`` benchmark, on a pool large enough for tight intervals.

``icc bench --benchmarks noisy_captions`` measures on the 100 frozen dev captions, because it also
needs their human labels; 100 captions leave intervals about 0.1 wide. Stability needs no label:
each caption's noisy copy (the benchmark's :data:`~modeling_icc.utils.caption_noise.BENCHMARK_NOISE`
vocabulary, which mini's fit never saw) is scored and compared with the same scorer's score of the
caption itself. Per scorer and noise type: the Spearman correlation of noisy and clean scores with
its bootstrap interval, the mean absolute change, and what a curator feels, the share of captions
whose keep/drop decision at a threshold flips (the rule of ``icc filter --threshold``), and the share
kept clean but dropped noisy. Used on CC3M validation captions
(``benchmarks/quality/cc3m_noise_stability.py``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from ..curation.selection import KeepRule, keep_mask
from ..scoring.base import ConcretenessScorer
from ..utils.caption_noise import BENCHMARK_NOISE, NOISE_TYPES, NoiseVocabulary, add_noise
from .bootstrap import DEFAULT_BOOTSTRAP, Bootstrap
from .data import NOISE_SEED
from .metrics import correlate
from .report import save_figure

#: The keep/drop decision whose flips are counted: the usual ``icc filter`` threshold.
DEFAULT_THRESHOLD = 0.5
#: The issue-23 goal for the Spearman of noisy against clean scores, drawn on the plot.
STABILITY_GOAL = 0.90


def noise_stability(
    texts: Sequence[str],
    scorers: Mapping[str, ConcretenessScorer],
    *,
    noise_types: Sequence[str] = NOISE_TYPES,
    vocabulary: NoiseVocabulary = BENCHMARK_NOISE,
    seed: int = NOISE_SEED,
    threshold: float = DEFAULT_THRESHOLD,
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
    progress: bool = True,
) -> dict:
    """Per scorer and noise type, how its scores of the noisy copies of ``texts`` follow its clean scores."""
    rule = KeepRule(threshold=threshold)
    copies = {kind: [add_noise(text, kind, vocabulary, seed) for text in texts] for kind in noise_types}
    results = {}
    steps = [(name, kind) for name in scorers for kind in ("clean", *noise_types)]
    bar = tqdm(total=len(steps), desc="noise stability", unit="set", disable=None if progress else True)
    for name, scorer in scorers.items():
        clean = scorer.score(list(texts), errors="nan", raw=True).astype(float)
        bar.update()
        kept_clean = keep_mask(clean, rule)
        per_type = {}
        for kind in noise_types:
            noisy = scorer.score(copies[kind], errors="nan", raw=True).astype(float)
            kept_noisy = keep_mask(noisy, rule)
            per_type[kind] = {
                "versus_clean": correlate(noisy, clean, bootstrap).to_dict(),
                "mean_abs_change": float(np.nanmean(np.abs(noisy - clean))),
                "mean_change": float(np.nanmean(noisy - clean)),
                "decision_flips": float((kept_clean != kept_noisy).mean()),
                "kept_clean_dropped_noisy": float((kept_clean & ~kept_noisy).mean()),
            }
            bar.update()
        results[name] = {"model_id": scorer.model_id, "kept_clean": float(kept_clean.mean()), "noise": per_type}
    bar.close()
    return {
        "n_captions": len(texts),
        "noise_types": list(noise_types),
        "seed": seed,
        "threshold": threshold,
        "bootstrap": {"n_bootstrap": bootstrap.n_bootstrap, "seed": bootstrap.seed, "confidence": bootstrap.confidence},
        "scorers": results,
    }


def stability_markdown(result: dict, title: str) -> str:
    """One table: a row per noise type, per scorer the Spearman with clean scores [CI] and the flipped decisions."""
    names = list(result["scorers"])
    threshold = result["threshold"]
    bootstrap = result["bootstrap"]
    header = " | ".join(f"{name}: vs clean / flips / kept->dropped" for name in names)
    lines = [
        f"### {title}",
        "",
        f"{result['n_captions']} captions, one noisy copy each per noise type (seed {result['seed']}). Cells:"
        f" Spearman of the noisy copies' scores with the same scorer's clean scores [{bootstrap['confidence']:.0%}"
        f" bootstrap CI, {bootstrap['n_bootstrap']} resamples] / share of captions whose keep decision at"
        f" {threshold} flips / share kept clean but dropped noisy.",
        "",
        f"| noise | {header} |",
        "| --- |" + " --- |" * len(names),
    ]
    for kind in result["noise_types"]:
        cells = []
        for name in names:
            row = result["scorers"][name]["noise"][kind]
            cells.append(
                f"{_interval(row['versus_clean']['spearman'])} / {row['decision_flips']:.1%}"
                f" / {row['kept_clean_dropped_noisy']:.1%}"
            )
        lines.append(f"| {kind} | {' | '.join(cells)} |")
    kept = ", ".join(f"{name} {summary['kept_clean']:.1%}" for name, summary in result["scorers"].items())
    lines += ["", f"Clean captions kept at {threshold}: {kept}."]
    return "\n".join(lines) + "\n"


def _interval(estimate: dict) -> str:
    """``0.912 [0.880, 0.931]``; ``n/a`` where the correlation is undefined (a side is constant)."""
    if estimate["value"] is None:
        return "n/a"
    if estimate["low"] is None:
        return f"{estimate['value']:.3f}"
    return f"{estimate['value']:.3f} [{estimate['low']:.3f}, {estimate['high']:.3f}]"


def plot_stability(result: dict, path: str | os.PathLike, title: str) -> Path:
    """Bars of the Spearman with clean scores per noise type and scorer, with their intervals and the goal line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = result["noise_types"]
    names = list(result["scorers"])
    figure, axis = plt.subplots(figsize=(10, 4.2))
    width = 0.8 / max(len(names), 1)
    for offset, name in enumerate(names):
        rows = [result["scorers"][name]["noise"][kind]["versus_clean"]["spearman"] for kind in kinds]
        values, low, high = (np.array([row[key] for row in rows], dtype=float) for key in ("value", "low", "high"))
        errors = np.nan_to_num(np.stack([values - low, high - values]))
        axis.bar(np.arange(len(kinds)) + offset * width, values, width, yerr=errors, capsize=2, label=name)
    axis.axhline(STABILITY_GOAL, color="grey", linewidth=0.8, linestyle="--", label=f"goal {STABILITY_GOAL}")
    axis.set_xticks(np.arange(len(kinds)) + width * (len(names) - 1) / 2, kinds, rotation=45, ha="right")
    axis.set_ylabel("Spearman, noisy vs clean scores")
    axis.set_ylim(0, 1)
    axis.set_title(title, fontsize=10)
    axis.legend(fontsize=8, loc="lower left")
    return save_figure(figure, path)
