"""Fit the MiniLM ridge baseline's head on the train partition of the word and phrase norms.

python training_scripts/fit_minilm_ridge.py            # writes the shipped head
python training_scripts/fit_minilm_ridge.py --out head.safetensors
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from modeling_icc.evaluation.baselines.embedding_ridge import (
    SentenceEncoder,
    fit_ridge,
    norm_training_set,
    shipped_head_path,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=shipped_head_path())
    parser.add_argument("--device", default=None)
    args = parser.parse_args()
    texts, ratings = norm_training_set()
    start = time.perf_counter()
    embeddings = SentenceEncoder(device=args.device).encode(texts)
    head = fit_ridge(embeddings, ratings)
    head.save(args.out)
    print(f"fitted on {head.n_train} entries (alpha={head.alpha:g}) in {time.perf_counter() - start:.0f}s: {args.out}")


if __name__ == "__main__":
    main()
