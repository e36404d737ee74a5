"""The visual-bottleneck autoencoder (VBA): caption -> image (diffusion) -> caption (BLIP-2) -> BERTScore.

Every caption's starting noise comes from its own CPU ``torch.Generator`` seeded
from the run seed and the caption's row id, so the same caption gets the same
image in any batch, order or re-run.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import torch

from ..models.vba.configuration_vba import VBAConfig
from ..scoring.devices import resolve_device, resolve_dtype
from ..utils.atomic_files import atomic_file
from ..utils.checkpoints import load_complete, load_complete_pipeline
from ..utils.provenance import package_versions
from ..version import DISTRIBUTION
from .similarity import BERTScoreSimilarity
from .teacher import Reconstruction, caption_seed


class VBAPipeline:
    """Text-to-image (diffusers) -> BLIP-2 captions -> best BERTScore F1: the VBA teacher.

    Settings come from a :class:`VBAConfig` (the paper's by default; ``overrides`` replace
    its fields), whose ids are recorded in :meth:`provenance`: pass the config that
    describes the components. ``image_dir`` keeps the bottleneck images.
    """

    name = "vba"

    def __init__(
        self,
        text_to_image,
        captioner,
        processor,
        similarity: BERTScoreSimilarity,
        config: VBAConfig | None = None,
        *,
        image_dir: str | os.PathLike | None = None,
        **overrides,
    ) -> None:
        import diffusers

        self.config = dataclasses.replace(config or VBAConfig(), **overrides)
        scheduler = getattr(diffusers, self.config.scheduler)
        text_to_image.scheduler = scheduler.from_config(text_to_image.scheduler.config)
        text_to_image.set_progress_bar_config(disable=True)
        if self.config.compile and not hasattr(text_to_image.unet, "_orig_mod"):  # not compiled yet
            # The UNet runs 2 x steps times per image (guidance): 13.2 ms per image and step in bf16 on
            # an H200, 10.1 ms compiled after 60 s of compiling (gpu_end_to_end_cuda.json).
            text_to_image.unet = torch.compile(text_to_image.unet)
        self.text_to_image = text_to_image
        self.captioner = captioner.eval()
        self.processor = processor
        self.similarity = similarity
        self.image_dir = Path(image_dir) if image_dir is not None else None

    @classmethod
    def from_pretrained(
        cls,
        config: VBAConfig | None = None,
        *,
        device: str | torch.device | None = None,
        dtype: str | torch.dtype | None = None,
        image_dir: str | os.PathLike | None = None,
        **overrides,
    ) -> VBAPipeline:
        """Load the three components of ``config`` (bf16 on GPU by default) from Hub ids or local folders;
        a network with a weight missing from its checkpoint is a :class:`CheckpointError`."""
        from transformers import Blip2ForConditionalGeneration, Blip2Processor

        config = dataclasses.replace(config or VBAConfig(), **overrides)
        resolved_device = resolve_device(device)
        resolved_dtype = resolve_dtype(dtype, resolved_device)
        pipe = load_complete_pipeline(config.text_to_image, dtype=resolved_dtype, use_safetensors=True)
        pipe.to(resolved_device)
        model = load_complete(
            Blip2ForConditionalGeneration.from_pretrained, config.captioner, dtype=resolved_dtype, use_safetensors=True
        ).to(resolved_device)
        processor = Blip2Processor.from_pretrained(config.captioner, trust_remote_code=False)
        similarity = BERTScoreSimilarity(config.bertscore_model, config.bertscore_num_layers, device=resolved_device)
        return cls(pipe, model, processor, similarity, config, image_dir=image_dir)

    def provenance(self) -> dict[str, object]:
        versions = package_versions(DISTRIBUTION, "diffusers", "transformers", "torch")
        similarity = self.similarity.provenance
        return {
            **{f.name: getattr(self.config, f.name) for f in dataclasses.fields(VBAConfig)},
            **{key: value for key, value in similarity.items() if key != "versions"},
            "versions": {**versions, **similarity["versions"]},
        }

    @torch.inference_mode()
    def generate_images(self, captions: list[str], row_ids: list[str], seed: int) -> list:
        """One PIL image per caption, reproducible from ``(seed, row_id)``."""
        generators = [torch.Generator("cpu").manual_seed(caption_seed(seed, row_id)) for row_id in row_ids]
        images = self.text_to_image(
            prompt=list(captions),
            num_inference_steps=self.config.num_inference_steps,
            guidance_scale=self.config.guidance_scale,
            height=self.config.size,
            width=self.config.size,
            generator=generators,
            output_type="pil",
        ).images
        if self.image_dir is not None:
            self.image_dir.mkdir(parents=True, exist_ok=True)
            for row_id, image in zip(row_ids, images, strict=True):
                with atomic_file(self.image_dir / f"{_safe_name(row_id)}.png") as stream:
                    image.save(stream, format="PNG")
        return images

    @torch.inference_mode()
    def caption_images(self, images: list) -> list[list[str]]:
        """BLIP-2 captions for each image, the prompt removed (best beam first)."""
        prompt = self.config.prompt
        inputs = self.processor(images=images, text=[prompt] * len(images), return_tensors="pt")
        device = self.captioner.device
        inputs = {
            key: value.to(device, dtype=self.captioner.dtype) if value.is_floating_point() else value.to(device)
            for key, value in inputs.items()
        }
        n = self.config.num_return_sequences
        generated = self.captioner.generate(
            **inputs,
            num_beams=self.config.num_beams,
            num_return_sequences=n,
            max_new_tokens=self.config.max_new_tokens,
            min_new_tokens=self.config.min_new_tokens,
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


def _strip_prompt(text: str, prompt: str) -> str:
    text = text.strip()
    if text.lower().startswith(prompt.lower()):
        text = text[len(prompt) :].strip()
    return text


def _safe_name(row_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", str(row_id))[:128]
