"""``icc filter``: keep the most concrete captions of a file or of many shards."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from ..curation.columns import AGGREGATES
from ..curation.engines.job import APART_INFIX, apart_path
from ..curation.engines.run import run_job
from ..curation.filter_options import CLIP_COLUMN
from ..curation.filter_plan import OTHER_LANGUAGES, FilterPlan
from ..utils.locations import location
from .common import (
    add_input_options,
    add_model_options,
    add_shard_options,
    job_spec,
    notice,
    print_shard_summary,
    print_summary,
)

DESCRIPTION = (
    "Score a caption file (or many shards) and keep rows by one rule. NaN rows (blank or "
    "non-text captions) are always dropped; those in a language the model does not read as --other-languages "
    "says (dropped by default). Ties in top-k/top-fraction are broken by input order; "
    "over shards, top-k/top-fraction rank all shards together."
)
EXAMPLES = """examples:
  icc filter --input captions.csv --output concrete.csv --threshold 0.5
  icc filter --input pool.parquet --column TEXT --output top.parquet --top-fraction 0.3
  icc filter --model lite --input captions.txt --output best.jsonl --top-k 1000
  icc filter --input 'pool/*.parquet' --column text --output-dir kept/ --top-fraction 0.3 --workers 2 \\
      --clip-column clip_l14_similarity_score --clip-threshold 0.28 --datacomp-subset kept/subset.npy
  icc filter --input shards/{00000..00099}.tar --output-dir kept/ --threshold 0.5   # re-run to resume
  icc filter --input vsr_train.tsv --output related.tsv --threshold 0.5 --and-column is_related --and-threshold 1
  icc filter --input gbc_graphs.jsonl --output concrete_nodes.jsonl --level node --threshold 0.5
"""


def configure(parser: argparse.ArgumentParser) -> None:
    rule = parser.add_mutually_exclusive_group(required=True)
    rule.add_argument("--threshold", type=float, help="keep rows with icc_score >= T")
    rule.add_argument("--top-fraction", type=float, help="keep the top F (0-1] of scored rows")
    rule.add_argument("--top-k", type=int, help="keep the K highest-scoring rows")
    add_input_options(parser, required=True)
    parser.add_argument(
        "--show", type=int, default=0, metavar="N", help="also print the first N rows, scores and kept flags (stderr)"
    )
    other = parser.add_argument_group(
        "another column's rule (rows must pass both): an image-text score (CLIPScore), a relatedness label or score"
    )
    other.add_argument(
        "--and-column", "--clip-column", default=None, help=f"the column (default: {CLIP_COLUMN}); needs a rule below"
    )
    other_rule = other.add_mutually_exclusive_group()
    other_rule.add_argument(
        "--and-threshold",
        "--clip-threshold",
        type=float,
        help="also require its value >= T (true/false cells count as 1/0: 1 keeps the true rows)",
    )
    other_rule.add_argument("--and-top-fraction", "--clip-top-fraction", type=float, help="also require its top F")
    other_rule.add_argument("--and-top-k", "--clip-top-k", type=int, help="also require its K highest values")
    parser.add_argument(
        "--other-languages",
        choices=OTHER_LANGUAGES,
        default=FilterPlan.other_languages,
        help="rows whose caption is in a language the model does not read (NaN, named in icc_language): drop "
        "them as any NaN row, keep them whatever the rule, or write them apart, to a second file beside each "
        f"output (kept.jsonl: kept{APART_INFIX}.jsonl) (default: %(default)s)",
    )
    nodes = parser.add_argument_group("lists of captions per row (GBC node captions)")
    nodes.add_argument(
        "--level",
        choices=("row", "node"),
        default="row",
        help="row: keep whole rows by --aggregate; node: keep every row, with only its captions passing the rule",
    )
    nodes.add_argument(
        "--aggregate", choices=AGGREGATES, default=None, help="what a row-level rule compares (min: every caption)"
    )
    nodes.add_argument(
        "--node-columns",
        nargs="+",
        default=None,
        metavar="COLUMN",
        help="lists aligned with the captions, kept at the same positions (GBC: node_vertex_ids node_labels)",
    )
    subset = parser.add_argument_group("DataComp")
    subset.add_argument(
        "--datacomp-subset",
        default=None,
        metavar="FILE.npy",
        help="also write the kept rows' uids as DataComp's resharder subset file (sorted u8,u8 array)",
    )
    subset.add_argument(
        "--uid-column", default=None, help="column with the 32-hex-digit uids (default: uid); needs --datacomp-subset"
    )
    add_shard_options(parser)
    add_model_options(parser)


def run(args: argparse.Namespace) -> int:
    spec = job_spec(args)
    result = run_job(spec, notice)
    if spec.sharded:
        print_shard_summary(result, spec)
        return 0
    if not spec.to_stdout:
        print(f"icc: wrote {result.kept} kept rows to {spec.output}", file=sys.stderr)
    if spec.keep.other_languages == "apart":
        where = apart_path(location(spec.output))
        print(f"icc: wrote {result.apart} rows in languages the model does not read to {where}", file=sys.stderr)
    if spec.datacomp_subset is not None:
        print(f"icc: wrote {result.subset_uids} uids to the DataComp subset {spec.datacomp_subset}", file=sys.stderr)
    dropped = result.rows - result.kept
    lines = [f"rule: {spec.keep.plan().describe()}; rows in: {result.rows}, kept: {result.kept}, dropped: {dropped}"]
    if result.kept_captions is not None:
        lines.append(f"node captions kept: {result.kept_captions} of {result.stats.rows}")
    print_summary(result, lines)
    if spec.show:
        from .display import print_score_table

        captions, scores, kept = zip(*result.shown, strict=True) if result.shown else ((), (), ())
        print_score_table(
            captions,
            np.asarray(scores, dtype=np.float64),
            kept=np.asarray(kept, dtype=bool),
            title=f"icc filter: {spec.keep.rule.describe()} with {result.model_id} "
            f"(first {len(captions)} of {result.rows} rows)",
            stream=sys.stderr,
        )
    return 0
