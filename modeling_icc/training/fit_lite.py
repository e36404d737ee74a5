"""Fitting the lite model on annotated captions, with cross-validation.

Few parameters (one weight per documented feature), strong ridge
regularization, and the spread across folds reported: 303 captions are few,
so the report shows how much the figure moves between folds and seeds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import kendalltau, pearsonr, spearmanr
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import StratifiedKFold

from ..models.lite.features import FEATURE_NAMES, caption_features
from ..models.lite.lexicon import Lexicon, default_lexicon
from ..models.lite.modeling_lite import LiteModel

#: Ridge penalty on standardized features (chosen from 10, 30, 100, 300 by 10-fold CV; 100 is the
#: strongest penalty within 0.002 of the best, preferred against over-fitting).
DEFAULT_ALPHA = 100.0
#: Labels at or above this are the "concrete half" the calibration separates at 0.5 (0-3 scale: 2).
DEFAULT_SPLIT = 2


def feature_matrix(texts: Sequence[str], lexicon: Lexicon | None = None) -> np.ndarray:
    """The features the scorer reads (of the normalized captions), one row per caption."""
    lexicon = lexicon or default_lexicon()
    return np.array([caption_features(text, lexicon) for text in texts], dtype=np.float64)


def _standardize_stats(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    means = features.mean(axis=0)
    scales = features.std(axis=0)
    return means, np.where(scales > 0, scales, 1.0)


def _ridge(features: np.ndarray, labels: np.ndarray, alpha: float) -> tuple[Ridge, np.ndarray, np.ndarray]:
    means, scales = _standardize_stats(features)
    return Ridge(alpha=alpha).fit((features - means) / scales, labels), means, scales


def cross_validate(
    features: np.ndarray,
    labels: np.ndarray,
    *,
    alpha: float = DEFAULT_ALPHA,
    folds: int = 10,
    seeds: Sequence[int] = (0,),
) -> dict:
    """Out-of-fold ridge predictions per seed; pooled and per-fold rank correlations."""
    pooled, per_fold, out_of_fold = [], [], []
    for seed in seeds:
        prediction = np.zeros(len(labels))
        for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(features, labels):
            model, means, scales = _ridge(features[train], labels[train], alpha)
            prediction[test] = model.predict((features[test] - means) / scales)
            per_fold.append(float(spearmanr(prediction[test], labels[test])[0]))
        pooled.append(
            {
                "spearman": float(spearmanr(prediction, labels)[0]),
                "pearson": float(pearsonr(prediction, labels)[0]),
                "kendall": float(kendalltau(prediction, labels)[0]),
            }
        )
        out_of_fold.append(prediction)
    fold_values = np.array(per_fold)
    return {
        "folds": folds,
        "seeds": list(seeds),
        "spearman_pooled_mean": float(np.mean([p["spearman"] for p in pooled])),
        "pearson_pooled_mean": float(np.mean([p["pearson"] for p in pooled])),
        "kendall_pooled_mean": float(np.mean([p["kendall"] for p in pooled])),
        "spearman_per_fold": {
            "mean": float(fold_values.mean()),
            "sd": float(fold_values.std()),
            "min": float(fold_values.min()),
            "max": float(fold_values.max()),
        },
        "out_of_fold_prediction": out_of_fold[0],
    }


def fit_lite_model(
    texts: Sequence[str],
    labels: Sequence[float],
    *,
    lexicon: Lexicon | None = None,
    alpha: float = DEFAULT_ALPHA,
    folds: int = 10,
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    split: float = DEFAULT_SPLIT,
    source: str = "",
) -> LiteModel:
    """Fit ridge weights on all captions and a logistic calibration on out-of-fold predictions."""
    features = feature_matrix(texts, lexicon)
    labels = np.asarray(labels, dtype=np.float64)
    concrete_half = labels >= split
    if concrete_half.all() or not concrete_half.any():
        raise ValueError(f"labels must fall on both sides of the split {split}")
    cv = cross_validate(features, labels, alpha=alpha, folds=folds, seeds=seeds)
    out_of_fold = cv.pop("out_of_fold_prediction")
    calibration = LogisticRegression(C=1e4).fit(out_of_fold[:, None], concrete_half)
    slope, offset = float(calibration.coef_[0, 0]), float(calibration.intercept_[0])
    ridge, means, scales = _ridge(features, labels, alpha)
    weights = slope * ridge.coef_
    bias = slope * float(ridge.intercept_) + offset
    cv_probability = 1.0 / (1.0 + np.exp(-(slope * out_of_fold + offset)))
    report = {
        "fitted_on": source,
        "n": len(labels),
        "label_counts": {f"{k:g}": int(v) for k, v in zip(*np.unique(labels, return_counts=True), strict=True)},
        "alpha": alpha,
        "calibration": {"split": split, "slope": slope, "offset": offset},
        "cross_validation": cv,
        "cv_accuracy_at_0.5": float(((cv_probability >= 0.5) == concrete_half).mean()),
    }
    return LiteModel(
        feature_names=FEATURE_NAMES,
        means=tuple(float(v) for v in means),
        scales=tuple(float(v) for v in scales),
        weights=tuple(float(v) for v in weights),
        bias=bias,
        report=report,
    )
