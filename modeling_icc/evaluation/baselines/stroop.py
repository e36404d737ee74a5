"""CLIP Stroop probing (Alper et al., CVPR 2023, "Is BERT blind?"), applied to whole captions.

As in the authors' reference implementation (TAU-VAILab/isbertblind), a prompt
has a slot; the score is the cosine similarity between the CLIP text embedding
of the prompt with the slot left empty and with the slot filled, here by the
caption. We keep only prompts that read naturally with a whole caption in the
slot (:data:`STROOP_PROMPTS`) and average over them.

Direction: the score is the similarity as the reference computes it, not
flipped. The ICC paper (Table 3) reports it *anti*-correlated with human
caption concreteness (Pearson -0.36): a caption that barely moves the prompt's
embedding tends to be a concrete one.
"""

from __future__ import annotations

import os

import numpy as np

from ...scoring.base import ConcretenessScorer
from .clip import DEFAULT_CLIP, ClipEmbedder

SLOT = "MASK"
STROOP_PROMPTS = ("a photo of MASK", "an image of MASK", "a picture of MASK")


class ClipStroopScorer(ConcretenessScorer):
    """Mean cosine similarity of CLIP text embeddings of each prompt without and with the caption."""

    def __init__(
        self,
        model_id: str | os.PathLike = DEFAULT_CLIP,
        *,
        prompts: tuple[str, ...] = STROOP_PROMPTS,
        device: str | None = None,
        dtype: str | None = None,
        batch_size: int = 64,
    ) -> None:
        if not prompts or any(prompt.count(SLOT) != 1 for prompt in prompts):
            raise ValueError(f"every Stroop prompt needs exactly one {SLOT!r} slot, got {prompts!r}")
        self.prompts = prompts
        self.embedder = ClipEmbedder(model_id, vision=False, device=device, dtype=dtype, batch_size=batch_size)
        self.model_id = f"stroop({self.embedder.model_id})"

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        empty = self.embedder.texts([" ".join(prompt.replace(SLOT, "").split()) for prompt in self.prompts])
        total = np.zeros(len(texts), dtype=np.float32)
        for base, prompt in zip(empty, self.prompts, strict=True):
            filled = self.embedder.texts([prompt.replace(SLOT, text.strip()) for text in texts])
            total += filled @ base
        return total / len(self.prompts)
