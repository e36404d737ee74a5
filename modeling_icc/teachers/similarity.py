"""How close a reconstruction is to its source caption: character edit similarity and BERTScore F1."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ..models.vba.configuration_vba import VBAConfig
from ..utils.checkpoints import load_complete
from ..utils.provenance import package_versions


def char_similarity(a: str, b: str) -> float:
    """``1 - levenshtein(a, b) / max(len(a), len(b))`` over Unicode code points.

    1.0 for identical strings (two empty strings included), 0.0 when one is empty
    and the other is not; symmetric.
    """
    from rapidfuzz.distance import Levenshtein

    return float(Levenshtein.normalized_similarity(a, b))


def best_char_similarity(source: str, candidates: Sequence[str]) -> tuple[str, float]:
    """The SBA score: the candidate closest to ``source`` and its :func:`char_similarity` (0 if none)."""
    return _best(candidates, [char_similarity(source, candidate) for candidate in candidates])


def _best(candidates: Sequence[str], scores: Sequence[float]) -> tuple[str, float]:
    if not candidates:
        return "", 0.0
    index = int(np.argmax(scores))
    return candidates[index], float(scores[index])


class BERTScoreSimilarity:
    """BERTScore F1 (``bert-score``) between candidates and their source caption (by default the
    paper's model: RoBERTa-large, layer 17, bert-score's English default).

    ``model`` is a Hub id or a local folder (``num_layers`` is then required by
    bert-score); one with weights missing is a :class:`CheckpointError`. Empty strings,
    which crash bert-score 0.3.13 on transformers 5, are answered without the model:
    1.0 when both sides are empty, else 0.0.
    F1 is clipped to [0, 1] (negative values only occur with untrained encoders).
    """

    def __init__(
        self,
        model: str = VBAConfig.bertscore_model,
        num_layers: int | None = VBAConfig.bertscore_num_layers,
        batch_size: int = 64,
        device: str | torch.device | None = None,
    ) -> None:
        from bert_score import BERTScorer

        self.model = str(model)
        self.num_layers = num_layers
        _require_complete_encoder(self.model)
        self._scorer = BERTScorer(
            model_type=self.model,
            num_layers=num_layers,
            batch_size=batch_size,
            device=str(device) if device is not None else None,
            lang="en",
        )

    @property
    def provenance(self) -> dict[str, object]:
        """What produced the numbers: package versions, model, layer, bert-score's own hash."""
        return {
            "bertscore_model": self.model,
            "bertscore_num_layers": self.num_layers,
            "bertscore_hash": self._scorer.hash,
            "versions": package_versions("bert-score", "transformers", "torch"),
        }

    def f1(self, candidates: Sequence[str], references: Sequence[str]) -> np.ndarray:
        """Pairwise F1 of ``candidates[i]`` against ``references[i]``."""
        if len(candidates) != len(references):
            raise ValueError("candidates and references differ in length")
        out = np.zeros(len(candidates), dtype=np.float32)
        both_empty = [not c.strip() and not r.strip() for c, r in zip(candidates, references, strict=True)]
        scored = [i for i, (c, r) in enumerate(zip(candidates, references, strict=True)) if c.strip() and r.strip()]
        out[np.asarray(both_empty, dtype=bool)] = 1.0
        if scored:
            _, _, f1 = self._scorer.score([candidates[i] for i in scored], [references[i] for i in scored])
            out[scored] = np.clip(f1.float().cpu().numpy(), 0.0, 1.0)
        return out

    def best(self, sources: Sequence[str], candidates: Sequence[Sequence[str]]) -> list[tuple[str, float]]:
        """The VBA score for each source: its best candidate and that candidate's F1."""
        flat_candidates = [c for group in candidates for c in group]
        flat_sources = [s for s, group in zip(sources, candidates, strict=True) for _ in group]
        scores = self.f1(flat_candidates, flat_sources)
        out, start = [], 0
        for group in candidates:
            out.append(_best(group, scores[start : start + len(group)]))
            start += len(group)
        return out


def _require_complete_encoder(model: str) -> None:
    """Refuse a BERTScore model with weights missing before bert-score loads it: bert-score calls
    ``from_pretrained`` without asking what was missing, so a missing weight would be random.

    The check loads on the meta device (names and shapes, no weights read), with bert-score's class.
    """
    from transformers import AutoModel, T5EncoderModel

    load_complete(
        (T5EncoderModel if "t5" in model else AutoModel).from_pretrained,
        model,
        device_map="meta",
        # bert-score reads hidden states, never the pooler, which roberta-large (the paper's model) does not save
        allowed_missing=("pooler.",),
        # any leftover ("" starts every key): a pretraining head (roberta-large's lm_head) goes unused,
        # and an encoder weight saved under another name would still show as missing
        allowed_unexpected=("",),
    )
