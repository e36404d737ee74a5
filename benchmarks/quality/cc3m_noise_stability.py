"""How far web noise moves mini's, lite's and the word-norm average's scores of CC3M validation captions.

The label-free half of the ``noisy_captions`` benchmark (Spearman of noisy against clean scores, and the
keep decisions at 0.5 that flip), on a seeded sample of distinct CC3M validation captions instead of the
100 frozen dev captions, so that the intervals are narrow. mini's caption head never saw these captions
(its word head was fitted on rated words inside them, clean).

    python benchmarks/quality/cc3m_noise_stability.py            # 2,000 captions, about 2 minutes on 2 cores
"""

from __future__ import annotations

import argparse
from pathlib import Path

from modeling_icc.evaluation.baselines.registry import build_scorer, parse_scorer_list
from modeling_icc.evaluation.noise_stability import (
    DEFAULT_THRESHOLD,
    noise_stability,
    plot_stability,
    stability_markdown,
)
from modeling_icc.utils.atomic_files import write_text
from modeling_icc.utils.provenance import environment, write_json
from modeling_icc.utils.shipped_data import (
    CC3M_CAPTIONS_FILE,
    CC3M_STABILITY_SAMPLE_SIZE,
    cc3m_distinct_captions,
    cc3m_stability_sample,
)

RESULTS = Path(__file__).resolve().parent  # the quality results sit beside this script
NAME = "cc3m_noise_stability"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scorers", default="mini,lite,lexical", help="comma-separated icc bench scorer names")
    parser.add_argument("--n", type=int, default=CC3M_STABILITY_SAMPLE_SIZE, help="distinct captions sampled (seeded)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the caption sample")
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD, help="keep rule whose flips are counted")
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    args = parser.parse_args()
    try:
        texts = cc3m_stability_sample(args.n, args.seed)
    except ValueError as error:
        parser.error(str(error))
    scorers = {name: build_scorer(name).scorer for name in parse_scorer_list(args.scorers)}
    if None in scorers.values():
        parser.error("the published model's scores exist for the dev captions only: it cannot score noisy copies")
    result = noise_stability(texts, scorers, threshold=args.threshold)
    title = f"Noise stability on {args.n:,} CC3M validation captions"
    payload = {
        "benchmark": NAME,
        "captions": {
            "source": f"modeling_icc/data/{CC3M_CAPTIONS_FILE} (Conceptual Captions validation split)",
            "selection": f"{args.n} of {len(cc3m_distinct_captions())} distinct non-blank captions, "
            f"numpy default_rng({args.seed})",
        },
        "dtypes": {name: str(getattr(scorer, "dtype", "n/a")) for name, scorer in scorers.items()},
        "environment": environment("cpu"),
        **result,
    }
    write_json(args.out_dir / f"{NAME}.json", payload)
    markdown = stability_markdown(result, title)
    write_text(args.out_dir / f"{NAME}.md", markdown)
    plot_stability(result, args.out_dir / f"{NAME}.png", title)
    print(markdown)
    print(f"wrote {args.out_dir}/{NAME}.{{json,md,png}}")


if __name__ == "__main__":
    main()
