"""Options and steps shared by the ``icc`` subcommands.

Imports stay light (no torch, transformers or Arrow) so that commands on the embedded
model start at once; sharded jobs and neural models import what they need when used.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..curation.columns import SCORE_QUANTILES
from ..curation.engines.output_dir import SUMMARY_FILE
from ..curation.filter_options import CLIP_COLUMN, FilterOptions
from ..curation.job_spec import INPUT_FORMAT_NAMES, OUTPUT_FORMAT_NAMES, JobSpec
from ..curation.selection import KeepRule
from ..scoring.base import ConcretenessScorer
from ..scoring.load import DEFAULT_MODEL_ID, LITE_MODEL_ID, MINI_MODEL_ID, PUBLISHED_MODEL_ID
from ..scoring.options import ScoringOptions
from ..utils.errors import UserInputError
from ..utils.locations import location

if TYPE_CHECKING:
    from ..curation.engines.unit_result import UnitResult


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
        help="file to read (a path or a URL: s3://, gs://, hf://), or '-' for stdin; several files or quoted globs "
        "('shards/*.tar') with --output-dir",
    )
    group.add_argument(
        "--format",
        dest="input_format",
        choices=INPUT_FORMAT_NAMES,
        default=None,
        help="input format (default: from the extension and the first bytes, see docs/curation.md; txt for stdin)",
    )
    group.add_argument(
        "--column", default=None, help="caption column (default: caption; for GBC graphs, their node captions)"
    )
    group.add_argument("--output", "-o", default=None, help="file to write, a path or a URL (default: stdout)")
    group.add_argument(
        "--output-format",
        choices=OUTPUT_FORMAT_NAMES,
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
    group.add_argument(
        "--output-dir",
        default=None,
        metavar="DIR",
        help="write one output per input shard here (a folder or a URL prefix: s3://bucket/kept/)",
    )
    group.add_argument("--workers", type=int, default=1, help="processes scoring shards in parallel (default: 1)")
    group.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bars over shards and rows (default: when stderr is a terminal)",
    )


def notice(line: str) -> None:
    """A job's notice (a model fallback, fewer workers than asked) as one line on stderr."""
    print(f"icc: notice: {line}", file=sys.stderr)


def job_spec(args: argparse.Namespace) -> JobSpec:
    """``icc score|filter``'s flags as one :class:`JobSpec` (checked by the job that runs it).

    Each flag's ``dest`` is the name of the spec's field it sets; only the other column's rule, three
    flags for one option, is assembled here.
    """
    given = tuple(getattr(args, name, None) for name in ("and_threshold", "and_top_fraction", "and_top_k"))
    clip = KeepRule(*given) if any(value is not None for value in given) else None
    and_column = getattr(args, "and_column", None)
    if clip is None and and_column is not None:
        raise UserInputError(
            f"--and-column {and_column} needs a rule: --and-threshold, --and-top-fraction or --and-top-k"
        )
    keep = FilterOptions(**keywords_for(FilterOptions, args), clip=clip, clip_column=and_column or CLIP_COLUMN)
    texts = tuple(getattr(args, "texts", ()))
    inputs = tuple(args.input or ())
    if not inputs and not texts and not args.output_dir and not sys.stdin.isatty():
        inputs = ("-",)  # captions piped in
    return JobSpec(
        **{
            **keywords_for(JobSpec, args),
            "inputs": inputs,
            "texts": texts,
            "keep": keep,
            "scoring": scoring_options(args),
        }
    )


def scoring_options(args: argparse.Namespace) -> ScoringOptions:
    """The model flags (:func:`add_model_options`) as the job's :class:`ScoringOptions`."""
    return ScoringOptions(**keywords_for(ScoringOptions, args))


def open_scorer(args: argparse.Namespace) -> ConcretenessScorer:
    """Load the flags' model, or the ``--fallback`` model with a one-line notice where it cannot be loaded."""
    options = scoring_options(args)
    options.check()
    return options.load(notice)


