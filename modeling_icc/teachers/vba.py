"""The visual-bottleneck autoencoder (VBA): caption -> image (diffusion) -> caption (BLIP-2) -> BERTScore.

Every caption's starting noise comes from its own CPU ``torch.Generator`` seeded
from the run seed and the caption's row id, so the same caption gets the same
image in any batch, order or re-run.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import torch

from ..scoring.devices import resolve_device, resolve_dtype
from ..utils.provenance import package_versions
from ..version import DISTRIBUTION
from .similarity import DEFAULT_BERTSCORE_LAYERS, DEFAULT_BERTSCORE_MODEL, BERTScoreSimilarity
from .teacher import Reconstruction, caption_seed

DEFAULT_TEXT_TO_IMAGE = "stabilityai/stable-diffusion-2"
DEFAULT_CAPTIONER = "Salesforce/blip2-opt-2.7b-coco"
CAPTION_PROMPT = "a photo of"


class VBAPipeline:
    """Text-to-image (diffusers, DPM-Solver multistep) -> BLIP-2 captions -> best BERTScore F1.

    Defaults are the paper's: Stable Diffusion 2 at 768 px, 20 steps, guidance 9;
    BLIP-2 OPT-2.7B (COCO) prompted with "a photo of", 5 beams, 5 captions; the
    VBA score is the best F1 among them. ``image_dir`` keeps the bottleneck images.
    ``min_new_tokens`` fixes caption length for benchmarks (leave it unset to score).
    """

    name = "vba"

    def __init__(
        self,
        text_to_image,
        captioner,
        processor,
        similarity: BERTScoreSimilarity,
        *,
        num_inference_steps: int = 20,
        guidance_scale: float = 9.0,
        height: int = 768,
        width: int = 768,
        prompt: str = CAPTION_PROMPT,
        num_beams: int = 5,
        num_return_sequences: int = 5,
        max_new_tokens: int = 30,
        min_new_tokens: int | None = None,
        image_dir: str | os.PathLike | None = None,
        model_ids: dict[str, str] | None = None,
    ) -> None:
        from diffusers import DPMSolverMultistepScheduler

        text_to_image.scheduler = DPMSolverMultistepScheduler.from_config(text_to_image.scheduler.config)
        text_to_image.set_progress_bar_config(disable=True)
        self.text_to_image = text_to_image
        self.captioner = captioner.eval()
        self.processor = processor
        self.similarity = similarity
        self.settings = {
            "num_inference_steps": num_inference_steps,
            "guidance_scale": guidance_scale,
            "height": height,
            "width": width,
            "prompt": prompt,
            "num_beams": num_beams,
            "num_return_sequences": num_return_sequences,
            "max_new_tokens": max_new_tokens,
            "min_new_tokens": min_new_tokens,
        }
        self.image_dir = Path(image_dir) if image_dir is not None else None
        self.model_ids = model_ids or {}

    @classmethod
    def from_pretrained(
        cls,
        text_to_image: str | os.PathLike = DEFAULT_TEXT_TO_IMAGE,
        captioner: str | os.PathLike = DEFAULT_CAPTIONER,
        bertscore_model: str | os.PathLike = DEFAULT_BERTSCORE_MODEL,
        bertscore_num_layers: int | None = DEFAULT_BERTSCORE_LAYERS,
        device: str | torch.device | None = None,
        dtype: str | torch.dtype | None = None,
        **options,
    ) -> VBAPipeline:
        """Load the three components (bf16 on GPU by default) from Hub ids or local folders."""
        from diffusers import DiffusionPipeline
        from transformers import Blip2ForConditionalGeneration, Blip2Processor

        resolved_device = resolve_device(device)
        resolved_dtype = resolve_dtype(dtype, resolved_device)
        pipe = DiffusionPipeline.from_pretrained(os.fspath(text_to_image), dtype=resolved_dtype, use_safetensors=True)
        pipe.to(resolved_device)
        model = Blip2ForConditionalGeneration.from_pretrained(
            os.fspath(captioner), dtype=resolved_dtype, use_safetensors=True
        ).to(resolved_device)
        processor = Blip2Processor.from_pretrained(os.fspath(captioner))
        similarity = BERTScoreSimilarity(os.fspath(bertscore_model), bertscore_num_layers, device=resolved_device)
        ids = {"text_to_image": os.fspath(text_to_image), "captioner": os.fspath(captioner)}
        return cls(pipe, model, processor, similarity, model_ids=ids, **options)

    def provenance(self) -> dict[str, object]:
        versions = package_versions(DISTRIBUTION, "diffusers", "transformers", "torch")
        similarity = self.similarity.provenance
        return {
            **self.model_ids,
            "scheduler": "DPMSolverMultistepScheduler",
            **self.settings,
            **{key: value for key, value in similarity.items() if key != "versions"},
            "versions": {**versions, **similarity["versions"]},
        }

    @torch.inference_mode()
    def generate_images(self, captions: list[str], row_ids: list[str], seed: int) -> list:
        """One PIL image per caption, reproducible from ``(seed, row_id)``."""
        generators = [torch.Generator("cpu").manual_seed(caption_seed(seed, row_id)) for row_id in row_ids]
        images = self.text_to_image(
            prompt=list(captions),
            num_inference_steps=self.settings["num_inference_steps"],
            guidance_scale=self.settings["guidance_scale"],
            height=self.settings["height"],
            width=self.settings["width"],
            generator=generators,
            output_type="pil",
        ).images
        if self.image_dir is not None:
            self.image_dir.mkdir(parents=True, exist_ok=True)
            for row_id, image in zip(row_ids, images, strict=True):
                image.save(self.image_dir / f"{_safe_name(row_id)}.png")
        return images

    @torch.inference_mode()
    def caption_images(self, images: list) -> list[list[str]]:
        """BLIP-2 captions for each image, the prompt removed (best beam first)."""
        prompt = self.settings["prompt"]
        inputs = self.processor(images=images, text=[prompt] * len(images), return_tensors="pt")
        device = self.captioner.device
        inputs = {
            key: value.to(device, dtype=self.captioner.dtype) if value.is_floating_point() else value.to(device)
            for key, value in inputs.items()
        }
        n = self.settings["num_return_sequences"]
        generated = self.captioner.generate(
            **inputs,
            num_beams=self.settings["num_beams"],
            num_return_sequences=n,
            max_new_tokens=self.settings["max_new_tokens"],
            min_new_tokens=self.settings["min_new_tokens"],
            do_sample=False,
        )
        new_tokens = generated[:, inputs["input_ids"].shape[1] :]
        texts = [_strip_prompt(t, prompt) for t in self.processor.batch_decode(new_tokens, skip_special_tokens=True)]
        return [texts[i : i + n] for i in range(0, len(texts), n)]

    def score(self, captions: list[str], row_ids: list[str], seed: int) -> list[Reconstruction]:
        candidates = self.caption_images(self.generate_images(captions, row_ids, seed))
        best = self.similarity.best(captions, candidates)
        return [
            Reconstruction(group, text, similarity) for group, (text, similarity) in zip(candidates, best, strict=True)
        ]

    __call__ = score


def _strip_prompt(text: str, prompt: str) -> str:
    text = text.strip()
    if text.lower().startswith(prompt.lower()):
        text = text[len(prompt) :].strip()
    return text


def _safe_name(row_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", str(row_id))[:128]
