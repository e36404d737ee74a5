"""Cross-validates pooling weighted by token position for mini: the table behind its ``position_decay``.

Runs ``modeling_icc.training.position_pooling`` on the fit's features: each decay, with and without the
description-late noisy copies in training, 10 folds x 5 seeds on the 203 fitting captions (the frozen 100
are never read), and writes the table, the rule and its choice. It runs without the fit's consistency term,
as the decay was chosen (the term came after).

    python benchmarks/quality/position_pooling_cv.py            # about 10 minutes on 2 cores
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from modeling_icc.models.mini.modeling_mini import base_model_path
from modeling_icc.training.fit_mini import Features, FitSettings
from modeling_icc.training.position_pooling import LEAD_TYPES, cross_validate_position_pooling
from modeling_icc.utils.atomic_files import write_text
from modeling_icc.utils.provenance import environment, write_json

RESULTS = Path(__file__).resolve().parent  # the quality results sit beside this script
NAME = "position_pooling_cv"
SHOWN = ("seo_tail", "social", "long", *LEAD_TYPES)


def markdown(result: dict) -> str:
    chosen = result["chosen"]
    lines = [
        "# Position-weighted pooling for mini, cross-validated on the 203 fitting captions",
        "",
        "Out-of-fold Spearman (10 folds x 5 seeds); `objective`: mean over the clean captions and every noise",
        "type of the Spearman with the labels; per type: with the labels / with the clean predictions.",
        "",
        "| decay | lead copies in training | clean | objective | " + " | ".join(SHOWN) + " |",
        "| --- | --- | ---: | ---: | " + " | ".join("---" for _ in SHOWN) + " |",
    ]
    for row in result["candidates"]:
        decay = "none (plain means)" if row["position_decay"] is None else f"{row['position_decay']:g}"
        cells = [f"{row['spearman_with_label'][k]:.3f} / {row['spearman_with_clean'][k]:.3f}" for k in SHOWN]
        lines.append(
            f"| {decay} | {'yes' if row['lead_copies_in_training'] else 'no'} | {row['clean']:.4f} | "
            f"{row['objective']:.4f} | " + " | ".join(cells) + " |"
        )
    lines += ["", f"Rule: {result['rule']}", "", f"Chosen: {chosen}", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    args = parser.parse_args()
    settings = replace(FitSettings(), consistency_weight=0.0)  # chosen before the fit had the term
    features = Features(settings, base_model_path(), print)
    word_coef, word_bias = features.word_head(settings.word_alpha)
    result = cross_validate_position_pooling(features, settings, word_coef, word_bias)
    payload = {"benchmark": NAME, "settings": {"fit": vars(settings)}, "environment": environment("cpu"), **result}
    write_json(args.out_dir / f"{NAME}.json", payload)
    text = markdown(result)
    write_text(args.out_dir / f"{NAME}.md", text)
    print(text)
    print(f"wrote {args.out_dir}/{NAME}.{{json,md}}")


if __name__ == "__main__":
    main()
