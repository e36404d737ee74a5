"""Training the SBA projector with the Hugging Face ``Trainer`` (the paper's recipe by default)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import PreTrainedTokenizerBase, Trainer, TrainingArguments
from transformers.trainer_utils import get_last_checkpoint

from ..models.sba.modeling_sba import IGNORE_INDEX
from ..teachers.sba import SBAPipeline
from .arguments import PaperTrainingArguments

#: Caption tokens kept per training example (after the newline terminator is appended).
MAX_CAPTION_TOKENS = 96


class SBACollator:
    """Captions -> CLIP inputs + LM inputs of ``caption + "\\n"`` with loss labels (padding = -100)."""

    def __init__(
        self,
        text_tokenizer: PreTrainedTokenizerBase,
        lm_tokenizer: PreTrainedTokenizerBase,
        max_caption_tokens: int = MAX_CAPTION_TOKENS,
        max_text_tokens: int = 77,
    ) -> None:
        self.text_tokenizer = text_tokenizer
        self.lm_tokenizer = lm_tokenizer
        self.max_caption_tokens = max_caption_tokens
        self.max_text_tokens = max_text_tokens

    def __call__(self, captions: list[str]) -> dict[str, torch.Tensor]:
        text = self.text_tokenizer(
            captions, padding=True, truncation=True, max_length=self.max_text_tokens, return_tensors="pt"
        )
        newline = self.lm_tokenizer("\n", add_special_tokens=False)["input_ids"]
        body = self.lm_tokenizer(list(captions), add_special_tokens=False)["input_ids"]
        rows = [ids[: self.max_caption_tokens - len(newline)] + newline for ids in body]
        width = max(map(len, rows))
        pad_id = self.lm_tokenizer.pad_token_id if self.lm_tokenizer.pad_token_id is not None else 0
        input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
        attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
        for row, ids in enumerate(rows):
            input_ids[row, : len(ids)] = torch.tensor(ids)
            attention_mask[row, : len(ids)] = 1
        labels = input_ids.masked_fill(attention_mask == 0, IGNORE_INDEX)
        return {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "labels": labels,
            "text_input_ids": text["input_ids"],
            "text_attention_mask": text["attention_mask"],
        }


class _CaptionList(torch.utils.data.Dataset):
    def __init__(self, captions: list[str]) -> None:
        self.captions = captions

    def __len__(self) -> int:
        return len(self.captions)

    def __getitem__(self, index: int) -> str:
        return self.captions[index]


@dataclass
class ProjectorTrainingArguments(PaperTrainingArguments):
    """The paper's projector recipe: batch 128 (16 per device x 8 accumulation steps), lr 2e-3,
    cosine, 3 % warm-up, 2 epochs; checkpoints every 500 steps, the last two kept."""

    per_device_train_batch_size: int = 16
    gradient_accumulation_steps: int = 8
    learning_rate: float = 2e-3
    logging_steps: float = 10
    save_total_limit: int | None = 2
    remove_unused_columns: bool = False  # the collator reads the raw captions


def train_sba(
    pipeline: SBAPipeline, captions: list[str], args: TrainingArguments | None = None, resume: bool = True
) -> dict[str, float]:
    """Train the projector (and LoRA, if enabled) of ``pipeline.model`` on ``captions``; save it
    (projector, config, generation config) to ``args.output_dir``.

    Resumes from the newest ``checkpoint-*`` there when ``resume`` is true. Returns the
    Trainer's final metrics (``train_loss`` etc.).
    """
    args = args or ProjectorTrainingArguments()
    output_dir = Path(args.output_dir)
    trainer = Trainer(
        model=pipeline.model,
        args=args,
        train_dataset=_CaptionList(list(captions)),
        data_collator=SBACollator(pipeline.text_tokenizer, pipeline.lm_tokenizer),
    )
    checkpoint = get_last_checkpoint(str(output_dir)) if resume and output_dir.is_dir() else None
    result = trainer.train(resume_from_checkpoint=checkpoint)
    trainer.save_model(str(output_dir))
    return dict(result.metrics)
