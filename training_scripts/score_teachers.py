"""Score captions with the SBA and/or VBA teacher into resumable, sharded parquet.

Examples:
    python training_scripts/score_teachers.py --teacher sba --sba runs/sba \\
        --captions captions.parquet --id-column key --out-dir runs/scores --batch-size 64
    python training_scripts/score_teachers.py --teacher vba --captions captions.parquet \\
        --out-dir runs/scores --batch-size 8 --save-images runs/vba_images
    # tiny random teachers, offline, on the shipped captions
    python training_scripts/score_teachers.py --tiny --teacher both --out-dir runs/tiny_scores --max-samples 32

Output: OUT_DIR/{sba,vba}/shard-NNNNN.parquet + manifest.json (schema: docs/teachers.md).
Re-running the same command skips finished shards; rows are never duplicated.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from modeling_icc.distillation.config import PipelineConfig, VBASettings
from modeling_icc.distillation.teachers_setup import TINY_COMPONENTS, sba_teacher, vba_teacher, with_tiny_components
from modeling_icc.teachers import SBAForCaptionReconstruction, load_captions, score_to_shards
from modeling_icc.teachers.similarity import DEFAULT_BERTSCORE_LAYERS, DEFAULT_BERTSCORE_MODEL
from modeling_icc.teachers.vba import DEFAULT_CAPTIONER, DEFAULT_TEXT_TO_IMAGE
from modeling_icc.utils.errors import UserInputError
from modeling_icc.utils.shipped_data import data_path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--teacher", choices=("sba", "vba", "both"), default="both")
    parser.add_argument("--captions", help="Hub dataset id, .jsonl/.csv/.parquet/.txt, or LLaVA chat.json")
    parser.add_argument("--column", default="caption")
    parser.add_argument("--id-column", default=None, help="unique row id column (default: row number)")
    parser.add_argument("--split", default="train")
    parser.add_argument("--max-samples", type=int, default=None)
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--sba", help="directory of a trained SBA (train_sba.py --output-dir)")
    parser.add_argument("--t2i", default=DEFAULT_TEXT_TO_IMAGE, help="diffusers text-to-image id or path")
    parser.add_argument("--captioner", default=DEFAULT_CAPTIONER, help="BLIP-2 id or path")
    parser.add_argument("--bertscore-model", default=DEFAULT_BERTSCORE_MODEL)
    parser.add_argument("--bertscore-layers", type=int, default=DEFAULT_BERTSCORE_LAYERS)
    parser.add_argument("--steps", type=int, default=20, help="diffusion steps")
    parser.add_argument("--guidance", type=float, default=9.0)
    parser.add_argument("--size", type=int, default=768, help="image height and width")
    parser.add_argument("--save-images", type=Path, default=None, help="keep the VBA bottleneck images here")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shard-size", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default=None)
    parser.add_argument("--dtype", default=None, help="default: bf16 on GPU, fp32 on CPU")
    parser.add_argument("--tiny", action="store_true", help="tiny random teachers built offline")
    return parser.parse_args(argv)


def teacher_settings(args: argparse.Namespace) -> PipelineConfig:
    """The teachers' settings from the command line; with --tiny, pointed at tiny offline components."""
    vba = VBASettings(
        text_to_image=args.t2i,
        captioner=args.captioner,
        bertscore_model=args.bertscore_model,
        bertscore_num_layers=args.bertscore_layers,
        num_inference_steps=args.steps,
        guidance_scale=args.guidance,
        size=args.size,
        batch_size=args.batch_size,
    )
    config = PipelineConfig(
        output_dir=str(args.out_dir), seed=args.seed, device=args.device, dtype=args.dtype, tiny=args.tiny, vba=vba
    )
    return with_tiny_components(config) if args.tiny else config


def sba_model_dir(args: argparse.Namespace, config: PipelineConfig) -> Path:
    if not args.tiny:
        if not args.sba:
            raise UserInputError("--sba DIR (a trained SBA) is required to score with the SBA teacher")
        return Path(args.sba)
    directory = Path(config.output_dir) / TINY_COMPONENTS / "sba_untrained"
    if not (directory / "model.safetensors").is_file():
        SBAForCaptionReconstruction.from_components(config.sba.text_model, config.sba.lm).save_pretrained(directory)
    return directory


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.tiny:
        from modeling_icc.testing.teachers import use_one_cpu_thread

        use_one_cpu_thread()
    source = args.captions or (data_path("caption_concreteness_dev.csv") if args.tiny else None)
    if source is None:
        raise UserInputError("--captions is required (or --tiny to use the shipped captions)")
    id_column = args.id_column or ("sample_id" if args.tiny and not args.captions else None)
    captions = load_captions(source, args.column, id_column, args.split, args.max_samples)
    config = teacher_settings(args)
    names = ("sba", "vba") if args.teacher == "both" else (args.teacher,)
    for name in names:
        if name == "sba":
            teacher = sba_teacher(config.sba, sba_model_dir(args, config), config.device, config.dtype)
        else:
            teacher = vba_teacher(config.vba, config.device, config.dtype, args.save_images)
        out = score_to_shards(
            teacher,
            captions,
            args.out_dir / name,
            seed=args.seed,
            shard_size=args.shard_size,
            batch_size=args.batch_size,
        )
        print(f"{name}: {len(captions)} captions scored into {out}")


if __name__ == "__main__":
    try:
        main()
    except UserInputError as error:
        sys.exit(f"score_teachers: error: {error}")
