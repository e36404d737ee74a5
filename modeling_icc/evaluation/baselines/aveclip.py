"""aveCLIP (Wu & Smith, 2023): imageability as the mean CLIP similarity between a caption and
K images that a text-to-image model generates from it.

Defaults are the ICC paper's VBA teacher's (``VBAConfig``): Stable Diffusion 2,
20 steps, guidance 9 (with the checkpoint's own scheduler). Each image
has its own CPU generator seeded from the caption text, the image index and
``seed``, so a caption gets the same images whatever batch it lands in.
"""

from __future__ import annotations

import os
import zlib

import numpy as np
import torch

from ...models.vba.configuration_vba import VBAConfig
from ...scoring.base import ConcretenessScorer
from ...scoring.devices import resolve_device, resolve_dtype
from ...utils.checkpoints import load_complete_pipeline
from .clip import DEFAULT_CLIP, ClipEmbedder
from .pretrained import load_pretrained

DEFAULT_TEXT_TO_IMAGE = VBAConfig.text_to_image


def image_seed(caption: str, index: int, seed: int) -> int:
    """The generator seed of the ``index``-th image of ``caption``."""
    return (zlib.crc32(caption.encode("utf-8")) * 1_000_003 + index * 7919 + seed) % (2**63)


class AveClipScorer(ConcretenessScorer):
    """Mean cosine similarity (CLIP) between a caption and ``images_per_caption`` generated images."""

    def __init__(
        self,
        text_to_image: str | os.PathLike = DEFAULT_TEXT_TO_IMAGE,
        clip_model: str | os.PathLike = DEFAULT_CLIP,
        *,
        images_per_caption: int = 4,
        num_inference_steps: int = VBAConfig.num_inference_steps,
        guidance_scale: float = VBAConfig.guidance_scale,
        seed: int = 0,
        batch_size: int = 4,
        device: str | None = None,
        dtype: str | None = None,
    ) -> None:
        if images_per_caption < 1 or batch_size < 1:
            raise ValueError("images_per_caption and batch_size must be >= 1")
        self.device = resolve_device(device)
        self.pipeline = load_pretrained(
            load_complete_pipeline,  # a weight missing from any network is an error, not a random one
            text_to_image,
            dtype=resolve_dtype(dtype, self.device),
            use_safetensors=True,
        ).to(self.device)
        self.pipeline.set_progress_bar_config(disable=True)
        self.embedder = ClipEmbedder(clip_model, device=str(self.device), dtype=dtype)
        self.images_per_caption = images_per_caption
        self.num_inference_steps = num_inference_steps
        self.guidance_scale = guidance_scale
        self.seed = seed
        self.batch_size = batch_size
        self.model_id = f"aveclip({os.fspath(text_to_image)}, {self.embedder.model_id}, K={images_per_caption})"

    def generate(self, captions: list[str]) -> list[list]:
        """``images_per_caption`` PIL images for each caption (deterministic per caption)."""
        k = self.images_per_caption
        generators = [
            torch.Generator("cpu").manual_seed(image_seed(caption, index, self.seed))
            for caption in captions
            for index in range(k)
        ]
        images = self.pipeline(
            prompt=captions,
            num_images_per_prompt=k,
            generator=generators,
            num_inference_steps=self.num_inference_steps,
            guidance_scale=self.guidance_scale,
            output_type="pil",
        ).images
        return [images[row * k : (row + 1) * k] for row in range(len(captions))]

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        out = np.empty(len(texts), dtype=np.float32)
        text_embeddings = self.embedder.texts(texts)
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            for offset, images in enumerate(self.generate(batch)):
                row = start + offset
                out[row] = float((self.embedder.images(images) @ text_embeddings[row]).mean())
        return out
