"""A mini repository (``repository.py``: config, heads, the base encoder by Hub id) loaded as the torch
model (torch is imported only then)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .files import HEADS_FILE
from .repository import base_folder

if TYPE_CHECKING:
    from .modeling_mini import MiniICCModel


def load_folder(folder: str | os.PathLike, *, local_files_only: bool = False) -> tuple[MiniICCModel, Path]:
    """The model of the mini repository ``folder`` and the folder of its base encoder (for the tokenizer)."""
    from .modeling_mini import MiniICCModel  # torch: imported only when the model is built

    base = base_folder(folder, local_files_only=local_files_only)
    return MiniICCModel.from_base_and_heads(Path(folder) / HEADS_FILE, base), base