def print_shard_summary(summary: dict[str, Any], spec: JobSpec) -> None:
    lines = [
        f"{summary['shards']} shard{'s' * (summary['shards'] != 1)}, {summary['rows']} rows scored with "
        f"{summary['model']}"
        + (f" by {summary['workers']} worker processes" if summary["workers"] > 1 else "")
        + (f", kept {summary['kept']} ({summary['rule']})" if spec.filters else ""),
        nan_line(summary["nan"], summary.get("not_read", 0)),
        languages_line(summary.get("languages", {})),
    ]
    if "apart" in summary:
        lines.append(f"written apart (in languages the model does not read): {summary['apart']} rows")
    before = summary.get("shards_done_before", 0)
    if before:
        now = summary.get("shards_this_run", 0)
        left = f", {now} this run" if now else ", nothing left to do"
        lines.append(
            f"resumed: {before} of {summary['shards']} shard{'s' * (summary['shards'] != 1)} done before{left}"
        )
    if summary["redone_missing_outputs"]:
        lines.append(
            f"redone: {summary['redone_missing_outputs']} finished shard(s) whose output was missing or changed"
        )
    if "datacomp_subset" in summary:
        subset = summary["datacomp_subset"]
        lines.append(f"DataComp subset: {subset['uids']} uids in {subset['path']}")
    summary_file = location(spec.output_dir) / SUMMARY_FILE
    lines.append(f"outputs and per-shard stats in {spec.output_dir}; run summary in {summary_file}")
    for line in lines:
        print(f"icc: {line}", file=sys.stderr)


def print_summary(result: UnitResult, extra: list[str] | None = None) -> None:
    rate = result.rows / result.seconds if result.seconds > 0 else float("inf")
    captions = "" if result.stats.rows == result.rows else f" ({result.stats.rows} captions)"
    lines = [
        f"scored {result.rows} rows{captions} with {result.model_id} in {result.seconds:.2f}s ({rate:,.0f} rows/s)"
    ]
    lines += extra or []
    lines.append(
        nan_line(result.stats.nan, result.stats.not_read)
        + (f", of which non-text: {result.non_text}" if result.non_text else "")
    )
    lines.append(languages_line(result.stats.languages))
    if result.decode_errors:
        lines.append(invalid_text_line(result.decode_errors, "lines"))
    if result.escaped_line_breaks:
        lines.append(f"captions with line breaks, written as \\n in .txt output: {result.escaped_line_breaks}")
    if result.base64_columns:
        lines.append(f"binary columns written as base64 text: {', '.join(result.base64_columns)}")
    lines.append(quantile_line(result.stats.quantiles(list(SCORE_QUANTILES))))
    for line in lines:
        print(f"icc: {line}", file=sys.stderr)


def nan_line(nan: int, not_read: int) -> str:
    """The NaN count, with the captions in a language the model does not read counted apart from blank ones."""
    line = f"NaN (blank or non-text captions): {nan - not_read}"
    return line + (f"; NaN (in a language the model does not read): {not_read}" if not_read else "")


def languages_line(counts: Mapping[str, int]) -> str:
    """Captions per language code, most first (``und``: too short or unsure to name, scored)."""
    shown = ", ".join(f"{language} {count}" for language, count in sorted(counts.items(), key=lambda item: -item[1]))
    return f"languages: {shown or 'none'}"


def invalid_text_line(count: int, what: str) -> str:
    return f"{what} with invalid text (non-UTF-8 bytes or lone surrogates), replaced with U+FFFD: {count}"


def quantile_line(quantiles: list[float] | None) -> str:
    if quantiles is None:
        return "no scored rows"
    names = "/".join(f"p{round(q * 100)}" for q in SCORE_QUANTILES)
    return f"score quantiles {names}: " + " / ".join(f"{q:.3f}" for q in quantiles)


def require_positive(value: int | None, name: str) -> None:
    if value is not None and value <= 0:
        raise UserInputError(f"{name} must be positive, got {value}")
