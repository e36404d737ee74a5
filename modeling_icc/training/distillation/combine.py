"""Combining the two standardized teacher scores into the ICC target: σ(a·VBA + b·SBA + c).

The weights come from a logistic regression of the median-split human
concreteness annotation on the two scores, fitted on annotated captions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .saved_json import SavedAsJSON


@dataclass
class CombinerFit:
    """Quality of the fit: cross-validated (held-out folds) and in-sample."""

    n: int
    n_positive: int
    threshold: float
    cv_folds: int
    cv_roc_auc: float
    cv_accuracy: float
    cv_log_loss: float
    cv_pearson_vs_annotation: float
    cv_spearman_vs_annotation: float
    in_sample_pearson_vs_annotation: float
    in_sample_spearman_vs_annotation: float
    in_sample_kendall_vs_annotation: float


class ScoreCombiner(SavedAsJSON):
    """Logistic combination of standardized VBA and SBA scores, fitted on human labels.

    Labels are ``annotation >= threshold``; the default threshold is the median of
    the annotations ("at or above the median" is concrete: on the 0-3 scale of the
    shipped data, whose median is 2, that is 2 and 3 vs 0 and 1). ``C`` is
    scikit-learn's inverse regularization strength; the default (infinity) is an
    unregularized fit, as in the paper.
    """

    FORMAT = "icc-score-combiner/1"

    def __init__(self, threshold: float | None = None, cv_folds: int = 5, C: float = np.inf, seed: int = 0) -> None:
        self.threshold = threshold
        self.cv_folds = cv_folds
        self.C = C
        self.seed = seed
        self.vba_weight: float | None = None
        self.sba_weight: float | None = None
        self.intercept: float | None = None
        self.fit_report: CombinerFit | None = None

    def fit(self, vba: np.ndarray, sba: np.ndarray, annotations: np.ndarray) -> ScoreCombiner:
        from scipy import stats
        from sklearn.linear_model import LogisticRegression
        from sklearn.metrics import accuracy_score, log_loss, roc_auc_score
        from sklearn.model_selection import StratifiedKFold, cross_val_predict

        features, annotations = self._validate(vba, sba, annotations)
        threshold = float(np.median(annotations)) if self.threshold is None else float(self.threshold)
        labels = (annotations >= threshold).astype(int)
        n_positive = int(labels.sum())
        smaller_class = min(n_positive, len(labels) - n_positive)
        if smaller_class == 0:
            raise ValueError(
                f"all {len(labels)} annotations fall on one side of the threshold {threshold}; "
                "the combiner needs both concrete and abstract examples"
            )
        if smaller_class < 2:
            raise ValueError("the combiner needs at least 2 examples of each class")
        model = LogisticRegression(C=self.C, max_iter=1000)
        folds = min(self.cv_folds, smaller_class)
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=self.seed)
        held_out = cross_val_predict(model, features, labels, cv=splitter, method="predict_proba")[:, 1]
        model.fit(features, labels)
        self.vba_weight, self.sba_weight = (float(w) for w in model.coef_[0])
        self.intercept = float(model.intercept_[0])
        combined = self.combine(features[:, 0], features[:, 1])
        self.threshold = threshold
        self.fit_report = CombinerFit(
            n=len(labels),
            n_positive=n_positive,
            threshold=threshold,
            cv_folds=folds,
            cv_roc_auc=float(roc_auc_score(labels, held_out)),
            cv_accuracy=float(accuracy_score(labels, held_out >= 0.5)),
            cv_log_loss=float(log_loss(labels, held_out, labels=[0, 1])),
            cv_pearson_vs_annotation=_safe(stats.pearsonr, held_out, annotations),
            cv_spearman_vs_annotation=_safe(stats.spearmanr, held_out, annotations),
            in_sample_pearson_vs_annotation=_safe(stats.pearsonr, combined, annotations),
            in_sample_spearman_vs_annotation=_safe(stats.spearmanr, combined, annotations),
            in_sample_kendall_vs_annotation=_safe(stats.kendalltau, combined, annotations),
        )
        return self

    def combine(self, vba: np.ndarray, sba: np.ndarray) -> np.ndarray:
        """The ICC target σ(a·VBA + b·SBA + c) for each caption."""
        if self.intercept is None:
            raise ValueError("ScoreCombiner is not fitted; call fit() or load()")
        vba, sba = np.asarray(vba, dtype=np.float64), np.asarray(sba, dtype=np.float64)
        if np.isnan(vba).any() or np.isnan(sba).any():
            raise ValueError("scores to combine contain NaN")
        return 1.0 / (1.0 + np.exp(-(self.vba_weight * vba + self.sba_weight * sba + self.intercept)))

    def _validate(self, vba, sba, annotations) -> tuple[np.ndarray, np.ndarray]:
        vba, sba = np.asarray(vba, dtype=np.float64), np.asarray(sba, dtype=np.float64)
        annotations = np.asarray(annotations, dtype=np.float64)
        if not (vba.ndim == sba.ndim == annotations.ndim == 1 and len(vba) == len(sba) == len(annotations)):
            raise ValueError("vba, sba and annotations must be 1-D arrays of equal length")
        for name, values in (("vba", vba), ("sba", sba), ("annotations", annotations)):
            if np.isnan(values).any():
                raise ValueError(f"{name} contains NaN at rows {np.flatnonzero(np.isnan(values))[:5].tolist()}")
        return np.column_stack([vba, sba]), annotations

    def to_dict(self) -> dict:
        if self.intercept is None:
            raise ValueError("ScoreCombiner is not fitted")
        return {
            "format": self.FORMAT,
            "formula": "sigmoid(vba_weight * vba + sba_weight * sba + intercept)",
            "vba_weight": self.vba_weight,
            "sba_weight": self.sba_weight,
            "intercept": self.intercept,
            "threshold": self.threshold,
            "C": None if np.isinf(self.C) else self.C,
            "fit": vars(self.fit_report) if self.fit_report else None,
        }

    @classmethod
    def from_dict(cls, data: dict) -> ScoreCombiner:
        cls.check_format(data)
        combiner = cls(threshold=data["threshold"], C=np.inf if data.get("C") is None else data["C"])
        combiner.vba_weight, combiner.sba_weight = data["vba_weight"], data["sba_weight"]
        combiner.intercept = data["intercept"]
        combiner.fit_report = CombinerFit(**data["fit"]) if data.get("fit") else None
        return combiner


def _safe(correlation, x: np.ndarray, y: np.ndarray) -> float:
    """A correlation, or NaN when one side is constant (undefined)."""
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(correlation(x, y)[0])
