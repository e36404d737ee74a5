"""ICC scores of the 15,833 real CC3M validation captions: histogram, extremes, threshold fractions.

Scores the shipped copy of Conceptual Captions' validation split with ``icc score``
(the command a user runs), then writes what docs/curation.md's worked example shows:
a histogram (PNG), the highest and lowest ten captions, and the fraction of captions
each common threshold keeps (what ``icc filter --threshold T`` keeps: the same rule).

    python benchmarks/cc3m_score_distribution.py --model lite
"""

from __future__ import annotations

import argparse
import csv
import tempfile
from pathlib import Path

import numpy as np

from modeling_icc.cli.main import main as icc
from modeling_icc.curation.selection import KeepRule, keep_mask
from modeling_icc.utils.provenance import environment, write_json

CAPTIONS = Path(__file__).resolve().parents[1] / "modeling_icc" / "data" / "cc3m_validation_captions.tsv"
RESULTS = Path(__file__).resolve().parent / "results"
THRESHOLDS = (0.3, 0.5, 0.7, 0.9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="lite")
    parser.add_argument("--out", type=Path, default=RESULTS / "cc3m_validation_scores")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        scored = Path(directory) / "scored.tsv"
        if icc(["score", "--model", args.model, "-i", str(CAPTIONS), "-o", str(scored)]) != 0:
            raise SystemExit("icc score failed")
        with scored.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
    scores = np.array([float(row["icc_score"]) if row["icc_score"] else np.nan for row in rows])
    order = np.argsort(-np.nan_to_num(scores, nan=-np.inf), kind="stable")  # ties by row, as icc filter breaks them
    valid = order[: int((~np.isnan(scores)).sum())]

    def captions(positions: np.ndarray) -> list[dict]:
        return [{"row": int(rows[i]["row"]), "caption": rows[i]["caption"], "icc_score": scores[i]} for i in positions]

    payload = {
        "benchmark": "cc3m_score_distribution",
        "command": f"icc score --model {args.model} -i modeling_icc/data/cc3m_validation_captions.tsv",
        "model": rows[0]["icc_model"],
        "captions": len(scores),
        "nan": int(np.isnan(scores).sum()),
        "quantiles": dict(
            zip(
                ("p5", "p25", "p50", "p75", "p95"),
                np.nanquantile(scores, [0.05, 0.25, 0.5, 0.75, 0.95]).round(4).tolist(),
                strict=True,
            )
        ),
        "kept_by_threshold": {
            str(t): {"kept": int(kept.sum()), "fraction": round(float(kept.mean()), 4)}
            for t in THRESHOLDS
            for kept in [keep_mask(scores, KeepRule(threshold=t))]
        },
        "highest": captions(valid[:10]),
        "lowest": captions(valid[::-1][:10]),
        "environment": environment("cpu"),
    }
    write_json(args.out.with_suffix(".json"), payload)
    _histogram(scores, payload, args.out.with_suffix(".png"))
    print(f"wrote {args.out.with_suffix('.json')} and {args.out.with_suffix('.png')}")


def _histogram(scores: np.ndarray, payload: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 3.6))
    axis.hist(scores[~np.isnan(scores)], bins=50, range=(0, 1), color="#4c72b0")
    for threshold in THRESHOLDS:
        fraction = payload["kept_by_threshold"][str(threshold)]["fraction"]
        axis.axvline(threshold, color="#c44e52", linewidth=1, linestyle="--")
        axis.annotate(
            f"≥{threshold}: {fraction:.0%}",
            (threshold, 0.97),
            xycoords=("data", "axes fraction"),
            rotation=90,
            va="top",
            ha="right",
            fontsize=8,
            color="#c44e52",
        )
    axis.set_xlabel(f"ICC score ({payload['model']})")
    axis.set_ylabel("captions")
    axis.set_title(f"CC3M validation captions (n = {payload['captions']:,})")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


if __name__ == "__main__":
    main()
