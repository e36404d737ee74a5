"""Train the SBA projector (CLIP text tower and LM frozen) with the paper's recipe.

Examples:
    # the paper: CLIP ViT-L/14 text + Llama-2-7B, batch 128, lr 2e-3, cosine, 3 % warm-up, 2 epochs
    python training_scripts/train_sba.py --captions LLaVA-CC3M-Pretrain-595K/chat.json \\
        --output-dir runs/sba --per-device-batch-size 32 --gradient-checkpointing
    # tiny random components, offline, on the shipped captions (seconds on a CPU)
    python training_scripts/train_sba.py --tiny --output-dir runs/tiny_sba --max-steps 20

A killed run restarted with the same --output-dir resumes from its newest checkpoint.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from modeling_icc.distillation.training_recipe import add_recipe_arguments, recipe_from_args
from modeling_icc.models.sba.configuration_sba import DEFAULT_LM, DEFAULT_TEXT_MODEL
from modeling_icc.teachers import SBAForCaptionReconstruction, SBATrainingConfig, load_captions, train_sba
from modeling_icc.utils.errors import UserInputError
from modeling_icc.utils.shipped_data import data_path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--captions", help="Hub dataset id, .jsonl/.csv/.parquet/.txt, or LLaVA chat.json")
    parser.add_argument("--column", default="caption", help="caption column (tables and Hub datasets)")
    parser.add_argument("--split", default="train", help="Hub dataset split")
    parser.add_argument("--max-samples", type=int, default=None, help="train on the first N captions only")
    parser.add_argument("--output-dir", type=Path, required=True)
    parser.add_argument("--text-model", default=DEFAULT_TEXT_MODEL, help="CLIP model id or path (text tower used)")
    parser.add_argument("--lm", default=DEFAULT_LM, help="causal LM id or path")
    parser.add_argument("--bottleneck", choices=("pooled", "tokens"), default="pooled")
    parser.add_argument("--num-soft-tokens", type=int, default=1)
    parser.add_argument("--lora-r", type=int, default=0, help="LoRA rank on the LM (0 = off, as in the paper)")
    parser.add_argument("--gradient-checkpointing", action="store_true")
    add_recipe_arguments(parser, SBATrainingConfig())
    parser.add_argument("--no-resume", action="store_true", help="ignore checkpoints in --output-dir")
    parser.add_argument("--tiny", action="store_true", help="tiny random CLIP text + Llama built offline")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.tiny:
        from modeling_icc.testing.teachers import use_one_cpu_thread

        use_one_cpu_thread()
    text_model, lm = args.text_model, args.lm
    if args.tiny:
        from modeling_icc.testing.teachers import save_tiny_sba_components

        paths = save_tiny_sba_components(args.output_dir / "components")
        text_model, lm = paths["text_model"], paths["lm"]
    source = args.captions or (data_path("caption_concreteness_dev.csv") if args.tiny else None)
    if source is None:
        raise UserInputError("--captions is required (or --tiny to use the shipped captions)")
    captions = load_captions(source, column=args.column, split=args.split, max_samples=args.max_samples)
    model = SBAForCaptionReconstruction.from_components(
        text_model, lm, bottleneck=args.bottleneck, num_soft_tokens=args.num_soft_tokens, lora_r=args.lora_r
    )
    config = recipe_from_args(SBATrainingConfig, args, gradient_checkpointing=args.gradient_checkpointing)
    metrics = train_sba(model, captions.captions, args.output_dir, config, resume=not args.no_resume)
    print(f"trained on {len(captions)} captions; train_loss={metrics.get('train_loss', float('nan')):.4f}")
    print(f"saved the projector to {args.output_dir} (load with SBAForCaptionReconstruction.from_pretrained)")


if __name__ == "__main__":
    try:
        main()
    except UserInputError as error:
        sys.exit(f"train_sba: error: {error}")
