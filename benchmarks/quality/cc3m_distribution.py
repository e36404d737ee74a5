"""Score distributions of mini and lite on the 15,833 CC3M validation captions (unlabelled web alt-text).

An out-of-domain check: a histogram, quantiles, the share of captions at or above 0.5, the 10 highest and
10 lowest captions per scorer, and how well the two scorers agree. Nothing here has a label.

    python benchmarks/quality/cc3m_distribution.py
"""

from __future__ import annotations

import argparse
from pathlib import Path

from modeling_icc import load_scorer
from modeling_icc.evaluation.distribution import distribution_markdown, plot_histograms, score_distribution
from modeling_icc.utils.atomic_files import write_text
from modeling_icc.utils.provenance import environment, write_json
from modeling_icc.utils.shipped_data import CC3M_CAPTIONS_FILE, cc3m_captions

RESULTS = Path(__file__).resolve().parent  # the quality results sit beside this script
TITLE = "Scores on the CC3M validation captions (15,833 unlabelled web captions)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scorers", default="mini,lite", help="comma-separated load_scorer names")
    parser.add_argument("--k", type=int, default=10, help="highest and lowest captions listed per scorer")
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    args = parser.parse_args()
    scorers = {name: load_scorer(name) for name in args.scorers.split(",")}
    result = score_distribution(cc3m_captions(), scorers, k=args.k)
    dtypes = {name: str(getattr(scorer, "dtype", "n/a")) for name, scorer in scorers.items()}
    payload = {
        "benchmark": "cc3m_distribution",
        "captions": {"source": f"modeling_icc/data/{CC3M_CAPTIONS_FILE} (Conceptual Captions validation split)"},
        "dtypes": dtypes,
        "environment": environment("cpu"),
        **result,
    }
    write_json(args.out_dir / "cc3m_distribution.json", payload)
    write_text(args.out_dir / "cc3m_distribution.md", distribution_markdown(result, TITLE))
    plot_histograms(result, args.out_dir / "cc3m_distribution.png", TITLE)
    print(distribution_markdown(result, TITLE))
    print(f"wrote {args.out_dir}/cc3m_distribution.{{json,md,png}}")


if __name__ == "__main__":
    main()
