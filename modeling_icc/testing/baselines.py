"""Tiny random models for the model-based baselines: CLIP (text + vision), a causal LM, and a
Stable-Diffusion-shaped text-to-image pipeline, each saved to a directory that the baselines
load exactly as they load real checkpoints. Built from the teachers' tiny components."""

from __future__ import annotations

from pathlib import Path

import torch

from .student import TINY_TOWER
from .teachers import (
    tiny_clip_text_config,
    tiny_clip_tokenizer,
    tiny_llama_config,
    tiny_llama_tokenizer,
    tiny_text_to_image,
)


def save_tiny_clip(directory: str | Path, seed: int = 0) -> Path:
    """A 2-layer CLIP (text + 32-px vision towers) with tokenizer and image processor."""
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

    directory = Path(directory)
    torch.manual_seed(seed)
    text = tiny_clip_text_config()
    vision = dict(**TINY_TOWER, image_size=32, patch_size=8, projection_dim=text.projection_dim)
    config = CLIPConfig(text_config=text.to_dict(), vision_config=vision, projection_dim=text.projection_dim)
    CLIPModel(config).eval().save_pretrained(directory)
    tiny_clip_tokenizer().save_pretrained(directory)
    CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(directory)
    return directory


def save_tiny_causal_lm(directory: str | Path, seed: int = 0) -> Path:
    """A 2-layer Llama with its tokenizer (random weights: answers are noise, the code path is real)."""
    from transformers import LlamaForCausalLM

    directory = Path(directory)
    torch.manual_seed(seed)
    LlamaForCausalLM(tiny_llama_config(initializer_range=0.02)).eval().save_pretrained(directory)
    tiny_llama_tokenizer().save_pretrained(directory)
    return directory


def save_tiny_text_to_image(directory: str | Path, seed: int = 0) -> Path:
    """The teachers' tiny Stable-Diffusion-shaped pipeline (UNet, VAE, CLIP text, DPM-Solver), saved."""
    directory = Path(directory)
    tiny_text_to_image(seed).save_pretrained(directory)
    return directory
