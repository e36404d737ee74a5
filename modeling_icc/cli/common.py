"""Options and steps shared by the ``icc`` subcommands."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np

from ..caption_io import FORMATS, TEXT_COLUMN, CaptionTable, infer_format, read_table
from ..errors import UserInputError
from ..loading import DEFAULT_MODEL_ID, LITE_MODEL_ID, ModelNotAvailableError, load_scorer
from ..scorer import ConcretenessScorer


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


def add_input_options(parser: argparse.ArgumentParser, *, required: bool) -> None:
    group = parser.add_argument_group("input and output")
    group.add_argument("--input", "-i", required=required, help="file to read, or '-' for stdin")
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


def open_scorer(args: argparse.Namespace) -> ConcretenessScorer:
    """Load the requested model; the default falls back to lite with a one-line notice."""
    if args.model is not None:
        return load_scorer(args.model, device=args.device, dtype=args.dtype, batch_size=args.batch_size)
    try:
        return load_scorer(DEFAULT_MODEL_ID, device=args.device, dtype=args.dtype, batch_size=args.batch_size)
    except ModelNotAvailableError:
        print(
            f"icc: {DEFAULT_MODEL_ID} is not available here (no download possible); using the embedded "
            f"'{LITE_MODEL_ID}' model. Pass --model lite to silence this notice.",
            file=sys.stderr,
        )
        return load_scorer(LITE_MODEL_ID)


def read_input(args: argparse.Namespace) -> CaptionTable:
    if args.input == "-":
        return read_table(sys.stdin.buffer, args.format or "txt", column=args.column)
    return read_table(args.input, infer_format(args.input, args.format), column=args.column)


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
