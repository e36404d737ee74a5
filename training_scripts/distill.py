"""Distil teacher targets into an ICC student (ICCForConcreteness) with MSE.

Examples:
    # from the pipeline's teacher-score dataset (column `target`), the paper's recipe
    python training_scripts/distill.py --dataset runs/paper/dataset --output-dir runs/paper/student
    # the two-stage variant: SBA- and VBA-students, their predictions combined, then the final student
    python training_scripts/distill.py --dataset runs/paper/dataset --two-stage \\
        --combiner runs/paper/combiner.json --output-dir runs/paper/student_two_stage
    # any table with a caption column and a target column
    python training_scripts/distill.py --scores my_scores.parquet --target-column icc --output-dir runs/mine

The student loads with AutoModel.from_pretrained(DIR) and modeling_icc.load_scorer(DIR) and
carries icc_provenance.json. A killed run restarted with the same arguments resumes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from modeling_icc.curation.io.tables import infer_format, read_table
from modeling_icc.distillation import DistillConfig, ScoreCombiner, distill_student, distill_two_stage, read_dataset
from modeling_icc.distillation.distill import DEFAULT_BACKBONE
from modeling_icc.distillation.training_recipe import add_recipe_arguments, recipe_from_args
from modeling_icc.utils.errors import UserInputError


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", type=Path, help="a teacher-score dataset directory (run_pipeline.py output)")
    source.add_argument("--scores", type=Path, help="a .jsonl/.csv/.parquet table with captions and targets")
    parser.add_argument("--caption-column", default="caption")
    parser.add_argument("--target-column", default="target")
    parser.add_argument("--output-dir", type=Path, required=True)
    parser.add_argument("--backbone", default=DEFAULT_BACKBONE, help="RoBERTa-family model id or path")
    parser.add_argument("--eval-fraction", type=float, default=0.05, help="held-out share for Pearson/Spearman")
    add_recipe_arguments(parser, DistillConfig())
    parser.add_argument("--two-stage", action="store_true", help="needs --dataset and --combiner")
    parser.add_argument("--combiner", type=Path, help="combiner.json for --two-stage")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    config = recipe_from_args(DistillConfig, args, backbone=args.backbone, eval_fraction=args.eval_fraction)
    if args.dataset:
        table = read_dataset(args.dataset)
        records = {name: table.column(name).to_pylist() for name in table.column_names}
    else:
        table = read_table(args.scores, infer_format(args.scores), column=args.caption_column)
        rows = table.records if table.records is not None else table.arrow.to_pylist()
        records = {key: [row.get(key) for row in rows] for key in (args.caption_column, args.target_column)}
    if args.two_stage:
        if not (args.dataset and args.combiner):
            raise UserInputError("--two-stage needs --dataset (with sba_score/vba_score) and --combiner")
        metrics = distill_two_stage(
            records["caption"],
            np.asarray(records["sba_score"], dtype=float),
            np.asarray(records["vba_score"], dtype=float),
            ScoreCombiner.load(args.combiner),
            args.output_dir,
            args.output_dir.parent / f"{args.output_dir.name}_stages",
            config,
            {"teacher_score_dataset": str(args.dataset)},
        )
    else:
        for column in (args.caption_column, args.target_column):
            if column not in records:
                raise UserInputError(f"no column {column!r} in the input")
        provenance = {"source": str(args.dataset or args.scores), "target_column": args.target_column}
        keep = [i for i, text in enumerate(records[args.caption_column]) if isinstance(text, str) and text.strip()]
        texts = [records[args.caption_column][i] for i in keep]
        targets = np.asarray([records[args.target_column][i] for i in keep], dtype=float)
        metrics = distill_student(texts, targets, args.output_dir, config, provenance)
    print(f"saved the student to {args.output_dir}; held-out metrics: {metrics}")


if __name__ == "__main__":
    try:
        main()
    except UserInputError as error:
        sys.exit(f"distill: error: {error}")
