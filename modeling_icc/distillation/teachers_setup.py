"""Building the teachers and the tiny offline components from pipeline settings."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from ..scoring.devices import resolve_device, resolve_dtype
from ..teachers import SBAForCaptionReconstruction, SBATeacher, VBAPipeline
from .config import PipelineConfig, SBASettings, VBASettings

TINY_COMPONENTS = "tiny_components"


def sba_teacher(settings: SBASettings, model_dir: str | os.PathLike, device=None, dtype=None) -> SBATeacher:
    """The SBA teacher from a trained SBA directory (its components are found from its config)."""
    resolved = resolve_device(device)
    model = SBAForCaptionReconstruction.from_pretrained(
        model_dir, device=resolved, dtype=resolve_dtype(dtype, resolved)
    )
    return SBATeacher(
        model,
        num_beams=settings.num_beams,
        num_return_sequences=settings.num_return_sequences,
        max_new_tokens=settings.max_new_tokens,
    )


def vba_teacher(settings: VBASettings, device=None, dtype=None, image_dir: str | os.PathLike | None = None):
    return VBAPipeline.from_pretrained(
        settings.text_to_image,
        settings.captioner,
        settings.bertscore_model,
        settings.bertscore_num_layers,
        device=device,
        dtype=dtype,
        num_inference_steps=settings.num_inference_steps,
        guidance_scale=settings.guidance_scale,
        height=settings.size,
        width=settings.size,
        num_beams=settings.num_beams,
        num_return_sequences=settings.num_return_sequences,
        max_new_tokens=settings.max_new_tokens,
        image_dir=image_dir,
    )


def with_tiny_components(config: PipelineConfig) -> PipelineConfig:
    """``config`` pointed at tiny random components saved under ``output_dir/tiny_components``
    (built once; a resumed run reuses them), on CPU in fp32."""
    from ..testing import save_tiny_student
    from ..testing.teachers import TINY_IMAGE_SIZE, save_tiny_sba_components, save_tiny_vba_components

    root = Path(config.output_dir) / TINY_COMPONENTS
    sba_paths = {"text_model": root / "sba" / "clip_text", "lm": root / "sba" / "llama"}
    vba_paths = {
        "text_to_image": root / "vba" / "text_to_image",
        "captioner": root / "vba" / "blip2",
        "bertscore_model": root / "vba" / "bertscore",
    }
    student = root / "student_backbone"
    if not all(p.is_dir() for p in (*sba_paths.values(), *vba_paths.values(), student)):
        sba_paths = save_tiny_sba_components(root / "sba", seed=config.seed)
        vba_paths = save_tiny_vba_components(root / "vba", seed=config.seed)
        save_tiny_student(student, seed=config.seed)
    sba = dataclasses.replace(config.sba, text_model=str(sba_paths["text_model"]), lm=str(sba_paths["lm"]))
    vba = dataclasses.replace(
        config.vba,
        text_to_image=str(vba_paths["text_to_image"]),
        captioner=str(vba_paths["captioner"]),
        bertscore_model=str(vba_paths["bertscore_model"]),
        bertscore_num_layers=2,
        size=TINY_IMAGE_SIZE,
    )
    distill = dataclasses.replace(config.distill, backbone=str(student))
    return dataclasses.replace(config, sba=sba, vba=vba, distill=distill, device="cpu", dtype="float32")
