"""The interface the scoring runner drives: a teacher maps captions to reconstructions and similarities."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol


@dataclass
class Reconstruction:
    """One caption's trip through a teacher: every candidate, the best one and its similarity."""

    candidates: list[str]
    best: str
    similarity: float


class Teacher(Protocol):
    """What ``score_to_shards`` drives; ``SBAPipeline`` and ``VBAPipeline`` are the two adapters."""

    name: str

    def provenance(self) -> dict[str, object]:
        """Model ids, settings and package versions, recorded next to every score."""

    def score(self, captions: list[str], row_ids: list[str], seed: int) -> list[Reconstruction]:
        """Reconstruct and score ``captions``; ``row_ids``/``seed`` make randomness reproducible."""


def caption_seed(run_seed: int, row_id: str) -> int:
    """A 63-bit seed for one caption, independent of batch composition and order."""
    digest = hashlib.sha256(f"{run_seed}:{row_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)
