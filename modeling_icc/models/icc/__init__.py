"""The ICC student: ICCConfig, ICCForConcreteness and its fast CPU/GPU encoder.

Importing this package registers the student with ``AutoConfig``, ``AutoModel`` and
``AutoModelForSequenceClassification`` (``model_type="icc"``) and for Hub custom code
(``auto_map``), so saved students load through the Auto classes without
``trust_remote_code``. ``import modeling_icc`` imports it as soon as ``transformers``
is imported (see ``modeling_icc/__init__.py``).
"""

from transformers import AutoConfig, AutoModel, AutoModelForSequenceClassification

from .configuration_icc import ICCConfig
from .modeling_icc import ICCForConcreteness, ICCOutput

AutoConfig.register(ICCConfig.model_type, ICCConfig, exist_ok=True)
AutoModel.register(ICCConfig, ICCForConcreteness, exist_ok=True)
AutoModelForSequenceClassification.register(ICCConfig, ICCForConcreteness, exist_ok=True)
ICCConfig.register_for_auto_class()
ICCForConcreteness.register_for_auto_class("AutoModel")

__all__ = ["ICCConfig", "ICCForConcreteness", "ICCOutput"]
