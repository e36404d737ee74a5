"""Options and steps shared by the ``icc`` subcommands.

Imports stay light (no torch, transformers or Arrow) so that commands on the embedded
model start at once; sharded jobs and neural models import what they need when used.
"""

from __future__ import annotations

import argparse
import glob
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..curation.columns import SCORE_QUANTILES
from ..curation.filter_plan import ColumnRule, FilterPlan
from ..curation.io import compression
from ..curation.io.formats import (
    FORMAT_COLUMNS,
    FORMATS,
    INPUT_FORMATS,
    default_output_format,
    detect_format,
    infer_format,
)
from ..curation.io.readers import check_input_file
from ..curation.io.table import TEXT_COLUMN
from ..curation.selection import KeepRule
from ..scoring.base import ConcretenessScorer
from ..scoring.load import (
    DEFAULT_MODEL_ID,
    LITE_MODEL_ID,
    MINI_MODEL_ID,
    PUBLISHED_MODEL_ID,
    fallback_notices,
    load_scorer,
)
from ..utils.errors import UserInputError

if TYPE_CHECKING:
    from ..curation.engines.single_file import FileJob, FileJobResult
    from ..curation.io.table import CaptionTable


def keywords_for(target: Callable[..., object], args: argparse.Namespace) -> dict[str, object]:
    """The parsed options named as ``target``'s parameters (a function's, or a dataclass's fields).

    A flag whose ``dest`` is a parameter's name passes straight through, so a command states each
    pairing once (its defaults are held to the target's by tests/test_cli_defaults.py).
    """
    return {name: getattr(args, name) for name in inspect.signature(target).parameters if hasattr(args, name)}


