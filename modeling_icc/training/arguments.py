"""``TrainingArguments`` with what the paper's two training runs (SBA projector, student) share,
and the command line of the training scripts: their parsing (``HfArgumentParser``) and how they end on
bad input."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from transformers import HfArgumentParser, TrainingArguments

from ..utils.errors import UserInputError

#: Options of the training scripts before they took ``TrainingArguments`` -> today's spelling.
RENAMED_OPTIONS = {
    "--lr": ["--learning_rate"],
    "--epochs": ["--num_train_epochs"],
    "--warmup-ratio": ["--warmup_steps"],
    "--per-device-batch-size": ["--per_device_train_batch_size"],
    "--no-bf16": ["--bf16", "false"],
}


@dataclass
class PaperTrainingArguments(TrainingArguments):
    """Cosine schedule, 3 % warm-up, 2 epochs (both of the paper's runs), seed 0, and bf16
    mixed precision where CUDA supports it unless ``bf16`` says otherwise."""

    lr_scheduler_type: str = "cosine"
    warmup_steps: float = 0.03
    num_train_epochs: float = 2.0
    seed: int = 0
    bf16: bool | None = field(
        default=None,
        metadata={"help": "bf16 mixed precision (default: on where CUDA supports it)", "nargs": "?", "const": True},
    )

    def __post_init__(self) -> None:
        if self.bf16 is None:
            self.bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
        super().__post_init__()


def parse_script_args(types: tuple[type, ...], argv: list[str] | None, description: str | None) -> tuple:
    """``HfArgumentParser(types).parse_args_into_dataclasses(argv)``, with the options the scripts
    had before (``--lr``, ``--epochs``, ...) translated and a FutureWarning naming the new ones."""
    args = []
    for option in sys.argv[1:] if argv is None else argv:
        if option == "--batch-size":
            raise UserInputError(
                "--batch-size is gone: the batch is --per_device_train_batch_size x --gradient_accumulation_steps "
                "(x devices); set those two"
            )
        if option in RENAMED_OPTIONS:
            warnings.warn(f"{option} is now {' '.join(RENAMED_OPTIONS[option])}", FutureWarning, stacklevel=2)
        args += RENAMED_OPTIONS.get(option, [option])
    parser = HfArgumentParser(types, description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    return parser.parse_args_into_dataclasses(args)


def run_script(main: Callable[[], None], name: str) -> None:
    """Run the training script ``name``'s ``main``: bad input (:class:`UserInputError`) ends it with one line,
    ``NAME: error: ...``, and exit status 1, as argparse ends a bad option, instead of a traceback."""
    try:
        main()
    except UserInputError as error:
        sys.exit(f"{name}: error: {error}")
