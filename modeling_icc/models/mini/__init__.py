"""The ``mini`` model: the first 4 layers of the pip-shipped all-MiniLM-L6-v2 (frozen) and two linear heads.

Importing ``MiniICCModel`` (or ``transformers``, once ``modeling_icc`` is imported) registers it with
``AutoConfig`` and ``AutoModel`` (``model_type="icc_mini"``), so a folder written by
``MiniICCModel.save_pretrained`` loads through ``AutoModel.from_pretrained``. The names are imported on
first use: the scorer's fast path (``files.py``, ``heads.py``, ``fast_encoder.py``) needs no
``transformers``. Scoring goes through ``load_scorer("mini")`` (``modeling_icc/scoring/mini.py``); the heads
are refitted by ``training_scripts/fit_mini.py`` (``modeling_icc/training/fit_mini.py``).
"""

from ...utils.lazy_exports import lazy_getattr

_LAZY_NAMES = {
    "MiniICCConfig": "configuration_mini",
    "MiniICCModel": "modeling_mini",
    "MiniICCOutput": "modeling_mini",
}

__getattr__ = lazy_getattr(__name__, _LAZY_NAMES)

__all__ = list(_LAZY_NAMES)
