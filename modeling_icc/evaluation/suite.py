"""The whole ``icc bench`` run: load the benchmark sets, score, correlate, write the outputs."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ..curation.io.table import TEXT_COLUMN
from ..scoring.devices import resolve_device
from .bootstrap import DEFAULT_BOOTSTRAP, Bootstrap
from .data import (
    DEFAULT_BENCHMARKS,
    DEV_LABEL_COLUMN,
    NOISY_CAPTIONS,
    PUBLISHED_COLUMN,
    WEB_JUNK,
    BenchmarkSet,
    NormSplit,
    caption_benchmark,
    frozen_caption_benchmark,
    noisy_caption_benchmarks,
    noun_benchmark,
    phrase_benchmark,
    word_benchmark,
)
from .harness import BenchResult, BenchScorer, Skipped, run_benchmarks
from .report import markdown_tables, write_outputs
from .web_junk import web_junk_benchmark


def load_benchmarks(
    names: Sequence[str] = DEFAULT_BENCHMARKS,
    *,
    data: str | os.PathLike | None = None,
    fmt: str | None = None,
    caption_column: str = TEXT_COLUMN,
    label_column: str = DEV_LABEL_COLUMN,
    published_column: str | None = PUBLISHED_COLUMN,
    norm_split: NormSplit = "test",
) -> list[BenchmarkSet]:
    """The named benchmark sets, in the order given (``noisy_captions`` is the clean set and one per noise type)."""
    loaders = {
        "captions": lambda: caption_benchmark(
            data, caption_column=caption_column, label_column=label_column, published_column=published_column, fmt=fmt
        ),
        "captions_frozen": frozen_caption_benchmark,
        "words": lambda: word_benchmark(norm_split),
        "nouns": lambda: noun_benchmark(norm_split),
        "phrases": lambda: phrase_benchmark(norm_split),
        NOISY_CAPTIONS: noisy_caption_benchmarks,
        WEB_JUNK: web_junk_benchmark,
    }
    unknown = [name for name in names if name not in loaders]
    if unknown:
        raise ValueError(f"unknown benchmark(s) {unknown}; choose from {list(loaders)}")
    sets = []
    for name in names:
        loaded = loaders[name]()
        sets.extend(loaded if isinstance(loaded, list) else [loaded])
    return sets


@dataclass(frozen=True)
class SuiteOutcome:
    results: list[BenchResult]
    skipped: list[Skipped]
    markdown: str
    paths: list[Path]


def run_suite(
    benchmarks: Sequence[BenchmarkSet],
    scorers: Sequence[BenchScorer],
    *,
    n_bootstrap: int = DEFAULT_BOOTSTRAP.n_bootstrap,
    seed: int = DEFAULT_BOOTSTRAP.seed,
    confidence: float = DEFAULT_BOOTSTRAP.confidence,
    device: str = "auto",
    output_dir: str | os.PathLike = "bench_results",
    name: str = "results",
    command: str | None = None,
    progress: bool = True,
) -> SuiteOutcome:
    """Score every benchmark with every scorer and write ``NAME.json``, ``NAME.md`` and the PNGs."""
    bootstrap = Bootstrap(n_bootstrap, seed, confidence)
    results, skipped = run_benchmarks(benchmarks, scorers, bootstrap=bootstrap, progress=progress)
    settings = {
        **asdict(bootstrap),
        "interval": "percentile bootstrap over caption/word resamples (paired across metrics)",
        "scores": "raw scorer outputs (score(..., raw=True)); NaN scores drop their pair",
        "command": command,
    }
    resolved = str(resolve_device(None if device == "auto" else device))
    paths = write_outputs(
        results, skipped, benchmarks, settings=settings, device=resolved, output_dir=output_dir, name=name
    )
    return SuiteOutcome(results, skipped, markdown_tables(results, benchmarks, confidence), paths)
