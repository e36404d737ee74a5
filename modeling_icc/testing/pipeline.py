"""A pipeline config pointed at tiny random components: what ``run_pipeline.py --tiny``, ``score_teachers.py
--tiny`` and the pipeline tests run. It lives here, not in the runner, so no production module imports
``modeling_icc.testing``."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..training.distillation.config import TINY_COMPONENTS, PipelineConfig
from .student import save_tiny_student
from .teachers import TINY_IMAGE_SIZE, save_tiny_sba_components, save_tiny_vba_components


def with_tiny_components(config: PipelineConfig) -> PipelineConfig:
    """``config`` pointed at tiny random components saved under ``output_dir/tiny_components``
    (built once; a resumed run reuses them), on CPU in fp32, with ``tiny`` set so the run says so."""
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
    return dataclasses.replace(config, tiny=True, sba=sba, vba=vba, distill=distill, device="cpu", dtype="float32")
