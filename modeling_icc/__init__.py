"""icc: Image Caption Concreteness for Hugging Face.

Importing this package registers the student with ``AutoConfig``, ``AutoModel``
and ``AutoModelForSequenceClassification`` (``model_type="icc"``), so saved
students load through the Auto classes without ``trust_remote_code``.
"""

from transformers import AutoConfig, AutoModel, AutoModelForSequenceClassification

from .curation.selection import KeepRule
from .hub.measurement import metric_path
from .models.icc.configuration_icc import ICCConfig
from .models.icc.modeling_icc import ICCForConcreteness, ICCOutput
from .scoring.base import ConcretenessScorer
from .scoring.inputs import prepare_texts
from .scoring.lite import LiteScorer
from .scoring.load import DEFAULT_MODEL_ID, ModelNotAvailableError, load_scorer
from .scoring.neural import NeuralScorer
from .utils.lazy_exports import lazy_getattr
from .version import DISTRIBUTION, __version__

AutoConfig.register(ICCConfig.model_type, ICCConfig, exist_ok=True)
AutoModel.register(ICCConfig, ICCForConcreteness, exist_ok=True)
AutoModelForSequenceClassification.register(ICCConfig, ICCForConcreteness, exist_ok=True)
ICCConfig.register_for_auto_class()
ICCForConcreteness.register_for_auto_class("AutoModel")

#: Names imported on first use, so that ``import modeling_icc`` (and the ``icc`` command)
#: stays light: the teachers and pipeline need the ``[teachers]`` extra, and the
#: ``datasets`` helpers import ``datasets`` (about 1.5 s).
_LAZY_NAMES = {
    "add_icc_scores": "curation.engines.datasets",
    "filter_by_icc": "curation.engines.datasets",
    "SBAConfig": "teachers",
    "SBAForCaptionReconstruction": "teachers",
    "VBAPipeline": "teachers",
    "BERTScoreSimilarity": "teachers",
    "char_similarity": "teachers",
    "LengthStandardizer": "distillation",
    "ScoreCombiner": "distillation",
    "PipelineConfig": "distillation",
    "run_pipeline": "distillation",
}

__getattr__ = lazy_getattr(__name__, _LAZY_NAMES)

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
    "load_scorer",
    "metric_path",
    "__version__",
    "prepare_texts",
    *_LAZY_NAMES,
]
