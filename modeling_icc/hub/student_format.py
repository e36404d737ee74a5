"""Our checkpoint format for a student: ``model.safetensors``, ``config.json`` with ``model_type: icc``
and an ``auto_map`` for every Auto class (so ``trust_remote_code`` users need no package), the modeling
code files, the tokenizer.

``convert.py`` writes students in it; ``icc cards --all`` writes its weight-free part (config and code)
for the committed ``hub_cards/icc-distilroberta``; ``fresh_process.py`` runs a folder's code only when it
is exactly the code written here.
"""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import PreTrainedTokenizerBase
from transformers.dynamic_module_utils import custom_object_save

from ..models.icc import ICCConfig, ICCForConcreteness
from ..utils.atomic_files import files_moved_into


def save_student(model: ICCForConcreteness, tokenizer: PreTrainedTokenizerBase, folder: Path) -> Path:
    """Weights (safetensors), config with the full ``auto_map`` (``ICCConfig`` carries it), code files and tokenizer.

    transformers writes each file by its name: into a scratch folder, whose files are then renamed into
    ``folder`` (a link there is replaced, never written through)."""
    with files_moved_into(folder) as scratch:
        model.save_pretrained(scratch, safe_serialization=True)
        tokenizer.save_pretrained(scratch)
    return folder


def write_student_skeleton(folder: Path, config: ICCConfig | None = None) -> list[Path]:
    """What :func:`save_student` writes apart from the weights and tokenizer, for ``config``
    (default: the DistilRoBERTa-base shape of the published student): ``config.json`` and the code."""
    with torch.device("meta"):  # the classes' code is saved, no weights are made
        model = ICCForConcreteness(config or ICCConfig())
    model.config.architectures = [type(model).__name__]
    model.config.dtype = torch.float32
    folder.mkdir(parents=True, exist_ok=True)
    written = custom_object_save(model, folder, config=model.config)
    model.config.save_pretrained(folder)
    return [folder / "config.json", *written]
