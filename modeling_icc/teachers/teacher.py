"""The interface the scoring runner drives: a teacher maps captions to reconstructions and similarities."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol

from ..models.sba.modeling_sba import SBAForCaptionReconstruction
from ..utils.provenance import package_versions
from ..version import DISTRIBUTION
from .similarity import best_char_similarity


@dataclass
class Reconstruction:
    """One caption's trip through a teacher: every candidate, the best one and its similarity."""

    candidates: list[str]
    best: str
    similarity: float


class Teacher(Protocol):
    name: str

    def provenance(self) -> dict[str, object]:
        """Model ids, settings and package versions, recorded next to every score."""

    def score(self, captions: list[str], row_ids: list[str], seed: int) -> list[Reconstruction]:
        """Reconstruct and score ``captions``; ``row_ids``/``seed`` make randomness reproducible."""


def caption_seed(run_seed: int, row_id: str) -> int:
    """A 63-bit seed for one caption, independent of batch composition and order."""
    digest = hashlib.sha256(f"{run_seed}:{row_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


class SBATeacher:
    """SBA reconstruction (beam search) scored by best-of-N character similarity."""

    name = "sba"

    def __init__(
        self,
        model: SBAForCaptionReconstruction,
        num_beams: int = 5,
        num_return_sequences: int = 5,
        max_new_tokens: int = 64,
        no_repeat_ngram_size: int = 2,
    ) -> None:
        self.model = model.eval()
        self.options = {
            "num_beams": num_beams,
            "num_return_sequences": num_return_sequences,
            "max_new_tokens": max_new_tokens,
            "no_repeat_ngram_size": no_repeat_ngram_size,
        }

    def provenance(self) -> dict[str, object]:
        config = self.model.config
        return {
            "text_model": config.text_model_name_or_path,
            "lm": config.lm_name_or_path,
            "bottleneck": config.bottleneck,
            "num_soft_tokens": config.num_soft_tokens,
            "similarity": "char_levenshtein",
            **self.options,
            "versions": package_versions(DISTRIBUTION, "transformers", "torch", "rapidfuzz"),
        }

    def score(self, captions: list[str], row_ids: list[str], seed: int) -> list[Reconstruction]:
        out = []
        for caption, candidates in zip(captions, self.model.reconstruct(captions, **self.options), strict=True):
            best, similarity = best_char_similarity(caption, candidates)
            out.append(Reconstruction(candidates, best, similarity))
        return out
