"""The lite model's parameters: a linear model on standardized features, in logit space.

``logit = bias + sum_f weight_f * (x_f - mean_f) / scale_f`` and ``score = sigmoid(logit)``.
The weights come from a ridge regression on the 0-3 human labels, rescaled by a
logistic calibration so that a score of 0.5 separates the abstract (0-1) and
concrete (2-3) halves of the annotation (see :mod:`modeling_icc.training.fit_lite`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from ...utils.atomic_files import write_text
from .features import FEATURE_NAMES

MODEL_FILE = "lite_model.json"


@dataclass(frozen=True)
class LiteModel:
    feature_names: tuple[str, ...]
    means: tuple[float, ...]
    scales: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    report: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if tuple(self.feature_names) != FEATURE_NAMES:
            raise ValueError(
                "lite model parameters do not match this version's features; refit with "
                "`python training_scripts/fit_lite.py`"
            )

    @property
    def coefficients(self) -> np.ndarray:
        """Per-unit weights: ``weight / scale`` for each raw feature."""
        return np.asarray(self.weights) / np.asarray(self.scales)

    @property
    def intercept(self) -> float:
        """The logit of a caption whose raw features are all zero."""
        return float(self.bias - self.coefficients @ np.asarray(self.means))

    def logits(self, features: np.ndarray) -> np.ndarray:
        return features @ self.coefficients + self.intercept

    def save(self, path: str | Path) -> None:
        payload = asdict(self)
        write_text(path, json.dumps(payload, indent=2) + "\n")  # atomic: a link at ``path`` is replaced

    @classmethod
    def load(cls, path: str | Path) -> LiteModel:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(**{key: tuple(v) if isinstance(v, list) else v for key, v in payload.items()})


@lru_cache(maxsize=1)
def default_lite_model() -> LiteModel:
    """The parameters shipped with the package."""
    with resources.as_file(resources.files("modeling_icc.models.lite") / "data" / MODEL_FILE) as path:
        return LiteModel.load(path)
