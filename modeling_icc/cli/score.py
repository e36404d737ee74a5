"""``icc score``: add an ``icc_score`` column to captions from arguments, stdin or a file."""

from __future__ import annotations

import argparse
import sys

from ..curation.io.tables import TEXT_COLUMN, CaptionTable, write_table
from ..utils.errors import UserInputError
from .common import (
    add_input_options,
    add_model_options,
    add_shard_options,
    check_single_input,
    open_scorer,
    output_format,
    print_summary,
    read_input,
    require_positive,
    run_sharded,
    score_columns,
    score_table,
)
from .display import print_score_table

EXAMPLES = """examples:
  icc score "a man with a white shirt" "a great method of quantifying concreteness"
  icc score --model lite --input captions.txt --output scored.jsonl
  icc score --input pool.parquet --column TEXT --output pool.scored.parquet --batch-size 512
  cat captions.txt | icc score --input - > scored.tsv
  icc score --input 'pool/*.parquet' --output-dir scored/ --workers 2   # re-run to resume
  icc score --input 'shards/*.tar' --output-dir scores/   # tar shards -> parquet tables of scores
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "score",
        help="score captions (arguments, stdin, txt/jsonl/csv/parquet)",
        description="Score captions for visual concreteness. Output keeps every input column and adds "
        "icc_score (clipped to [0, 1]; NaN for blank or non-text captions) and icc_model.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("texts", nargs="*", metavar="TEXT", help="captions to score")
    add_input_options(parser, required=False)
    add_shard_options(parser)
    add_model_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    require_positive(args.batch_size, "--batch-size")
    if args.texts and args.input:
        raise UserInputError("give captions as arguments or --input, not both")
    if args.output_dir:
        if not args.input:
            raise UserInputError("--output-dir needs --input shards")
        return run_sharded(args)
    if not args.texts and not args.input:
        if sys.stdin.isatty():
            raise UserInputError("nothing to score: pass captions, --input FILE, or pipe text into --input -")
        args.input = ["-"]
    check_single_input(args)
    if args.texts:
        table = CaptionTable(
            "txt",
            TEXT_COLUMN,
            list(args.texts),
            records=[{TEXT_COLUMN: t} for t in args.texts],
            fieldnames=[TEXT_COLUMN],
        )
    else:
        table = read_input(args)
    scorer = open_scorer(args)
    scored = score_table(scorer, table)
    fmt = output_format(args, table)
    if args.output and args.output != "-":
        write_table(table, args.output, fmt, score_columns(scored))
        print(f"icc: wrote {len(table)} rows to {args.output}", file=sys.stderr)
    elif args.texts and sys.stdout.isatty():
        print_score_table(table.captions, scored.scores, title=f"ICC scores ({scored.model_id})")
    else:
        if fmt == "parquet":
            raise UserInputError("Parquet output needs --output FILE")
        write_table(table, sys.stdout.buffer, fmt, score_columns(scored))
    if args.input:
        print_summary(scored)
    return 0
