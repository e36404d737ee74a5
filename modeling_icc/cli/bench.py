"""``icc bench``, the quality benchmarks: correlations with human concreteness ratings, for any set of scorers."""

from __future__ import annotations

import argparse
import sys

from ..evaluation.baselines.registry import (
    BASELINES,
    DEFAULT_SCORERS,
    ModelOptions,
    build_scorer,
    check_extras,
    parse_scorer_list,
)
from ..evaluation.bootstrap import DEFAULT_BOOTSTRAP
from ..evaluation.data import (
    BENCHMARK_NAMES,
    DEFAULT_BENCHMARKS,
    DEV_LABEL_COLUMN,
    PUBLISHED,
    PUBLISHED_COLUMN,
    TEXT_COLUMN,
)
from ..utils.errors import UserInputError
from .common import keywords_for, require_positive

#: The model-based scorers' settings unless a flag says otherwise.
MODEL_DEFAULTS = ModelOptions()

DESCRIPTION = (
    "Correlate scorers with human concreteness ratings: Pearson, Spearman and Kendall, each with "
    "a seeded bootstrap interval, and n. Benchmarks: captions (the shipped 303-caption dev split, or --data), "
    "words and nouns (Brysbaert unigrams), phrases (Muraki multiword expressions); norm benchmarks use a "
    "held-out fifth of the norms. noisy_captions: the 100 frozen dev captions clean and under each noise type "
    "(hashtags, handles, URLs, emoji, boilerplate, ...), with each scorer's Spearman against its clean scores. "
    "web_junk: alt-text that is no caption (file names, URLs, markup, missing-value markers, codes) and real "
    "captions, with the share of each kind a filter at 0.5 keeps."
)
EXAMPLES = f"""examples:
  icc bench                                   # {",".join(DEFAULT_SCORERS)} on every benchmark ([baselines] extra)
  icc bench --scorers lite,published --benchmarks captions
  icc bench --scorers lite,./my_student,moranyanuka/icc --output-dir runs/bench --name students
  icc bench --benchmarks noisy_captions --scorers mini,lite,lexical,published   # robustness to web noise
  icc bench --benchmarks web_junk --scorers mini,lite,lexical   # junk a filter at 0.5 keeps
  icc bench --data rated.csv --column text --label-column rating --benchmarks captions
  icc bench --scorers stroop:openai/clip-vit-base-patch32,llm:meta-llama/Llama-2-7b-chat-hf --device cuda

scorers: {", ".join([*BASELINES, PUBLISHED])}, or a Hub id / local directory of an ICC student.
extras: ca, cc3m, cc3m-keep, aveclip and the words, nouns, phrases benchmarks need
         pip install "icc-concreteness[baselines]"; a missing one is named before any work.
outputs: DIR/NAME.json (every number with n, scorer id, versions), DIR/NAME.md (tables),
         DIR/NAME_<benchmark>.png (score against human label, one panel per scorer).
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scorers", default=",".join(DEFAULT_SCORERS), help="comma-separated scorer specs")
    parser.add_argument(
        "--benchmarks",
        default=",".join(DEFAULT_BENCHMARKS),
        help=f"comma-separated, from {', '.join(BENCHMARK_NAMES)} (default: all but noisy_captions and web_junk)",
    )
    data = parser.add_argument_group("caption benchmark data (default: the shipped dev split)")
    data.add_argument("--data", default=None, help="CSV/TSV/JSONL/Parquet with captions and a numeric label")
    data.add_argument("--format", dest="fmt", metavar="FORMAT", help="format of --data (default: from its extension)")
    data.add_argument(
        "--column",
        dest="caption_column",
        metavar="COLUMN",
        default=TEXT_COLUMN,
        help="caption column (default: %(default)s)",
    )
    data.add_argument("--label-column", default=DEV_LABEL_COLUMN, help="human label column (default: %(default)s)")
    data.add_argument(
        "--published-column",
        default=PUBLISHED_COLUMN,
        help="column of released ICC scores, reported as its own row when present (default: %(default)s)",
    )
    data.add_argument(
        "--norm-split", choices=("test", "all"), default="test", help="part of the word/phrase norms to evaluate on"
    )
    stats = parser.add_argument_group("statistics and outputs")
    stats.add_argument(
        "--n-bootstrap",
        type=int,
        default=DEFAULT_BOOTSTRAP.n_bootstrap,
        help="bootstrap resamples (default: %(default)s)",
    )
    stats.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_BOOTSTRAP.seed,
        help="bootstrap and image-generation seed (default: %(default)s)",
    )
    stats.add_argument("--output-dir", "-o", default="bench_results", help="folder for the outputs")
    stats.add_argument("--name", default="results", help="file stem of the outputs (default: results)")
    models = parser.add_argument_group("model-based scorers")
    models.add_argument("--device", default=None, help="cpu, cuda, mps (default: best available)")
    models.add_argument("--dtype", default=None, help="float32, bfloat16 or float16")
    models.add_argument("--batch-size", type=int, default=None, help="rows per batch")
    models.add_argument("--clip-model", default=MODEL_DEFAULTS.clip_model, help="CLIP for stroop and aveclip")
    models.add_argument(
        "--t2i-model", dest="text_to_image", metavar="T2I_MODEL", help="text-to-image pipeline for aveclip"
    )
    models.add_argument("--llm-model", default=None, help="causal LM for llm")
    models.add_argument(
        "--llm-scale", type=int, choices=(3, 5, 10), default=MODEL_DEFAULTS.llm_scale, help="rating scale 1..N"
    )
    models.add_argument(
        "--images-per-caption",
        type=int,
        default=MODEL_DEFAULTS.images_per_caption,
        help="K images per caption for aveclip",
    )


def run(args: argparse.Namespace) -> int:
    from ..evaluation.suite import load_benchmarks, run_suite

    require_positive(args.batch_size, "--batch-size")
    require_positive(args.images_per_caption, "--images-per-caption")
    if args.n_bootstrap < 0:
        raise UserInputError(f"--n-bootstrap must be >= 0, got {args.n_bootstrap}")
    names = [name.strip() for name in args.benchmarks.split(",") if name.strip()]
    unknown = sorted(set(names) - set(BENCHMARK_NAMES))
    if unknown or not names:
        raise UserInputError(f"unknown benchmark(s) {', '.join(unknown) or '(none)'}; use {', '.join(BENCHMARK_NAMES)}")
    specs = parse_scorer_list(args.scorers)
    check_extras(names, specs, hint=" (or leave them out of --benchmarks and --scorers)")
    benchmarks = load_benchmarks(names, **keywords_for(load_benchmarks, args))
    options = ModelOptions(**keywords_for(ModelOptions, args))
    scorers = [build_scorer(spec, options) for spec in specs]
    outcome = run_suite(
        benchmarks,
        scorers,
        n_bootstrap=args.n_bootstrap,
        seed=args.seed,
        device=args.device or "auto",
        output_dir=args.output_dir,
        name=args.name,
        command=" ".join(["icc", *sys.argv[1:]]) if sys.argv[1:2] == ["bench"] else None,
    )
    for path in outcome.paths:
        print(f"icc: wrote {path}", file=sys.stderr)
    for item in outcome.skipped:
        print(f"icc: skipped {item.scorer} on {item.benchmark}: {item.reason}", file=sys.stderr)
    print(outcome.markdown)
    return 0
