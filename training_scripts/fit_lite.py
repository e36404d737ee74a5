"""Refit the lite model's weights on annotated captions and write the shipped parameters.

    python training_scripts/fit_lite.py                       # the shipped 303-caption dev split
    python training_scripts/fit_lite.py --data my_labels.csv --caption-column text --label-column label \
        --out my_lite_model.json
"""

import argparse
import csv
import json
from pathlib import Path

from modeling_icc.models.lite.modeling_lite import MODEL_FILE
from modeling_icc.training.fit_lite import DEFAULT_ALPHA, fit_lite_model
from modeling_icc.utils.shipped_data import DEV_SPLIT_FILE, dev_split

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "modeling_icc" / "models" / "lite" / "data" / MODEL_FILE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None, help="CSV with captions and numeric labels")
    parser.add_argument("--caption-column", default="caption")
    parser.add_argument("--label-column", default="concreteness_annotation")
    parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    if args.data is None:
        rows, source = dev_split(), DEV_SPLIT_FILE
    else:
        with args.data.open(encoding="utf-8") as handle:
            rows, source = list(csv.DictReader(handle)), args.data.name
    model = fit_lite_model(
        [row[args.caption_column] for row in rows],
        [float(row[args.label_column]) for row in rows],
        alpha=args.alpha,
        source=source,
    )
    model.save(args.out)
    print(json.dumps(model.report, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
