"""``icc score``: add an ``icc_score`` column to captions from arguments, stdin or a file."""

from __future__ import annotations

import argparse
import sys

from ..curation.io.table import TEXT_COLUMN
from ..curation.io.text import replace_surrogates
from ..utils.errors import UserInputError
from .common import (
    add_input_options,
    add_model_options,
    add_shard_options,
    check_model_options,
    file_job,
    invalid_text_line,
    open_scorer,
    print_summary,
    require_positive,
    run_sharded,
    run_single_file,
)

DESCRIPTION = (
    "Score captions for visual concreteness. Output keeps every input column and adds "
    "icc_score (clipped to [0, 1]; NaN for blank or non-text captions) and icc_model; plain text is written "
    "as TSV with a header (caption, icc_score, icc_model). Captions given as arguments print as a table "
    "on a terminal. Only .txt output (score<TAB>caption) leaves out the other columns."
)
EXAMPLES = """examples:
  icc score "a man with a white shirt" "a great method of quantifying concreteness"
  icc score --model lite --input captions.txt --output scored.jsonl   # lite: fastest; like mini, no download
  icc score --input pool.parquet --column TEXT --output pool.scored.parquet --batch-size 512
  cat captions.txt | icc score --input - > scored.tsv   # caption, icc_score, icc_model (with a header)
  icc score --input 'pool/*.parquet' --output-dir scored/ --workers 2   # re-run to resume
  icc score --input 'shards/*.tar' --output-dir scores/   # tar shards -> parquet tables of scores
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("texts", nargs="*", metavar="TEXT", help="captions to score")
    add_input_options(parser, required=False)
    add_shard_options(parser)
    add_model_options(parser)


def run(args: argparse.Namespace) -> int:
    require_positive(args.batch_size, "--batch-size")
    check_model_options(args)
    if args.texts and args.input:
        raise UserInputError("give captions as arguments or --input, not both")
    if args.texts and (args.format or args.column):
        raise UserInputError("--format and --column describe an --input file; captions given as arguments need neither")
    if args.output_dir:
        if not args.input:
            raise UserInputError("--output-dir needs --input shards")
        return run_sharded(args)
    if args.texts:
        return score_arguments(args)
    if not args.input:
        if sys.stdin.isatty():
            raise UserInputError("nothing to score: pass captions, --input FILE, or pipe text into --input -")
        args.input = ["-"]
    result = run_single_file(args, file_job(args))
    if args.output and args.output != "-":
        print(f"icc: wrote {result.rows} rows to {args.output}", file=sys.stderr)
    print_summary(result)
    return 0


def score_arguments(args: argparse.Namespace) -> int:
    """Captions given as arguments: a table on a terminal, else written like a text file's rows (TSV).

    An argument that is not valid UTF-8 reaches Python with lone surrogates standing for
    its bytes; they are replaced with U+FFFD (and counted) as invalid bytes in files are.
    """
    from ..curation.io.table import CaptionTable

    texts = [replace_surrogates(text) for text in args.texts]
    replaced = sum(text != original for text, original in zip(texts, args.texts, strict=True))
    if replaced:
        print(f"icc: {invalid_text_line(replaced, 'arguments')}", file=sys.stderr)
    if not args.output and sys.stdout.isatty():
        from .display import print_score_table

        scorer = open_scorer(args)
        print_score_table(texts, scorer.score(texts, errors="nan"), title=f"ICC scores ({scorer.model_id})")
        return 0
    table = CaptionTable("txt", TEXT_COLUMN, texts, records=[{TEXT_COLUMN: t} for t in texts], fieldnames=[TEXT_COLUMN])
    result = run_single_file(args, file_job(args, table))
    if args.output and args.output != "-":
        print(f"icc: wrote {result.rows} rows to {args.output}", file=sys.stderr)
    return 0
