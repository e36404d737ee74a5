"""What the ``evaluate`` module computes: per-caption ICC scores and optional summaries.

``icc_metric/icc_metric.py`` is a thin ``evaluate.Measurement`` over :func:`compute_icc`,
so the module, the CLI and the Space share one implementation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from importlib import resources
from pathlib import Path

import numpy as np

from ..curation.columns import SCORE_QUANTILES
from ..curation.filter_plan import FilterPlan
from ..curation.selection import KeepRule, keep_mask
from ..scoring.base import ConcretenessScorer
from ..scoring.hardware import FLOAT32
from ..scoring.inputs import caption_list
from ..scoring.languages import caption_languages
from ..scoring.load import (
    DEFAULT_MODEL_ID,
    ZERO_DOWNLOAD_MODELS,
    ModelNotAvailableError,
    load_scorer,
    looks_like_hub_id,
    offline_alternatives,
)
from ..scoring.options import ScoringOptions

#: Accepted values of ``aggregation``; "all" means mean, median, std and quantiles.
AGGREGATIONS = ("mean", "median", "quantiles", "all")
#: The ``config_name`` evaluate gives a module loaded without one: it scores with the package's
#: default model (:data:`~modeling_icc.scoring.load.DEFAULT_MODEL_ID`, mini), as ``load_scorer()`` does.
DEFAULT_CONFIG = "default"


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


def model_for_config(config_name: str) -> str:
    """The model an ``evaluate.load(module, config_name)`` scores with, as evaluate's model-based
    modules (e.g. toxicity) choose theirs: ``"default"`` is the package's default model (mini,
    which ships in the package, so the module loaded without a name scores offline); any other
    name is passed to :func:`load_scorer` (``"lite"``, ``"mini"``, a Hub id such as the published
    student's).

    Local folders are refused here (evaluate builds a cache path from the config name); pass
    them per call as ``compute(..., model_id=FOLDER)``.
    """
    if config_name == DEFAULT_CONFIG:
        return DEFAULT_MODEL_ID
    if not looks_like_hub_id(config_name):
        raise ValueError(
            f"config_name {config_name!r} is not a model name: use {DEFAULT_CONFIG!r} ({DEFAULT_MODEL_ID}), "
            f"{offline_alternatives()} (shipped in the package) or a Hub id; pass a local folder as "
            "compute(..., model_id=FOLDER)"
        )
    return config_name


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
    missing or non-string captions and for captions in a language the model does not read),
    ``icc_model`` (the model that scored them) and ``icc_languages`` (each caption's language code,
    :mod:`~modeling_icc.scoring.languages`; ``None`` for a blank or non-string one). ``aggregation``
    adds ``icc_mean`` / ``icc_median`` / ``icc_std`` / ``icc_quantiles`` over the scored
    captions; ``threshold`` adds ``kept_fraction``, the share of all captions a
    ``score >= threshold`` filter keeps (NaN rows are never kept).

    ``model_id=None`` means the package's default model (:data:`DEFAULT_MODEL_ID`, mini). The model
    is never switched: one that cannot be loaded here raises :class:`ModelNotAvailableError` naming the
    offline models.
    """
    if aggregation is not None and aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {AGGREGATIONS} or None, got {aggregation!r}")
    if threshold is not None:  # the filters' own checks: a finite number in [0, 1]
        FilterPlan(rule=KeepRule(threshold=threshold))
    options = ScoringOptions(model_id or DEFAULT_MODEL_ID, device=device, dtype=dtype, batch_size=batch_size)
    options.check()  # an option the model would ignore is an error, as on the command line
    scorer = _scorer(options)
    scores = scorer.score(predictions, errors="nan")
    result: dict = {
        "icc_scores": scores.tolist(),
        "icc_model": scorer.model_id,
        "icc_languages": caption_languages(predictions),
    }
    if aggregation is not None:
        result.update(summarize(scores, aggregation))
    if threshold is not None:
        kept = keep_mask(scores, KeepRule(threshold=threshold))
        result["kept_fraction"] = float(kept.mean()) if kept.size else 0.0
    return result


def refuse_references(references: object) -> None:
    """ICC is text-only: it reads no references, so any given are refused instead of silently ignored."""
    if references is not None:
        raise ValueError("ICC scores captions alone: pass predictions=[...] and no references")


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
        values = [float("nan")] * len(SCORE_QUANTILES) if empty else np.quantile(valid, SCORE_QUANTILES).tolist()
        out["icc_quantiles"] = {f"p{round(q * 100)}": float(v) for q, v in zip(SCORE_QUANTILES, values, strict=True)}
    return out


def metric_options(options: ScoringOptions) -> ScoringOptions:
    """The options the module scores with: ``options``, in fp32 where the model runs on a CPU and no dtype is
    asked (where it runs is :meth:`ScoringOptions.execution`'s, the library's one decision; elsewhere the
    library's default: bf16 on GPUs).

    The library runs bf16 on CPUs that multiply it natively, which moves scores by up to about
    1e-3; the module scores few captions, so it pays for fp32 and gives the same numbers on every CPU.
    """
    if options.dtype is None and options.execution().device == "cpu":
        return replace(options, dtype=FLOAT32)
    return options


def _scorer(options: ScoringOptions) -> ConcretenessScorer:
    """The scorer of :func:`metric_options`, kept for the process; never another model."""
    options = metric_options(options)
    try:
        return load_scorer(options.model, options.device, options.dtype, options.batch_size, cache=True)
    except ModelNotAvailableError as error:
        offline = next(iter(ZERO_DOWNLOAD_MODELS))
        raise ModelNotAvailableError(
            f"{error}\n  - With evaluate: evaluate.load(<this module>, {offline!r}) or "
            f"compute(..., model_id={offline!r}) scores offline. The module never switches models on its "
            "own: the same call gives the same numbers everywhere, or this error."
        ) from None
