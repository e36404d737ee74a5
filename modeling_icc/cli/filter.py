"""``icc filter``: keep the most concrete captions of a file."""

from __future__ import annotations

import argparse
import sys

from ..caption_io import write_table
from ..errors import UserInputError
from ..selection import KeepRule, keep_mask
from .common import (
    add_input_options,
    add_model_options,
    open_scorer,
    output_format,
    print_summary,
    read_input,
    require_positive,
    score_columns,
    score_table,
)
from .display import print_score_table

EXAMPLES = """examples:
  icc filter --input captions.csv --output concrete.csv --threshold 0.5
  icc filter --input pool.parquet --column TEXT --output top.parquet --top-fraction 0.3
  icc filter --model lite --input captions.txt --output best.jsonl --top-k 1000
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "filter",
        help="keep rows whose caption is concrete enough",
        description="Score a caption file and keep rows by one rule. NaN rows (blank or non-text "
        "captions) are always dropped. Ties in top-k/top-fraction are broken by input order.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rule = parser.add_mutually_exclusive_group(required=True)
    rule.add_argument("--threshold", type=float, help="keep rows with icc_score >= T")
    rule.add_argument("--top-fraction", type=float, help="keep the top F (0-1] of scored rows")
    rule.add_argument("--top-k", type=int, help="keep the K highest-scoring rows")
    add_input_options(parser, required=True)
    parser.add_argument(
        "--show", type=int, default=0, metavar="N", help="also print the first N rows, scores and kept flags (stderr)"
    )
    add_model_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    require_positive(args.batch_size, "--batch-size")
    rule = KeepRule(threshold=args.threshold, top_fraction=args.top_fraction, top_k=args.top_k)
    table = read_input(args)
    scorer = open_scorer(args)
    scored = score_table(scorer, table)
    keep = keep_mask(scored.scores, rule, ranking=scored.raw)
    fmt = output_format(args, table)
    if args.output and args.output != "-":
        write_table(table, args.output, fmt, score_columns(scored), keep=keep)
        print(f"icc: wrote {int(keep.sum())} kept rows to {args.output}", file=sys.stderr)
    elif fmt == "parquet":
        raise UserInputError("Parquet output needs --output FILE")
    else:
        write_table(table, sys.stdout.buffer, fmt, score_columns(scored), keep=keep)
    kept = int(keep.sum())
    n = len(table)
    print_summary(scored, [f"rule: {rule.describe()}; rows in: {n}, kept: {kept}, dropped: {n - kept}"])
    if args.show:
        shown = min(args.show, n)
        print_score_table(
            table.captions[:shown],
            scored.scores[:shown],
            kept=keep[:shown],
            title=f"icc filter: {rule.describe()} with {scored.model_id} (first {shown} of {n} rows)",
            stream=sys.stderr,
        )
    return 0
