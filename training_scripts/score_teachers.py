"""Score captions with the SBA and/or VBA teacher into resumable, sharded parquet.

Examples:
    python training_scripts/score_teachers.py --teacher sba --sba runs/sba \\
        --captions captions.parquet --id-column key --out-dir runs/scores --batch-size 64
    python training_scripts/score_teachers.py --teacher vba --captions captions.parquet \\
        --out-dir runs/scores --batch-size 8 --save-images runs/vba_images --num_inference_steps 20
    # tiny random teachers, offline, on the shipped captions
    python training_scripts/score_teachers.py --tiny --teacher both --out-dir runs/tiny_scores --max-samples 32

Output: OUT_DIR/{sba,vba}/shard-NNNNN.parquet + _run.json (schema: docs/teachers.md).
Re-running the same command skips finished shards; rows are never duplicated.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from transformers import HfArgumentParser

from modeling_icc.models.vba.configuration_vba import VBAConfig
from modeling_icc.teachers import SBAPipeline, VBAPipeline, load_captions, score_to_shards
from modeling_icc.testing.pipeline import with_tiny_components
from modeling_icc.training.arguments import run_script
from modeling_icc.training.distillation.config import TINY_COMPONENTS, CaptionSource, PipelineConfig
from modeling_icc.utils.errors import UserInputError
from modeling_icc.utils.shipped_data import data_path


@dataclass
class ScoreArguments:
    out_dir: Path = field(metadata={"help": "OUT_DIR/{sba,vba}/shard-*.parquet"})
    teacher: Literal["sba", "vba", "both"] = "both"
    sba: str | None = field(default=None, metadata={"help": "a trained SBA: directory (train_sba.py) or Hub id"})
    save_images: Path | None = field(default=None, metadata={"help": "keep the VBA bottleneck images here"})
    seed: int = 0
    shard_size: int = 1000
    batch_size: int | None = field(default=None, metadata={"help": "captions per call (default: 64 SBA, 8 VBA)"})
    device: str | None = None
    dtype: str | None = field(default=None, metadata={"help": "default: bf16 on GPU, fp32 on CPU"})
    tiny: bool = field(default=False, metadata={"help": "tiny random teachers built offline"})


def parse_args(argv: list[str] | None = None) -> tuple[ScoreArguments, CaptionSource, VBAConfig]:
    types = (ScoreArguments, CaptionSource, VBAConfig)
    parser = HfArgumentParser(types, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    return parser.parse_args_into_dataclasses(argv)


def teacher_settings(args: ScoreArguments, vba: VBAConfig) -> PipelineConfig:
    """The teachers' settings from the command line; with --tiny, pointed at tiny offline components."""
    config = PipelineConfig(output_dir=str(args.out_dir), seed=args.seed, device=args.device, dtype=args.dtype)
    config.vba = dataclasses.replace(config.vba, **dataclasses.asdict(vba))
    for settings in (config.sba, config.vba):
        settings.batch_size = args.batch_size or settings.batch_size
    return with_tiny_components(config) if args.tiny else config


def sba_model_dir(args: ScoreArguments, config: PipelineConfig) -> str:
    if not args.tiny:
        if not args.sba:
            raise UserInputError("--sba DIR (a trained SBA) is required to score with the SBA teacher")
        return args.sba
    directory = Path(config.output_dir) / TINY_COMPONENTS / "sba_untrained"
    if not (directory / "model.safetensors").is_file():
        SBAPipeline.from_components(config.sba).model.save_pretrained(directory)
    return str(directory)


def main(argv: list[str] | None = None) -> None:
    args, source, vba = parse_args(argv)
    if args.tiny:
        from modeling_icc.testing.teachers import use_one_cpu_thread

        use_one_cpu_thread()
        if source.path is None:
            source.path, source.id_column = str(data_path("caption_concreteness_dev.csv")), "sample_id"
    if source.path is None:
        raise UserInputError("--captions is required (or --tiny to use the shipped captions)")
    captions = load_captions(source.path, source.column, source.id_column, source.split, source.max_samples)
    config = teacher_settings(args, vba)
    names = ("sba", "vba") if args.teacher == "both" else (args.teacher,)
    for name in names:
        if name == "sba":
            teacher = SBAPipeline.from_pretrained(sba_model_dir(args, config), device=config.device, dtype=config.dtype)
        else:
            teacher = VBAPipeline.from_pretrained(
                config.vba, device=config.device, dtype=config.dtype, image_dir=args.save_images
            )
        settings = getattr(config, name)
        out = score_to_shards(
            teacher,
            captions,
            args.out_dir / name,
            seed=args.seed,
            shard_size=args.shard_size,
            batch_size=settings.batch_size,
        )
        print(f"{name}: {len(captions)} captions scored into {out}")


if __name__ == "__main__":
    run_script(main, "score_teachers")
