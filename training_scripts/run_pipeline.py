"""Run the whole ICC pipeline: teachers -> standardization -> combination -> dataset -> student -> evaluation.

Examples:
    python training_scripts/run_pipeline.py --tiny                 # offline, CPU, a few minutes
    python training_scripts/run_pipeline.py --config training_scripts/configs/paper.yaml
    python training_scripts/run_pipeline.py --config my.yaml --output-dir runs/try2

Re-running the same command resumes: steps whose outputs exist are skipped; delete a
step's output (e.g. combiner.json) to redo it and everything after it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from transformers import HfArgumentParser

from modeling_icc.testing.pipeline import with_tiny_components
from modeling_icc.testing.teachers import use_one_cpu_thread
from modeling_icc.training.arguments import run_script
from modeling_icc.training.distillation import PipelineConfig, run_pipeline
from modeling_icc.training.distillation.report import format_summary
from modeling_icc.utils.errors import UserInputError

TINY_CONFIG = Path(__file__).resolve().parent / "configs" / "tiny.yaml"


@dataclass
class RunArguments:
    config: Path | None = field(default=None, metadata={"help": "YAML or JSON pipeline config"})
    tiny: bool = field(default=False, metadata={"help": f"tiny random models offline (config: {TINY_CONFIG.name})"})
    output_dir: str | None = field(default=None, metadata={"help": "overrides the config's output_dir"})


def parse_args(argv: list[str] | None = None) -> tuple[RunArguments]:
    parser = HfArgumentParser(RunArguments, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    return parser.parse_args_into_dataclasses(argv)


def main(argv: list[str] | None = None) -> None:
    (args,) = parse_args(argv)
    if bool(args.config) == bool(args.tiny):
        raise UserInputError("pass exactly one of --config CONFIG or --tiny")
    if args.tiny:
        use_one_cpu_thread()
    config = PipelineConfig.load(args.config or TINY_CONFIG, output_dir=args.output_dir)
    summary = run_pipeline(with_tiny_components(config) if config.tiny else config)
    print(format_summary(summary))


if __name__ == "__main__":
    run_script(main, "run_pipeline")
