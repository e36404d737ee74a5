"""``icc score``: add an ``icc_score`` column to captions from arguments, stdin or a file."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..curation.engines.job import given_captions
from ..curation.engines.run import run_job
from .common import (
    add_input_options,
    add_model_options,
    add_shard_options,
    invalid_text_line,
    job_spec,
    notice,
    print_shard_summary,
    print_summary,
)

if TYPE_CHECKING:
    from ..curation.job_spec import JobSpec

DESCRIPTION = (
    "Score captions for visual concreteness. Output keeps every input column and adds "
    "icc_score (clipped to [0, 1]; NaN for blank or non-text captions and for captions in a language the model "
    "does not read: mini, lite and students read English), icc_model and icc_language (each caption's language, "
    "'und' where too short or unsure to name); plain text is written as TSV with a header (caption, icc_score, "
    "icc_model, icc_language). Captions given as arguments print as a table "
    "on a terminal. Only .txt output (score<TAB>caption) leaves out the other columns."
)
EXAMPLES = """examples:
  icc score "a man with a white shirt" "a great method of quantifying concreteness"
  icc score --model lite --input captions.txt --output scored.jsonl   # lite: fastest; like mini, no download
  icc score --input pool.parquet --column TEXT --output pool.scored.parquet --batch-size 512
  cat captions.txt | icc score --input - > scored.tsv   # caption, icc_score, icc_model, icc_language (a header)
  icc score --input 'pool/*.parquet' --output-dir scored/ --workers 2   # re-run to resume
  icc score --input 'shards/*.tar' --output-dir scores/   # tar shards -> parquet tables of scores
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("texts", nargs="*", metavar="TEXT", help="captions to score")
    add_input_options(parser, required=False)
    add_shard_options(parser)
    add_model_options(parser)


def run(args: argparse.Namespace) -> int:
    spec = job_spec(args)
    if spec.sharded:
        print_shard_summary(run_job(spec, notice), spec)
        return 0
    if spec.texts:
        return score_arguments(spec)
    result = run_job(spec, notice)
    if not spec.to_stdout:
        print(f"icc: wrote {result.rows} rows to {spec.output}", file=sys.stderr)
    print_summary(result)
    return 0


def score_arguments(spec: JobSpec) -> int:
    """Captions given as arguments: a table on a terminal, else written like a text file's rows (TSV).

    An argument that is not valid UTF-8 reaches Python with lone surrogates standing for
    its bytes; they are replaced with U+FFFD (and counted) as invalid bytes in files are.
    """
    texts, replaced = given_captions(spec.texts)
    if replaced:
        print(f"icc: {invalid_text_line(replaced, 'arguments')}", file=sys.stderr)
    if spec.output is None and sys.stdout.isatty():
        from .display import print_score_table

        scorer = spec.scoring.load(notice)
        print_score_table(texts, scorer.score(texts, errors="nan"), title=f"ICC scores ({scorer.model_id})")
        return 0
    result = run_job(spec, notice)
    if not spec.to_stdout:
        print(f"icc: wrote {result.rows} rows to {spec.output}", file=sys.stderr)
    return 0
