"""Options and steps shared by the ``icc`` subcommands."""

from __future__ import annotations

import argparse
import glob
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..curation.engines.shards import SUMMARY_FILE, ShardJob, expand_inputs, run_shard_job
from ..curation.io.tables import FORMATS, TEXT_COLUMN, CaptionTable, infer_format, read_table
from ..curation.selection import KeepRule
from ..scoring.base import ConcretenessScorer
from ..scoring.load import DEFAULT_MODEL_ID, LITE_MODEL_ID, ModelNotAvailableError, load_scorer
from ..utils.errors import UserInputError


def add_model_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model")
    group.add_argument(
        "--model",
        default=None,
        help=f"Hub id, local directory or 'lite' (default: {DEFAULT_MODEL_ID}, falling back to 'lite' "
        "with a notice when it cannot be loaded)",
    )
    group.add_argument("--batch-size", type=int, default=None, help="rows per batch (neural models)")
    group.add_argument("--device", default=None, help="cpu, cuda, cuda:1, mps (default: best available)")
    group.add_argument(
        "--dtype",
        default=None,
        help="float32, bfloat16 or float16 (default: bf16 on GPUs and on CPUs with native bf16, else fp32)",
    )
    group.add_argument(
        "--compile", action="store_true", help="torch.compile the model (about a minute to start; see load_scorer)"
    )


def add_input_options(parser: argparse.ArgumentParser, *, required: bool) -> None:
    group = parser.add_argument_group("input and output")
    group.add_argument(
        "--input",
        "-i",
        nargs="+",
        required=required,
        metavar="FILE",
        help="file to read, or '-' for stdin; several files or quoted globs ('shards/*.tar') with --output-dir",
    )
    group.add_argument(
        "--format", choices=FORMATS, default=None, help="input format (default: from extension; txt for stdin)"
    )
    group.add_argument("--column", default=TEXT_COLUMN, help="caption column (default: caption)")
    group.add_argument("--output", "-o", default=None, help="file to write (default: stdout)")
    group.add_argument(
        "--output-format",
        choices=FORMATS,
        default=None,
        help="default: from --output's extension, else the input format",
    )


def add_shard_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "sharded jobs",
        "With --output-dir, every input shard (parquet, jsonl, csv, txt or webdataset tar) gets one output "
        "shard and a NAME.stats.json completion marker; re-running the same command resumes.",
    )
    group.add_argument("--output-dir", default=None, metavar="DIR", help="write one output per input shard here")
    group.add_argument("--workers", type=int, default=1, help="processes scoring shards in parallel (default: 1)")
    group.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bars over shards and rows (default: when stderr is a terminal)",
    )


def check_single_input(args: argparse.Namespace) -> None:
    """Without --output-dir the command reads exactly one file (or stdin)."""
    if args.input and (len(args.input) > 1 or glob.has_magic(args.input[0])):
        raise UserInputError("several inputs or a glob need --output-dir DIR (one output per input shard)")
    if args.workers != 1:
        raise UserInputError("--workers applies to sharded jobs; add --output-dir DIR")
    reads_tar = args.input and args.input[0] != "-" and infer_format(args.input[0], args.format) == "tar"
    if reads_tar and not args.output and args.output_format in (None, "tar"):
        raise UserInputError("tar output needs --output FILE (or --output-dir DIR, or another --output-format)")


def run_sharded(args: argparse.Namespace, rule: KeepRule | None = None, **job_options: object) -> int:
    """``icc score|filter --output-dir``: one output per input shard, resumable."""
    if args.output:
        raise UserInputError("give --output FILE for one input or --output-dir DIR for shards, not both")
    if args.input == ["-"]:
        raise UserInputError("sharded jobs read files, not stdin")
    inputs = tuple(expand_inputs(args.input))
    scorer = open_scorer(args)
    job = ShardJob(
        inputs=inputs,
        output_dir=Path(args.output_dir),
        model=scorer.model_id,
        column=args.column,
        input_format=args.format,
        output_format=args.output_format,
        rule=rule,
        device=args.device,
        dtype=args.dtype,
        batch_size=args.batch_size,
        compile=args.compile,
        workers=args.workers,
        progress=args.progress,
        **job_options,
    )
    summary = run_shard_job(job, scorer=scorer)
    lines = [
        f"{summary['shards']} shard{'s' * (summary['shards'] != 1)}, {summary['rows']} rows scored with "
        f"{summary['model']}" + (f", kept {summary['kept']} ({summary['rule']})" if rule is not None else ""),
        f"NaN (blank or non-text captions): {summary['nan']}",
    ]
    if summary["redone_missing_outputs"]:
        lines.append(
            f"redone: {summary['redone_missing_outputs']} finished shard(s) whose output was missing or changed"
        )
    if "datacomp_subset" in summary:
        subset = summary["datacomp_subset"]
        lines.append(f"DataComp subset: {subset['uids']} uids in {subset['path']}")
    lines.append(
        f"outputs and per-shard stats in {args.output_dir}; run summary in {Path(args.output_dir) / SUMMARY_FILE}"
    )
    for line in lines:
        print(f"icc: {line}", file=sys.stderr)
    return 0


