"""CLIP embeddings of captions and images, shared by Stroop probing, aveCLIP and CLIPScore."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import partial

import numpy as np
import torch

from ...scoring.devices import resolve_device, resolve_dtype
from ...utils.checkpoints import CLIP_IMAGE_SIDE, load_complete
from .pretrained import load_pretrained

#: The CLIP used when none is named: ViT-L/14, the text tower of the paper's SBA teacher.
DEFAULT_CLIP = "openai/clip-vit-large-patch14"


class ClipEmbedder:
    """L2-normalized CLIP text and image embeddings (``get_text_features``/``get_image_features``).

    ``vision=False`` loads the text tower alone (with its projection), which is
    all that Stroop probing needs.
    """

    def __init__(
        self,
        model_id: str | os.PathLike = DEFAULT_CLIP,
        *,
        vision: bool = True,
        device: str | None = None,
        dtype: str | torch.dtype | None = None,
        batch_size: int = 64,
    ) -> None:
        from transformers import AutoTokenizer, CLIPModel, CLIPTextModelWithProjection

        self.model_id = os.fspath(model_id)
        self.device = resolve_device(device)
        dtype = resolve_dtype(dtype, self.device)
        # strict: a weight missing from the checkpoint is an error, not a random one
        if vision:
            loader = partial(load_complete, CLIPModel.from_pretrained)
        else:
            loader = partial(
                load_complete, CLIPTextModelWithProjection.from_pretrained, allowed_unexpected=CLIP_IMAGE_SIDE
            )
        self.model = load_pretrained(loader, self.model_id, dtype=dtype, use_safetensors=True)
        self.model.to(self.device).eval()
        self.tokenizer = load_pretrained(AutoTokenizer.from_pretrained, self.model_id, trust_remote_code=False)
        self.processor = None
        if vision:
            from transformers import AutoImageProcessor

            self.processor = load_pretrained(AutoImageProcessor.from_pretrained, self.model_id, trust_remote_code=False)
        self.batch_size = batch_size
        self.max_length = min(int(self.tokenizer.model_max_length), 77)

    def _text_features(self, **inputs) -> torch.Tensor:
        if hasattr(self.model, "get_text_features"):
            features = self.model.get_text_features(**inputs)
        else:
            features = self.model(**inputs).text_embeds
        return getattr(features, "pooler_output", features)

    @torch.inference_mode()
    def texts(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-norm text embeddings (captions longer than CLIP's 77 tokens are truncated)."""
        out = []
        for start in range(0, len(texts), self.batch_size):
            batch = self.tokenizer(
                list(texts[start : start + self.batch_size]),
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            ).to(self.device)
            features = self._text_features(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
            out.append(torch.nn.functional.normalize(features.float(), dim=-1).cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, 0), dtype=np.float32)

    @torch.inference_mode()
    def images(self, images: Sequence) -> np.ndarray:
        """Unit-norm image embeddings of PIL images."""
        if self.processor is None:
            raise ValueError("this ClipEmbedder was loaded with vision=False")
        out = []
        for start in range(0, len(images), self.batch_size):
            pixels = self.processor(images=list(images[start : start + self.batch_size]), return_tensors="pt")
            pixel_values = pixels["pixel_values"].to(self.device, dtype=self.model.dtype)
            features = self.model.get_image_features(pixel_values=pixel_values)
            features = getattr(features, "pooler_output", features)
            out.append(torch.nn.functional.normalize(features.float(), dim=-1).cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, 0), dtype=np.float32)
