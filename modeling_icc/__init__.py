"""icc: Image Caption Concreteness for Hugging Face.

Public names are imported on first use (PEP 562), so ``import modeling_icc`` and the
``icc`` command start in a fraction of a second: torch and transformers are imported
only by the code that needs them. The student is registered with ``AutoConfig``,
``AutoModel`` and ``AutoModelForSequenceClassification`` (``model_type="icc"``), and the
mini model with ``AutoConfig`` and ``AutoModel`` (``model_type="icc_mini"``), as soon
as ``transformers`` is imported, before or after this package, so saved models load
through the Auto classes without ``trust_remote_code``.
"""

import sys
from importlib import import_module

from .utils.after_import import when_imported
from .utils.lazy_exports import lazy_getattr
from .version import DISTRIBUTION, __version__

#: Public name -> the submodule that defines it, imported on first use.
_LAZY_NAMES = {
    "ICCConfig": "models.icc",
    "ICCForConcreteness": "models.icc",
    "ICCOutput": "models.icc",
    "MiniICCConfig": "models.mini",
    "MiniICCModel": "models.mini",
    "KeepRule": "curation.selection",
    "FilterOptions": "curation.filter_options",
    "JobSpec": "curation.job_spec",
    "ScoringOptions": "scoring.options",
    "run_job": "curation.engines.run",
    "ConcretenessScorer": "scoring.base",
    "prepare_texts": "scoring.inputs",
    "LiteScorer": "scoring.lite",
    "NeuralScorer": "scoring.neural",
    "MiniScorer": "scoring.mini",
    "DEFAULT_MODEL_ID": "scoring.load",
    "PUBLISHED_MODEL_ID": "scoring.load",
    "ModelNotAvailableError": "scoring.load",
    "load_scorer": "scoring.load",
    "metric_path": "hub.measurement",
    "add_icc_scores": "curation.engines.datasets",
    "filter_by_icc": "curation.engines.datasets",
    "SBAConfig": "teachers",
    "SBAForCaptionReconstruction": "teachers",
    "VBAPipeline": "teachers",
    "BERTScoreSimilarity": "teachers",
    "char_similarity": "teachers",
    "LengthStandardizer": "training.distillation",
    "ScoreCombiner": "training.distillation",
    "PipelineConfig": "training.distillation",
    "run_pipeline": "training.distillation",
}

__getattr__ = lazy_getattr(__name__, _LAZY_NAMES)


def _register_models() -> None:
    """Import the modules that register the student and mini with the Auto classes.

    When ``transformers`` is first imported by one of those models' own modules (importing
    ``models.mini.configuration_mini`` on its own), that model cannot be imported yet: it is half
    initialized, and registers itself when its import completes. It is skipped, not reported.
    """
    for name in ("models.icc", "models.mini.modeling_mini"):
        try:
            import_module(f".{name}", __name__)
        except ImportError:
            if not _models_initializing():
                raise


def _models_initializing() -> bool:
    """Whether a module of ``models/`` is being imported right now (``importlib`` marks its spec)."""
    prefix = f"{__name__}.models."
    return any(
        getattr(getattr(module, "__spec__", None), "_initializing", False)
        for name, module in list(sys.modules.items())
        if name.startswith(prefix)
    )


when_imported("transformers", _register_models)

__all__ = ["DISTRIBUTION", "__version__", *_LAZY_NAMES]
