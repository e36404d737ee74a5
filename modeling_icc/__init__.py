"""icc: Image Caption Concreteness for Hugging Face.

Importing this package registers the student with ``AutoConfig``, ``AutoModel``
and ``AutoModelForSequenceClassification`` (``model_type="icc"``), so saved
students load through the Auto classes without ``trust_remote_code``.
"""

from transformers import AutoConfig, AutoModel, AutoModelForSequenceClassification

from .configuration_icc import ICCConfig
from .hf_datasets import add_icc_scores, filter_by_icc
from .inputs import prepare_texts
from .lite.scorer import LiteScorer
from .loading import DEFAULT_MODEL_ID, ModelNotAvailableError, load_scorer
from .measurement import metric_path
from .modeling_icc import ICCForConcreteness, ICCOutput
from .neural_scorer import NeuralScorer
from .scorer import ConcretenessScorer
from .selection import KeepRule
from .version import DISTRIBUTION, __version__

AutoConfig.register(ICCConfig.model_type, ICCConfig, exist_ok=True)
AutoModel.register(ICCConfig, ICCForConcreteness, exist_ok=True)
AutoModelForSequenceClassification.register(ICCConfig, ICCForConcreteness, exist_ok=True)
ICCConfig.register_for_auto_class()
ICCForConcreteness.register_for_auto_class("AutoModel")

#: Teacher and pipeline names, imported on first use so that ``import modeling_icc`` stays light
#: for users of the scorer alone (their dependencies live in the ``[teachers]`` extra).
_LAZY_NAMES = {
    "SBAConfig": "teachers",
    "SBAForCaptionReconstruction": "teachers",
    "VBAPipeline": "teachers",
    "BERTScoreSimilarity": "teachers",
    "char_similarity": "teachers",
    "LengthStandardizer": "pipeline",
    "ScoreCombiner": "pipeline",
    "PipelineConfig": "pipeline",
    "run_pipeline": "pipeline",
}


def __getattr__(name: str):
    if name in _LAZY_NAMES:
        from importlib import import_module

        return getattr(import_module(f".{_LAZY_NAMES[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_MODEL_ID",
    "DISTRIBUTION",
    "ConcretenessScorer",
    "ICCConfig",
    "ICCForConcreteness",
    "ICCOutput",
    "KeepRule",
    "LiteScorer",
    "ModelNotAvailableError",
    "NeuralScorer",
    "add_icc_scores",
    "filter_by_icc",
    "load_scorer",
    "metric_path",
    "__version__",
    "prepare_texts",
    *_LAZY_NAMES,
]
