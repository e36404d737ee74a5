"""``icc cards``: write the Hub cards from measured results (nothing on a card is typed by hand)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from ..hub.cards import benchmark_dataset_card, benchmark_overlap, model_card, teacher_dataset_card
from ..hub.results_schema import read_bench_results, read_provenance
from ..hub.upload import check_repo_id, parquet_inputs
from ..utils.errors import UserInputError

#: Repository names under --namespace; the card folders under --output-dir use the same names.
MODEL_NAME = "icc-distilroberta"
TEACHER_DATASET_NAME = "icc-teacher-scores"
BENCHMARK_DATASET_NAME = "icc-caption-concreteness"
METRIC_NAME = "icc"

EXAMPLES = f"""examples:
  icc bench --scorers runs/paper/student,lite,lexical,published --output-dir runs/bench
  icc cards --namespace my-org --bench-results runs/bench/results.json --scorer runs/paper/student \\
      --provenance runs/paper/student --teacher-scores runs/paper/dataset
  icc cards --namespace my-org --bench-results benchmarks/results/quality_dev.json   # benchmark card only

writes OUTPUT_DIR/{MODEL_NAME}/README.md (with --provenance; needs --bench-results),
OUTPUT_DIR/{TEACHER_DATASET_NAME}/README.md (needs --teacher-scores) and
OUTPUT_DIR/{BENCHMARK_DATASET_NAME}/README.md (always; with a results table when
--bench-results is given). Field names read from the JSON files: modeling_icc/hub/results_schema.py.
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = "Generate Hub cards from `icc bench` results, the distillation provenance and the data."
    parser.epilog = EXAMPLES
    parser.add_argument("--namespace", required=True, help="Hub user or organization the repositories live under")
    parser.add_argument("--bench-results", help="results JSON written by `icc bench`")
    parser.add_argument(
        "--provenance", help="the distilled student's folder, or its icc_provenance.json (written by the pipeline)"
    )
    parser.add_argument("--teacher-scores", help="teacher-score parquet file or folder of shards")
    parser.add_argument(
        "--scorer",
        help="the student's name in the bench results: what `icc bench --scorers` was given, or its "
        f"scorer_id (default: NAMESPACE/{MODEL_NAME})",
    )
    parser.add_argument("--license", default="mit", help="license of the student model (default: mit)")
    parser.add_argument(
        "--teacher-license", default="other", help="license field of the teacher-score dataset (default: other)"
    )
    parser.add_argument("--output-dir", default="hub_cards", help="where card folders are written (default: hub_cards)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    namespace = args.namespace.strip("/")
    repo = {
        name: check_repo_id(f"{namespace}/{name}")
        for name in (MODEL_NAME, TEACHER_DATASET_NAME, BENCHMARK_DATASET_NAME, METRIC_NAME)
    }
    bench = read_bench_results(args.bench_results) if args.bench_results else None
    provenance = read_provenance(args.provenance) if args.provenance else None
    teacher_files = parquet_inputs(args.teacher_scores) if args.teacher_scores else []
    output = Path(args.output_dir)
    written = []
    if provenance and not bench:
        raise UserInputError("the model card needs --bench-results as well as --provenance")
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
    if args.teacher_scores:
        card = teacher_dataset_card(
            repo[TEACHER_DATASET_NAME],
            teacher_files,
            provenance,
            license=args.teacher_license,
            model_repo_id=repo[MODEL_NAME],
        )
        written.append(write_card(str(card), output / TEACHER_DATASET_NAME))
    written.append(
        write_card(str(benchmark_dataset_card(repo[BENCHMARK_DATASET_NAME], bench)), output / BENCHMARK_DATASET_NAME)
    )
    for path in written:
        print(f"icc: wrote {path}", file=sys.stderr)
    return 0


def write_card(text: str, folder: Path) -> Path:
    """``folder/README.md``, written to a temporary name and renamed (never half-written)."""
    folder.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=folder, prefix=".README.", suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        stream.write(text if text.endswith("\n") else text + "\n")
    os.replace(temp, folder / "README.md")
    return folder / "README.md"