def open_scorer(args: argparse.Namespace) -> ConcretenessScorer:
    """Load the requested model; the default falls back to lite with a one-line notice."""
    options = {"device": args.device, "dtype": args.dtype, "batch_size": args.batch_size, "compile": args.compile}
    if args.model is not None:
        return load_scorer(args.model, **options)
    try:
        return load_scorer(DEFAULT_MODEL_ID, **options)
    except ModelNotAvailableError:
        print(
            f"icc: {DEFAULT_MODEL_ID} is not available here (no download possible); using the embedded "
            f"'{LITE_MODEL_ID}' model. Pass --model lite to silence this notice.",
            file=sys.stderr,
        )
        return load_scorer(LITE_MODEL_ID)


def read_input(args: argparse.Namespace) -> CaptionTable:
    (source,) = args.input
    if source == "-":
        return read_table(sys.stdin.buffer, args.format or "txt", column=args.column)
    return read_table(source, infer_format(source, args.format), column=args.column)


def output_format(args: argparse.Namespace, table: CaptionTable) -> str:
    if args.output_format:
        return args.output_format
    if args.output and args.output != "-":
        return infer_format(args.output)
    return table.fmt


@dataclass
class ScoredTable:
    table: CaptionTable
    scores: np.ndarray
    raw: np.ndarray
    model_id: str
    seconds: float

    @property
    def n_nan(self) -> int:
        return int(np.isnan(self.scores).sum())

    @property
    def n_invalid(self) -> int:
        return sum(1 for caption in self.table.captions if not isinstance(caption, str))


def score_table(scorer: ConcretenessScorer, table: CaptionTable) -> ScoredTable:
    """Score every row; non-strings and blanks become NaN (counted in the summary)."""
    start = time.perf_counter()
    raw = scorer.score(table.captions, errors="nan", raw=True)
    scores = np.clip(raw, 0.0, 1.0)
    return ScoredTable(table, scores, raw, scorer.model_id, time.perf_counter() - start)


def score_columns(scored: ScoredTable) -> dict[str, object]:
    return {"icc_score": scored.scores, "icc_model": [scored.model_id] * len(scored.scores)}


def quantile_line(scores: np.ndarray) -> str:
    valid = scores[~np.isnan(scores)]
    if valid.size == 0:
        return "no scored rows"
    qs = np.quantile(valid, [0.05, 0.25, 0.5, 0.75, 0.95])
    return "score quantiles p5/p25/p50/p75/p95: " + " / ".join(f"{q:.3f}" for q in qs)


def print_summary(scored: ScoredTable, extra: list[str] | None = None) -> None:
    n = len(scored.scores)
    rate = n / scored.seconds if scored.seconds > 0 else float("inf")
    lines = [f"scored {n} rows with {scored.model_id} in {scored.seconds:.2f}s ({rate:,.0f} rows/s)"]
    lines += extra or []
    lines.append(
        f"NaN (blank or non-text captions): {scored.n_nan}"
        + (f", of which non-text: {scored.n_invalid}" if scored.n_invalid else "")
    )
    if scored.table.decode_errors:
        lines.append(f"non-UTF-8 lines decoded with replacement characters: {scored.table.decode_errors}")
    lines.append(quantile_line(scored.scores))
    for line in lines:
        print(f"icc: {line}", file=sys.stderr)


def require_positive(value: int | None, name: str) -> None:
    if value is not None and value <= 0:
        raise UserInputError(f"{name} must be positive, got {value}")
