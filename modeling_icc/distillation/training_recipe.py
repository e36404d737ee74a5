"""The training recipe shared by the SBA projector and the student: effective batch through
accumulation, cosine schedule with a warm-up ratio, bf16 on CUDA, periodic checkpoints."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

import torch


@dataclass
class TrainingRecipe:
    batch_size: int = 128
    per_device_batch_size: int = 16
    learning_rate: float = 1e-4
    warmup_ratio: float = 0.03
    epochs: float = 2.0
    max_steps: int = -1
    bf16: bool | None = None  # None: on when CUDA supports it
    save_steps: int = 500
    logging_steps: int = 10
    seed: int = 0

    def training_arguments(self, output_dir: str | os.PathLike, **extra):
        """``TrainingArguments`` for this recipe; ``extra`` adds or overrides fields."""
        from transformers import TrainingArguments

        if self.batch_size % self.per_device_batch_size:
            raise ValueError("batch_size must be a multiple of per_device_batch_size")
        cuda = torch.cuda.is_available()
        values = dict(
            output_dir=str(output_dir),
            per_device_train_batch_size=self.per_device_batch_size,
            gradient_accumulation_steps=self.batch_size // self.per_device_batch_size,
            learning_rate=self.learning_rate,
            lr_scheduler_type="cosine",
            warmup_steps=self.warmup_ratio,  # a float below 1 is a ratio of the total steps
            num_train_epochs=self.epochs,
            max_steps=self.max_steps,
            bf16=(cuda and torch.cuda.is_bf16_supported()) if self.bf16 is None else self.bf16,
            save_strategy="steps",
            save_steps=self.save_steps,
            logging_steps=self.logging_steps,
            report_to="none",
            seed=self.seed,
            use_cpu=not cuda,
        )
        return TrainingArguments(**{**values, **extra})


DEFAULT = "default: %(default)s"


def add_recipe_arguments(parser: argparse.ArgumentParser, defaults: TrainingRecipe) -> None:
    """The recipe's command-line options, with ``defaults`` (e.g. the paper's) as defaults."""
    group = parser.add_argument_group("training recipe")
    group.add_argument(
        "--batch-size",
        type=int,
        default=defaults.batch_size,
        help="effective batch, via accumulation (default: %(default)s)",
    )
    group.add_argument("--per-device-batch-size", type=int, default=defaults.per_device_batch_size, help=DEFAULT)
    group.add_argument("--lr", type=float, default=defaults.learning_rate, help=DEFAULT)
    group.add_argument("--warmup-ratio", type=float, default=defaults.warmup_ratio, help=DEFAULT)
    group.add_argument("--epochs", type=float, default=defaults.epochs, help=DEFAULT)
    group.add_argument(
        "--max-steps", type=int, default=defaults.max_steps, help="overrides --epochs when > 0 (default: %(default)s)"
    )
    group.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=None, help="default: on with CUDA")
    group.add_argument(
        "--save-steps", type=int, default=defaults.save_steps, help="checkpoint interval (default: %(default)s)"
    )
    group.add_argument("--seed", type=int, default=defaults.seed, help=DEFAULT)


def recipe_from_args(cls: type[TrainingRecipe], args: argparse.Namespace, **extra) -> TrainingRecipe:
    """``cls`` (a :class:`TrainingRecipe` subclass) from the options of :func:`add_recipe_arguments`."""
    return cls(
        batch_size=args.batch_size,
        per_device_batch_size=args.per_device_batch_size,
        learning_rate=args.lr,
        warmup_ratio=args.warmup_ratio,
        epochs=args.epochs,
        max_steps=args.max_steps,
        bf16=args.bf16,
        save_steps=args.save_steps,
        seed=args.seed,
        **extra,
    )
