"""From teacher scores to a student: standardization, combination, the teacher-score dataset,
distillation, and the one-command pipeline. Each piece works on its own: users with their
own teacher scores can standardize -> combine -> distil without running the teachers."""

from .combine import ScoreCombiner
from .config import PipelineConfig
from .distill import DistillConfig, distill_student, distill_two_stage, read_provenance
from .evaluation import evaluate_on_dev
from .plots import plot_combination, plot_standardization
from .runner import PipelineRun, run_pipeline
from .standardize import LengthStandardizer
from .teacher_dataset import DATASET_SCHEMA, TEACHER_COLUMNS, dataset_files, read_dataset, write_dataset

__all__ = [
    "DATASET_SCHEMA",
    "TEACHER_COLUMNS",
    "DistillConfig",
    "LengthStandardizer",
    "PipelineConfig",
    "PipelineRun",
    "ScoreCombiner",
    "dataset_files",
    "distill_student",
    "distill_two_stage",
    "evaluate_on_dev",
    "plot_combination",
    "plot_standardization",
    "read_dataset",
    "read_provenance",
    "run_pipeline",
    "write_dataset",
]
