"""Distil teacher targets into an ICC student (ICCForConcreteness) with MSE.

Options: the data, the student, and every transformers.TrainingArguments option (defaults: the
paper's batch 128, lr 1e-4, cosine, 3 % warm-up, 2 epochs). Examples:
    # from the pipeline's teacher-score dataset (column `target`), the paper's recipe
    python training_scripts/distill.py --dataset runs/paper/dataset --output_dir runs/paper/student
    # the two-stage variant: SBA- and VBA-students, their predictions combined, then the final student
    python training_scripts/distill.py --dataset runs/paper/dataset --two_stage \\
        --combiner runs/paper/combiner.json --output_dir runs/paper/student_two_stage
    # any table with a caption column and a target column
    python training_scripts/distill.py --scores my_scores.parquet --target_column icc --output_dir runs/mine

The student loads with AutoModel.from_pretrained(DIR) and modeling_icc.load_scorer(DIR) and
carries icc_provenance.json. A killed run restarted with the same arguments resumes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from modeling_icc.curation.io.tables import infer_format, read_table
from modeling_icc.training.arguments import parse_script_args, run_script
from modeling_icc.training.distillation import (
    DistillConfig,
    ScoreCombiner,
    distill_student,
    distill_two_stage,
    read_dataset,
)
from modeling_icc.training.distillation.distill import StudentTrainingArguments
from modeling_icc.utils.errors import UserInputError


@dataclass
class DataArguments:
    dataset: Path | None = field(default=None, metadata={"help": "a teacher-score dataset directory (run_pipeline.py)"})
    scores: Path | None = field(default=None, metadata={"help": "a .jsonl/.csv/.parquet table with captions, targets"})
    caption_column: str = "caption"
    target_column: str = "target"
    two_stage: bool = field(default=False, metadata={"help": "needs --dataset and --combiner"})
    combiner: Path | None = field(default=None, metadata={"help": "combiner.json for --two_stage"})


def parse_args(argv: list[str] | None = None) -> tuple:
    return parse_script_args((DataArguments, DistillConfig, StudentTrainingArguments), argv, __doc__)


def main(argv: list[str] | None = None) -> None:
    args, config, training = parse_args(argv)
    if (args.dataset is None) == (args.scores is None):
        raise UserInputError("pass exactly one of --dataset DIR or --scores TABLE")
    output_dir = Path(training.output_dir)
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
            output_dir,
            output_dir.parent / f"{output_dir.name}_stages",
            config,
            training,
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
        metrics = distill_student(texts, targets, output_dir, config, training, provenance)
    print(f"saved the student to {output_dir}; held-out metrics: {metrics}")


if __name__ == "__main__":
    run_script(main, "distill")
