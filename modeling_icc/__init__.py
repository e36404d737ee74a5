"""icc: Image Caption Concreteness for Hugging Face.

Public names are imported on first use (PEP 562), so ``import modeling_icc`` and the
``icc`` command start in a fraction of a second: torch and transformers are imported
only by the code that needs them. The student is registered with ``AutoConfig``,
``AutoModel`` and ``AutoModelForSequenceClassification`` (``model_type="icc"``), and the
mini model with ``AutoConfig`` and ``AutoModel`` (``model_type="icc_mini"``), as soon
as ``transformers`` is imported, before or after this package, so saved models load
through the Auto classes without ``trust_remote_code``.
"""

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
    "ConcretenessScorer": "scoring.base",
    "prepare_texts": "scoring.inputs",
    "LiteScorer": "scoring.lite",
    "NeuralScorer": "scoring.neural",
    "MiniScorer": "scoring.mini",
    "DEFAULT_MODEL_ID": "scoring.load",
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

when_imported(
    "transformers", lambda: [import_module(f".models.{name}", __name__) for name in ("icc", "mini.modeling_mini")]
)

__all__ = ["DISTRIBUTION", "__version__", *_LAZY_NAMES]