def add_model_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model")
    group.add_argument(
        "--model",
        default=None,
        help=f"a model shipped in the package (no download): '{MINI_MODEL_ID}' or '{LITE_MODEL_ID}'; a Hub id "
        f"(the published student: {PUBLISHED_MODEL_ID}, downloaded once) or a local directory "
        f"(default: {DEFAULT_MODEL_ID})",
    )
    group.add_argument(
        "--fallback",
        default=None,
        metavar="MODEL",
        help="model to use, with a notice, when --model cannot be loaded here "
        f"(e.g. '{MINI_MODEL_ID}' or '{LITE_MODEL_ID}'); without it such a model is an error",
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
    group.add_argument(
        "--tokenize-workers",
        type=int,
        default=None,
        metavar="N",
        help="processes tokenizing for a neural model (default: every core when it runs on a GPU, none on a CPU; "
        "0: in the scoring process). Not --workers, which runs whole shards in parallel",
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
        "--format",
        choices=INPUT_FORMATS,
        default=None,
        help="input format (default: from the extension and the first bytes, see docs/curation.md; txt for stdin)",
    )
    group.add_argument(
        "--column", default=None, help=f"caption column (default: {TEXT_COLUMN}; for GBC graphs, their node captions)"
    )
    group.add_argument("--output", "-o", default=None, help="file to write (default: stdout)")
    group.add_argument(
        "--output-format",
        choices=FORMATS,
        default=None,
        help="default: from --output's extension, else the input format (plain text: TSV with a header); "
        "txt writes score<TAB>caption, without the other columns",
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


def filter_plan(
    args: argparse.Namespace, fmt: str, rule: KeepRule | None = None, other: ColumnRule | None = None
) -> FilterPlan:
    """The plan of a command on input format ``fmt``: its caption column (and aligned columns) and rules."""
    column, node_columns = FORMAT_COLUMNS.get(fmt, (TEXT_COLUMN, ()))
    level = getattr(args, "level", "row")
    given = getattr(args, "node_columns", None)  # refused without --level node
    return FilterPlan(
        rule,
        args.column or column,
        level=level,
        aggregate=getattr(args, "aggregate", None),
        node_columns=given if given is not None else node_columns if level == "node" else (),
        other=other,
    )


def run_sharded(
    args: argparse.Namespace, rule: KeepRule | None = None, other: ColumnRule | None = None, **job_options: object
) -> int:
    """``icc score|filter --output-dir``: one output per input shard, resumable."""
    if args.output:
        raise UserInputError("give --output FILE for one input or --output-dir DIR for shards, not both")
    if args.input == ["-"]:
        raise UserInputError("sharded jobs read files, not stdin")
    from ..curation.engines.shards import SUMMARY_FILE, ShardJob, expand_inputs, run_shard_job
    from ..curation.engines.workers import worker_count
    from ..scoring.tokenize_workers import usable_cores

    inputs = tuple(expand_inputs(args.input))
    workers = worker_count(args.workers, len(inputs))
    if workers < args.workers:
        print(
            f"icc: notice: --workers {args.workers} lowered to {workers} ({len(inputs)} shard"
            f"{'s' * (len(inputs) != 1)}; this process may use {usable_cores()} CPU cores)",
            file=sys.stderr,
        )
    plan = filter_plan(args, detect_format(inputs[0], args.format), rule, other)
    scorer = open_scorer(args)
    job = ShardJob(
        inputs=inputs,
        output_dir=Path(args.output_dir),
        model=scorer.model_id,
        plan=plan,
        input_format=args.format,
        output_format=args.output_format,
        device=args.device,
        dtype=args.dtype,
        batch_size=args.batch_size,
        compile=args.compile,
        tokenize_workers=args.tokenize_workers,
        workers=workers,
        progress=args.progress,
        **job_options,
    )
    summary = run_shard_job(job, scorer=scorer)
    lines = [
        f"{summary['shards']} shard{'s' * (summary['shards'] != 1)}, {summary['rows']} rows scored with "
        f"{summary['model']}"
        + (f" by {summary['workers']} worker processes" if summary["workers"] > 1 else "")
        + (f", kept {summary['kept']} ({summary['rule']})" if rule is not None else ""),
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
    """Load the requested model, or the ``--fallback`` model with a one-line notice where it cannot be loaded.

    The scorer shows no progress bar of its own: jobs show one over all their rows.
    """
    if args.tokenize_workers is not None and args.tokenize_workers < 0:
        raise UserInputError(f"--tokenize-workers must be 0 or more, got {args.tokenize_workers}")
    options = {
        "device": args.device,
        "dtype": args.dtype,
        "batch_size": args.batch_size,
        "compile": args.compile,
        "progress": False,
        "tokenize_workers": args.tokenize_workers,
    }
    with fallback_notices() as notices:
        scorer = load_scorer(args.model, fallback=args.fallback, **options)
    for notice in notices:
        print(f"icc: notice: {notice}", file=sys.stderr)
    return scorer


def file_job(
    args: argparse.Namespace,
    table: CaptionTable | None = None,
    rule: KeepRule | None = None,
    other: ColumnRule | None = None,
    **options: object,
) -> FileJob:
    """The job of a command without --output-dir: ``args.input`` (a file or stdin) or ``table``, one output.

    The input path is checked here, before any model is loaded.
    """
    from ..curation.engines.single_file import FileJob

    check_single_input(args)
    path = None
    if table is not None:
        source, fmt = table, table.fmt
    elif args.input == ["-"]:
        source, fmt = sys.stdin.buffer, args.format or "txt"
    else:
        (name,) = args.input
        source = path = check_input_file(name)
        fmt = detect_format(path, args.format)
    to_file = bool(args.output) and args.output != "-"
    out_fmt = args.output_format or _output_format(args.output if to_file else None, fmt, path)
    if to_file and out_fmt in ("parquet", "tar") and compression.by_extension(args.output):
        raise UserInputError(
            f"{out_fmt} output is not compressed as a whole (Parquet compresses its columns, tar members are "
            f"copied): drop the {Path(args.output).suffix} from {args.output}"
        )
    output = Path(args.output) if to_file else sys.stdout.buffer
    plan = filter_plan(args, fmt, rule, other)
    return FileJob(source, fmt, output, out_fmt, plan=plan, progress=args.progress, **options)


def _output_format(output: str | None, input_format: str, path: Path | None) -> str:
    """From the output's extension; stdout, and a FIFO or device without one (``/dev/stdout``), as the input."""
    from ..curation.io.outputs import writes_in_place

    if output is not None:
        try:
            return infer_format(output, option="--output-format")
        except UserInputError:
            if not writes_in_place(Path(output)):
                raise
    return default_output_format(input_format, path)


def run_single_file(args: argparse.Namespace, job: FileJob) -> FileJobResult:
    """Run ``job``, loading the model once the input is checked."""
    from ..curation.engines.single_file import run_file_job as run

    return run(job, lambda: open_scorer(args))


def print_summary(result: FileJobResult, extra: list[str] | None = None) -> None:
    rate = result.rows / result.seconds if result.seconds > 0 else float("inf")
    captions = "" if result.stats.rows == result.rows else f" ({result.stats.rows} captions)"
    lines = [
        f"scored {result.rows} rows{captions} with {result.model_id} in {result.seconds:.2f}s ({rate:,.0f} rows/s)"
    ]
    lines += extra or []
    lines.append(
        f"NaN (blank or non-text captions): {result.stats.nan}"
        + (f", of which non-text: {result.non_text}" if result.non_text else "")
    )
    if result.decode_errors:
        lines.append(invalid_text_line(result.decode_errors, "lines"))
    if result.escaped_line_breaks:
        lines.append(f"captions with line breaks, written as \\n in .txt output: {result.escaped_line_breaks}")
    if result.base64_columns:
        lines.append(f"binary columns written as base64 text: {', '.join(result.base64_columns)}")
    lines.append(quantile_line(result.stats.quantiles(list(SCORE_QUANTILES))))
    for line in lines:
        print(f"icc: {line}", file=sys.stderr)


def invalid_text_line(count: int, what: str) -> str:
    return f"{what} with invalid text (non-UTF-8 bytes or lone surrogates), replaced with U+FFFD: {count}"


def quantile_line(quantiles: list[float] | None) -> str:
    if quantiles is None:
        return "no scored rows"
    names = "/".join(f"p{round(q * 100)}" for q in SCORE_QUANTILES)
    return f"score quantiles {names}: " + " / ".join(f"{q:.3f}" for q in quantiles)


def check_model_options(args: argparse.Namespace) -> None:
    """Options that would be ignored are refused: lite is pure Python on the CPU, with no batches."""
    if args.model != LITE_MODEL_ID:
        return
    given = {
        "--device": args.device not in (None, "cpu"),
        "--dtype": args.dtype is not None,
        "--compile": args.compile,
        "--batch-size": args.batch_size is not None,
    }
    unused = [option for option, used in given.items() if used]
    if unused:
        raise UserInputError(
            f"{', '.join(unused)} {'does' if len(unused) == 1 else 'do'} not apply to {LITE_MODEL_ID} "
            f"(pure Python, on the CPU, no batches): drop {'it' if len(unused) == 1 else 'them'}, or use --model mini"
        )


def require_positive(value: int | None, name: str) -> None:
    if value is not None and value <= 0:
        raise UserInputError(f"{name} must be positive, got {value}")
