"""The training recipe shared by the SBA projector and the student: effective batch through
accumulation, cosine schedule with a warm-up ratio, bf16 on CUDA, periodic checkpoints."""

from __future__ import annotations

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
