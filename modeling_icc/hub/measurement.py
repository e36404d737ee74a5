"""What the ``evaluate`` module computes: per-caption ICC scores and optional summaries.

``icc_metric/icc_metric.py`` is a thin ``evaluate.Measurement`` over :func:`compute_icc`,
so the module, the CLI and the Space share one implementation.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import numpy as np

from ..curation.selection import KeepRule, keep_mask
from ..scoring.inputs import caption_list
from ..scoring.load import DEFAULT_MODEL_ID, LITE_MODEL_ID, ModelNotAvailableError
from ..scoring.scorer_cache import cached_scorer, with_batch_size

#: Accepted values of ``aggregation``; "all" means mean, median, std and quantiles.
AGGREGATIONS = ("mean", "median", "quantiles", "all")
#: Quantiles reported by ``aggregation="quantiles"`` (and "all").
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def metric_path() -> str:
    """Folder of the installed ``evaluate`` module, for ``evaluate.load(metric_path())``.

    A ``str``, because ``evaluate.load`` takes string paths only.
    """
    return str(resources.files("icc_metric"))


def module_script(folder: str | Path) -> Path:
    """The measurement script in ``folder``: ``icc_metric.py`` here, ``<space name>.py`` on a Space.

    evaluate needs the script's name to match its folder or Space, so the name changes
    when the module is pushed; this finds it either way.
    """
    scripts = [path for path in Path(folder).glob("*.py") if path.name not in ("app.py", "__init__.py")]
    if len(scripts) != 1:
        raise FileNotFoundError(f"expected one measurement script in {folder}, found {sorted(p.name for p in scripts)}")
    return scripts[0]


def as_predictions(predictions: object) -> list[str]:
    """``predictions`` as the ``evaluate`` module may store them: captions, and ``""`` for non-strings.

    evaluate casts every item to its ``string`` feature (``5`` becomes ``"5"``, a score
    for a caption nobody wrote) and iterates a bare string character by character. The
    module applies this first: a bare string, bytes, a dict or a set is refused with
    ``TypeError``, and a non-string item becomes a blank caption, which scores NaN,
    as in ``score(..., errors="nan")``.
    """
    return [as_prediction(item) for item in caption_list(predictions)]


def as_prediction(prediction: object) -> str:
    """One caption for the ``evaluate`` module: itself if it is a string, else blank (scored NaN)."""
    return prediction if isinstance(prediction, str) else ""


def compute_icc(
    predictions: Sequence[str | None],
    model_id: str | None = None,
    batch_size: int | None = None,
    device: str | None = None,
    dtype: str | None = None,
    aggregation: str | None = None,
    threshold: float | None = None,
) -> dict:
    """Score ``predictions`` (captions) and summarize on request.

    Returns ``icc_scores`` (one float per caption, clipped to [0, 1], NaN for blank,
    missing or non-string captions) and ``icc_model`` (the model that scored them). ``aggregation``
    adds ``icc_mean`` / ``icc_median`` / ``icc_std`` / ``icc_quantiles`` over the scored
    captions; ``threshold`` adds ``kept_fraction``, the share of all captions a
    ``score >= threshold`` filter keeps (NaN rows are never kept).

    ``model_id=None`` means the published student, falling back to ``"lite"`` with a
    warning when it cannot be loaded here.
    """
    if aggregation is not None and aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {AGGREGATIONS} or None, got {aggregation!r}")
    scorer = with_batch_size(_scorer(model_id, device, dtype), batch_size)
    scores = scorer.score(predictions, errors="nan")
    result: dict = {"icc_scores": scores.tolist(), "icc_model": scorer.model_id}
    if aggregation is not None:
        result.update(summarize(scores, aggregation))
    if threshold is not None:
        kept = keep_mask(scores, KeepRule(threshold=threshold))
        result["kept_fraction"] = float(kept.mean()) if kept.size else 0.0
    return result


def summarize(scores: np.ndarray, aggregation: str) -> dict:
    """Summary statistics of the non-NaN ``scores`` (NaN when none is scored)."""
    valid = np.asarray(scores, dtype=np.float64)
    valid = valid[~np.isnan(valid)]
    empty = valid.size == 0
    out: dict = {}
    if aggregation in ("mean", "all"):
        out["icc_mean"] = float("nan") if empty else float(valid.mean())
    if aggregation in ("median", "all"):
        out["icc_median"] = float("nan") if empty else float(np.median(valid))
    if aggregation == "all":
        out["icc_std"] = float("nan") if empty else float(valid.std())
    if aggregation in ("quantiles", "all"):
        values = [float("nan")] * len(QUANTILES) if empty else np.quantile(valid, QUANTILES).tolist()
        out["icc_quantiles"] = {f"p{round(q * 100)}": float(v) for q, v in zip(QUANTILES, values, strict=True)}
    return out


def _scorer(model_id: str | None, device: str | None, dtype: str | None):
    if model_id is not None:
        return cached_scorer(model_id, device, dtype)
    try:
        return cached_scorer(DEFAULT_MODEL_ID, device, dtype)
    except ModelNotAvailableError:
        warnings.warn(
            f"{DEFAULT_MODEL_ID} is not available here; scoring with the embedded {LITE_MODEL_ID!r} model. "
            f"Pass model_id={LITE_MODEL_ID!r} to silence this warning.",
            stacklevel=3,
        )
        return cached_scorer(LITE_MODEL_ID)
