"""``icc filter``: keep the most concrete captions of a file or of many shards."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ..curation.columns import to_float_array
from ..curation.io import datacomp
from ..curation.io.tables import write_table
from ..curation.selection import KeepRule, keep_mask
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
  icc filter --input captions.csv --output concrete.csv --threshold 0.5
  icc filter --input pool.parquet --column TEXT --output top.parquet --top-fraction 0.3
  icc filter --model lite --input captions.txt --output best.jsonl --top-k 1000
  icc filter --input 'pool/*.parquet' --column text --output-dir kept/ --top-fraction 0.3 --workers 2 \\
      --clip-column clip_l14_similarity_score --clip-threshold 0.28 --datacomp-subset kept/subset.npy
  icc filter --input shards/{00000..00099}.tar --output-dir kept/ --threshold 0.5   # re-run to resume
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "filter",
        help="keep rows whose caption is concrete enough",
        description="Score a caption file (or many shards) and keep rows by one rule. NaN rows (blank or "
        "non-text captions) are always dropped. Ties in top-k/top-fraction are broken by input order; "
        "over shards, top-k/top-fraction rank all shards together.",
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
    clip = parser.add_argument_group("image-text score (rows must pass both rules)")
    clip.add_argument("--clip-column", default="clip_score", help="column with a CLIPScore-like value")
    clip_rule = clip.add_mutually_exclusive_group()
    clip_rule.add_argument("--clip-threshold", type=float, help="also require clip value >= T")
    clip_rule.add_argument("--clip-top-fraction", type=float, help="also require the top F of clip values")
    clip_rule.add_argument("--clip-top-k", type=int, help="also require the K highest clip values")
    subset = parser.add_argument_group("DataComp")
    subset.add_argument(
        "--datacomp-subset",
        default=None,
        metavar="FILE.npy",
        help="also write the kept rows' uids as DataComp's resharder subset file (sorted u8,u8 array)",
    )
    subset.add_argument("--uid-column", default="uid", help="column with the 32-hex-digit uids (default: uid)")
    add_shard_options(parser)
    add_model_options(parser)
    parser.set_defaults(run=run)


def clip_rule(args: argparse.Namespace) -> KeepRule | None:
    given = (args.clip_threshold, args.clip_top_fraction, args.clip_top_k)
    if all(value is None for value in given):
        return None
    return KeepRule(threshold=args.clip_threshold, top_fraction=args.clip_top_fraction, top_k=args.clip_top_k)


def run(args: argparse.Namespace) -> int:
    require_positive(args.batch_size, "--batch-size")
    rule = KeepRule(threshold=args.threshold, top_fraction=args.top_fraction, top_k=args.top_k)
    subset = Path(args.datacomp_subset) if args.datacomp_subset else None
    if args.output_dir:
        return run_sharded(
            args,
            rule,
            clip_rule=clip_rule(args),
            clip_column=args.clip_column,
            uid_column=args.uid_column,
            datacomp_subset=subset,
        )
    check_single_input(args)
    table = read_input(args)
    scorer = open_scorer(args)
    scored = score_table(scorer, table)
    keep = keep_mask(scored.scores, rule, ranking=scored.raw)
    extra_rule = clip_rule(args)
    if extra_rule is not None:
        keep &= keep_mask(to_float_array(table.values(args.clip_column)), extra_rule)
    fmt = output_format(args, table)
    if args.output and args.output != "-":
        write_table(table, args.output, fmt, score_columns(scored), keep=keep)
        print(f"icc: wrote {int(keep.sum())} kept rows to {args.output}", file=sys.stderr)
    elif fmt == "parquet":
        raise UserInputError("Parquet output needs --output FILE")
    else:
        write_table(table, sys.stdout.buffer, fmt, score_columns(scored), keep=keep)
    if subset is not None:
        kept_uids = [table.values(args.uid_column)[row] for row in np.flatnonzero(keep)]
        uids, _ = datacomp.subset_array([datacomp.uids_to_array(kept_uids)])
        datacomp.save_subset(subset, uids)
        print(f"icc: wrote {len(uids)} uids to the DataComp subset {subset}", file=sys.stderr)
    kept = int(keep.sum())
    n = len(table)
    rules = rule.describe() + (f" and {args.clip_column}: {extra_rule.describe()}" if extra_rule else "")
    print_summary(scored, [f"rule: {rules}; rows in: {n}, kept: {kept}, dropped: {n - kept}"])
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
