"""From teacher scores to a student: standardization, combination, the teacher-score dataset,
distillation, and the one-command pipeline. Each piece works on its own: users with their
own teacher scores can standardize -> combine -> distil without running the teachers.
Names are imported on first use."""

from ...utils.lazy_exports import lazy_getattr

_EXPORTS = {
    "ScoreCombiner": "combine",
    "PipelineConfig": "config",
    "DistillConfig": "distill",
    "distill_student": "distill",
    "distill_two_stage": "distill",
    "read_provenance": "distill",
    "evaluate_on_dev": "evaluation",
    "plot_combination": "plots",
    "plot_standardization": "plots",
    "PipelineRun": "runner",
    "run_pipeline": "runner",
    "LengthStandardizer": "standardize",
    "DATASET_SCHEMA": "teacher_dataset",
    "TEACHER_COLUMNS": "teacher_dataset",
    "dataset_files": "teacher_dataset",
    "read_dataset": "teacher_dataset",
    "write_dataset": "teacher_dataset",
}

__getattr__ = lazy_getattr(__name__, _EXPORTS)

__all__ = list(_EXPORTS)
