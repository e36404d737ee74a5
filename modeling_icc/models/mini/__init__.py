"""The ``mini`` model: the first 4 layers of the pip-shipped all-MiniLM-L6-v2 (frozen) and two linear heads.

Importing this package registers it with ``AutoConfig`` and ``AutoModel`` (``model_type="icc_mini"``),
so a folder written by ``MiniICCModel.save_pretrained`` loads through ``AutoModel.from_pretrained``.
``import modeling_icc`` imports it as soon as ``transformers`` is imported (see ``modeling_icc/__init__.py``).
Scoring goes through ``load_scorer("mini")`` (``modeling_icc/scoring/mini.py``); the heads are refitted by
``training_scripts/fit_mini.py`` (``fit.py``).
"""

from transformers import AutoConfig, AutoModel

from .configuration_mini import MiniICCConfig
from .modeling_mini import MiniICCModel, MiniICCOutput

AutoConfig.register(MiniICCConfig.model_type, MiniICCConfig, exist_ok=True)
AutoModel.register(MiniICCConfig, MiniICCModel, exist_ok=True)

__all__ = ["MiniICCConfig", "MiniICCModel", "MiniICCOutput"]
