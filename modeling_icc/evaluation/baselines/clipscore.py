"""CLIPScore (Hessel et al., 2021): the image-side filter that ICC is usually combined with.

``CLIPScore = w * max(cos(E_image, E_caption), 0)`` with ``w = 2.5``; as in the
paper, the caption is prefixed with "A photo depicts". It scores (image,
caption) pairs, so it is not a text-only :class:`ConcretenessScorer`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .clip import ClipEmbedder

#: The CLIP of the CLIPScore paper.
CLIPSCORE_MODEL = "openai/clip-vit-base-patch32"
CLIPSCORE_WEIGHT = 2.5
CLIPSCORE_PREFIX = "A photo depicts "


def _open_image(image):
    from PIL import Image

    if isinstance(image, (str, os.PathLike)):
        with Image.open(Path(image)) as opened:
            return opened.convert("RGB")
    return image.convert("RGB")


class ClipScore:
    """Reference-free image-caption compatibility; ``score(images, captions)`` returns one value per pair."""

    def __init__(
        self,
        model_id: str | os.PathLike = CLIPSCORE_MODEL,
        *,
        weight: float = CLIPSCORE_WEIGHT,
        prefix: str = CLIPSCORE_PREFIX,
        device: str | None = None,
        dtype: str | None = None,
        batch_size: int = 64,
    ) -> None:
        self.embedder = ClipEmbedder(model_id, device=device, dtype=dtype, batch_size=batch_size)
        self.weight = weight
        self.prefix = prefix
        self.model_id = f"clipscore({self.embedder.model_id})"

    def score(self, images: Sequence, captions: Sequence[str]) -> np.ndarray:
        """``w * max(cos, 0)`` per (image, caption) pair; images are PIL images or file paths."""
        if isinstance(captions, str):
            raise TypeError("score() takes a list of captions, not a single string")
        if len(images) != len(captions):
            raise ValueError(f"got {len(images)} images but {len(captions)} captions")
        image_embeddings = self.embedder.images([_open_image(image) for image in images])
        text_embeddings = self.embedder.texts([self.prefix + caption for caption in captions])
        cosine = (image_embeddings * text_embeddings).sum(axis=1)
        return (self.weight * np.maximum(cosine, 0.0)).astype(np.float32)
