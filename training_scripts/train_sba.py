"""Train the SBA projector (CLIP text tower and LM frozen) with the paper's recipe.

Options: the caption source, the SBA's components, and every transformers.TrainingArguments
option (defaults: the paper's batch 128 = 16 x 8 accumulation, lr 2e-3, cosine, 3 % warm-up,
2 epochs). Examples:
    # the paper: CLIP ViT-L/14 text + Llama-2-7B
    python training_scripts/train_sba.py --captions LLaVA-CC3M-Pretrain-595K/chat.json --output_dir runs/sba \\
        --per_device_train_batch_size 32 --gradient_accumulation_steps 4 --activation_checkpointing
    # tiny random components, offline, on the shipped captions (seconds on a CPU)
    python training_scripts/train_sba.py --tiny --output_dir runs/tiny_sba --max_steps 20

A killed run restarted with the same --output_dir resumes from its newest checkpoint. The
result loads with SBAPipeline.from_pretrained(DIR) or SBAForCaptionReconstruction.from_pretrained(DIR).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from modeling_icc.teachers import SBAComponents, SBAPipeline, load_captions
from modeling_icc.training.arguments import parse_script_args, run_script
from modeling_icc.training.distillation.config import CaptionSource
from modeling_icc.training.sba_projector import ProjectorTrainingArguments, train_sba
from modeling_icc.utils.errors import UserInputError
from modeling_icc.utils.shipped_data import data_path


@dataclass
class RunArguments:
    tiny: bool = field(default=False, metadata={"help": "tiny random CLIP text + Llama built offline"})
    resume: bool = field(default=True, metadata={"help": "resume from the newest checkpoint in --output_dir"})


def parse_args(argv: list[str] | None = None) -> tuple:
    return parse_script_args((CaptionSource, SBAComponents, ProjectorTrainingArguments, RunArguments), argv, __doc__)


def main(argv: list[str] | None = None) -> None:
    source, components, training, run = parse_args(argv)
    if run.tiny:
        from modeling_icc.testing.teachers import save_tiny_sba_components, use_one_cpu_thread

        use_one_cpu_thread()
        paths = save_tiny_sba_components(Path(training.output_dir) / "components")
        components = dataclasses.replace(components, text_model=str(paths["text_model"]), lm=str(paths["lm"]))
        source.path = source.path or str(data_path("caption_concreteness_dev.csv"))
    if source.path is None:
        raise UserInputError("--captions is required (or --tiny to use the shipped captions)")
    captions = load_captions(source.path, source.column, source.id_column, source.split, source.max_samples)
    metrics = train_sba(SBAPipeline.from_components(components), captions.captions, training, resume=run.resume)
    print(f"trained on {len(captions)} captions; train_loss={metrics.get('train_loss', float('nan')):.4f}")
    print(f"saved the projector to {training.output_dir} (load with SBAPipeline.from_pretrained)")


if __name__ == "__main__":
    run_script(main, "train_sba")
