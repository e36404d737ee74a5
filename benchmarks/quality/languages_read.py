"""Which languages mini and lite read (issue 51): how each ranks the translations written for this package.

Each model scores the labelled translations (dev captions annotated 3, concrete, or 0-1, abstract) in every
language with its language step off. A language is read where the concrete-vs-abstract AUC on the fitting
captions reaches 0.90 (``modeling_icc.evaluation.languages.MIN_AUC_TO_READ``); a calibration per language could
then move where 0.5 falls. The frozen partition's translations are reported beside, looked at once.

    python benchmarks/quality/languages_read.py
"""

from __future__ import annotations

import argparse
from pathlib import Path

from modeling_icc import load_scorer
from modeling_icc.evaluation.languages import MIN_AUC_TO_READ, THRESHOLD, language_ranking
from modeling_icc.scoring.languages import ENGLISH
from modeling_icc.utils.provenance import environment, write_json

RESULTS = Path(__file__).resolve().parent  # the quality results sit beside this script


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scorers", default="mini,lite", help="comma-separated load_scorer names")
    parser.add_argument("--out", type=Path, default=RESULTS / "languages_read.json")
    args = parser.parse_args()
    models = {}
    for name in args.scorers.split(","):
        scorer = load_scorer(name)
        fit, frozen = language_ranking(scorer, "fit"), language_ranking(scorer, "frozen")
        read = sorted(language for language, result in fit.items() if result["auc"] >= MIN_AUC_TO_READ)
        models[name] = {
            "fit": fit,
            "frozen": frozen,
            "reads_by_this_measure": read,
            "declares": sorted(scorer.languages),
        }
        for language in fit:
            print(
                f"{name} {language}: AUC {fit[language]['auc']:.2f} (frozen {frozen[language]['auc']:.2f}), "
                f"kept at {THRESHOLD}: concrete {fit[language]['concrete_kept']:.0%}, "
                f"abstract {fit[language]['abstract_kept']:.0%}"
            )
        if read != [ENGLISH]:
            print(f"note: {name} ranks {read} at AUC >= {MIN_AUC_TO_READ}; it declares {sorted(scorer.languages)}")
    payload = {
        "benchmark": "languages_read",
        "command": "python benchmarks/quality/languages_read.py",
        "min_auc_to_read": MIN_AUC_TO_READ,
        "threshold": THRESHOLD,
        "models": models,
        "environment": environment("cpu"),
    }
    write_json(args.out, payload)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
