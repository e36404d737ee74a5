"""``icc cards``: Hub cards and push-ready folders from measured results (nothing on a card is typed by hand)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..hub.cards import benchmark_overlap, model_card
from ..hub.folders import (
    BENCHMARK_DATASET_NAME,
    HUB_CARDS_DIR,
    METRIC_NAME,
    MODEL_NAME,
    TEACHER_DATASET_NAME,
    write_all,
    write_benchmark_folder,
    write_card,
    write_zero_download_folder,
    zero_download_name,
)
from ..hub.results_schema import SPEED_BENCHMARKS_DIR, read_bench_results, read_provenance
from ..hub.upload import check_repo_id, parquet_inputs
from ..training.distillation.dataset_card import teacher_dataset_card
from ..utils.errors import UserInputError

#: What ``--all`` reads by default: the committed quality results (``icc bench``) and speed results.
BENCH_RESULTS = Path("benchmarks") / "quality" / "quality_dev.json"
SPEED_RESULTS_DIR = Path(SPEED_BENCHMARKS_DIR) / "results"

DESCRIPTION = "Generate Hub cards and push-ready folders from `icc bench` results, speed results and data."
EXAMPLES = f"""examples:
  icc cards --all --namespace my-org          # regenerate hub_cards/ from benchmarks/ (run from the repo root)
  icc cards --namespace my-org --zero-download lite
  icc bench --scorers runs/paper/student,lite,lexical,published --output-dir runs/bench
  icc cards --namespace my-org --bench-results runs/bench/results.json --scorer runs/paper/student \\
      --provenance runs/paper/student --teacher-scores runs/paper/dataset

--all writes OUTPUT_DIR/{MODEL_NAME}/ (the published student's card, config and code, and how to
add its weights), OUTPUT_DIR/icc-NAME/README.md for each zero-download model with results, and
OUTPUT_DIR/{BENCHMARK_DATASET_NAME}/ (card and data). Otherwise: OUTPUT_DIR/{MODEL_NAME}/README.md
for a student you trained (--provenance; needs --bench-results), OUTPUT_DIR/{TEACHER_DATASET_NAME}/README.md
(--teacher-scores), OUTPUT_DIR/icc-NAME/README.md (--zero-download NAME) and, always,
OUTPUT_DIR/{BENCHMARK_DATASET_NAME}/. Files are rewritten only when their content changes.
Field names read from the JSON files: modeling_icc/hub/results_schema.py.
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--namespace", required=True, help="Hub user or organization the repositories live under")
    parser.add_argument(
        "--all",
        action="store_true",
        help="every folder the repository's own files and results build (the committed hub_cards/)",
    )
    parser.add_argument(
        "--bench-results",
        help=f"results JSON written by `icc bench` (default with --all or --zero-download: {BENCH_RESULTS})",
    )
    parser.add_argument(
        "--results-dir",
        default=str(SPEED_RESULTS_DIR),
        help=f"results of the speed benchmarks (default: {SPEED_RESULTS_DIR})",
    )
    parser.add_argument(
        "--zero-download",
        action="append",
        default=[],
        metavar="NAME",
        help="card of a model shipped in the package (e.g. lite), from its bench and speed results; repeatable",
    )
    parser.add_argument(
        "--provenance", help="the distilled student's folder, or its icc_provenance.json (written by the pipeline)"
    )
    parser.add_argument(
        "--teacher-scores", help="teacher-score parquet file or folder of shards (a pipeline run's OUTPUT_DIR/dataset)"
    )
    parser.add_argument(
        "--scorer",
        help="the student's name in the bench results: what `icc bench --scorers` was given, or its "
        f"scorer_id (default: NAMESPACE/{MODEL_NAME})",
    )
    parser.add_argument("--license", default="mit", help="license of the student model (default: mit)")
    parser.add_argument(
        "--teacher-license", default="other", help="license field of the teacher-score dataset (default: other)"
    )
    parser.add_argument(
        "--output-dir", default=str(HUB_CARDS_DIR), help=f"where folders are written (default: {HUB_CARDS_DIR})"
    )


def run(args: argparse.Namespace) -> int:
    namespace = args.namespace.strip("/")
    repo = {
        name: check_repo_id(f"{namespace}/{name}")
        for name in (MODEL_NAME, TEACHER_DATASET_NAME, BENCHMARK_DATASET_NAME, METRIC_NAME)
    }
    if args.all and args.provenance:
        raise UserInputError(
            f"--all writes {MODEL_NAME}/ for the published student; --provenance for a student you trained: pick one"
        )
    bench_path = args.bench_results or (BENCH_RESULTS if args.all or args.zero_download else None)
    bench = read_bench_results(bench_path) if bench_path else None
    provenance = read_provenance(args.provenance) if args.provenance else None
    teacher_files = parquet_inputs(args.teacher_scores) if args.teacher_scores else []
    output, results_dir = Path(args.output_dir), Path(args.results_dir)
    if provenance and not bench:
        raise UserInputError("the model card needs --bench-results as well as --provenance")
    written = write_all(namespace, output, bench, results_dir) if args.all else []
    for name in args.zero_download:
        written += write_zero_download_folder(output / zero_download_name(name), name, namespace, bench, results_dir)
    if provenance:
        card = model_card(
            repo[MODEL_NAME],
            bench,
            provenance,
            scorer=args.scorer,
            license=args.license,
            metric_repo_id=repo[METRIC_NAME],
            benchmark_dataset=repo[BENCHMARK_DATASET_NAME],
            teacher_dataset=repo[TEACHER_DATASET_NAME] if provenance.teachers else None,
            benchmark_overlap=benchmark_overlap(teacher_files) if teacher_files else 0,
        )
        written.append(write_card(str(card), output / MODEL_NAME))
        if not card.data.eval_results:
            print(
                "icc: warning: the student has no held-out results, so model-index is empty and "
                "`icc push --kind model` will refuse this card",
                file=sys.stderr,
            )
    if teacher_files:
        run_dir = pipeline_run_of(Path(args.teacher_scores))
        card = teacher_dataset_card(
            teacher_files,
            run_dir=run_dir,
            config=_run_config(run_dir),
            repo_id=repo[TEACHER_DATASET_NAME],
            model_repo_id=repo[MODEL_NAME],
            license=args.teacher_license,
        )
        written.append(write_card(str(card), output / TEACHER_DATASET_NAME))
    if not args.all:
        written += write_benchmark_folder(output / BENCHMARK_DATASET_NAME, repo[BENCHMARK_DATASET_NAME], bench)
    for path in written:
        print(f"icc: wrote {path}", file=sys.stderr)
    return 0


def pipeline_run_of(teacher_scores: Path) -> Path | None:
    """The pipeline output folder a teacher-score dataset folder sits in (``RUN/dataset``), if it is one."""
    parent = teacher_scores.resolve().parent
    return parent if teacher_scores.is_dir() and (parent / "combiner.json").is_file() else None


def _run_config(run_dir: Path | None) -> dict | None:
    summary = run_dir / "summary.json" if run_dir else None
    return json.loads(summary.read_text(encoding="utf-8")).get("config") if summary and summary.is_file() else None
