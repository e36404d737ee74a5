"""Score distributions on an unlabelled caption pool: what a scorer does to captions no one annotated.

For each scorer: quantiles, the share of captions each common threshold keeps (the rule ``icc filter
--threshold`` applies), a histogram, and the highest and lowest captions
(distinct, scored captions; ties in input order); for each pair of scorers, the Spearman correlation of their
scores. Used on the 15,833 CC3M validation captions (``benchmarks/quality/cc3m_distribution.py``) as an
out-of-domain check: no label is involved, so nothing here was fitted on it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path

import numpy as np

from ..curation.columns import SCORE_QUANTILES
from ..curation.selection import KeepRule, keep_mask
from ..scoring.base import ConcretenessScorer
from .report import save_figure

HISTOGRAM_BINS = 20
#: Thresholds whose kept share is reported: the range users pick from.
THRESHOLDS = (0.3, 0.5, 0.7, 0.9)


def score_distribution(texts: Sequence[str], scorers: Mapping[str, ConcretenessScorer], k: int = 10) -> dict:
    """Per-scorer summaries of ``scorer.score(texts)`` and the pairwise Spearman correlations."""
    from scipy.stats import spearmanr

    distinct = list(dict.fromkeys(texts))
    scores = {name: scorer.score(list(texts)) for name, scorer in scorers.items()}
    edges = np.linspace(0.0, 1.0, HISTOGRAM_BINS + 1)
    summaries = {}
    for name, values in scores.items():
        valid = values[~np.isnan(values)]
        per_caption = dict(zip(texts, values.tolist(), strict=True))
        scored = [text for text in distinct if not np.isnan(per_caption[text])]  # blank captions score NaN
        ranked = sorted(scored, key=lambda text: -per_caption[text])  # stable: ties stay in input order
        summaries[name] = {
            "model_id": scorers[name].model_id,
            "n": len(valid),
            "mean": float(valid.mean()),
            "quantiles": {f"p{round(q * 100)}": float(np.quantile(valid, q)) for q in SCORE_QUANTILES},
            "kept_by_threshold": {  # over all captions, as icc filter counts rows in and kept
                str(threshold): float(keep_mask(values, KeepRule(threshold=threshold)).mean())
                for threshold in THRESHOLDS
            },
            "histogram": {"edges": edges.tolist(), "counts": np.histogram(valid, edges)[0].tolist()},
            "highest": [{"caption": text, "score": per_caption[text]} for text in ranked[:k]],
            "lowest": [{"caption": text, "score": per_caption[text]} for text in ranked[::-1][:k]],
        }
    agreement = {
        f"{a} vs {b}": float(spearmanr(scores[a], scores[b], nan_policy="omit")[0]) for a, b in combinations(scores, 2)
    }
    return {"n_captions": len(texts), "n_distinct": len(distinct), "scorers": summaries, "spearman": agreement}


def distribution_markdown(result: dict, title: str) -> str:
    """The summary table and, per scorer, the highest and lowest captions."""
    lines = [f"### {title}", "", f"{result['n_captions']} captions ({result['n_distinct']} distinct).", ""]
    kept_header = " | ".join(f"kept at {threshold}" for threshold in THRESHOLDS)
    lines += [f"| scorer | mean | p5 / p25 / p50 / p75 / p95 | {kept_header} |"]
    lines += ["| --- | ---: | --- |" + " ---: |" * len(THRESHOLDS)]
    for name, summary in result["scorers"].items():
        quantiles = " / ".join(f"{value:.2f}" for value in summary["quantiles"].values())
        kept = " | ".join(f"{share:.1%}" for share in summary["kept_by_threshold"].values())
        lines.append(f"| {name} | {summary['mean']:.2f} | {quantiles} | {kept} |")
    lines += [""] + [f"Spearman, {pair}: {value:.2f}." for pair, value in result["spearman"].items()]
    for name, summary in result["scorers"].items():
        for side in ("highest", "lowest"):
            lines += ["", f"{name}, {len(summary[side])} {side}:", "", "| score | caption |", "| ---: | --- |"]
            lines += [f"| {row['score']:.3f} | {_cell(row['caption'])} |" for row in summary[side]]
    return "\n".join(lines) + "\n"


def plot_histograms(result: dict, path: str | os.PathLike, title: str) -> Path:
    """One step histogram per scorer on shared [0, 1] bins."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.4, 3.8))
    for name, summary in result["scorers"].items():
        histogram = summary["histogram"]
        axis.stairs(histogram["counts"], histogram["edges"], label=f"{name} (median {summary['quantiles']['p50']:.2f})")
    for threshold in THRESHOLDS:
        axis.axvline(threshold, color="grey", linewidth=0.8, linestyle="--")
    axis.set_xlabel("score")
    axis.set_ylabel("captions")
    axis.set_title(title, fontsize=10)
    axis.legend(fontsize=8)
    return save_figure(figure, path)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
