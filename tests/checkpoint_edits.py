"""Broken copies of checkpoints: the tests of strict loading edit one weights or JSON file of a saved model."""

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from safetensors.torch import load_file, save_file


def copy_checkpoint(source, target, edit=None, weights: str = "model.safetensors") -> Path:
    """A copy of the folder ``source`` whose ``weights`` file (a path inside it) went through ``edit(dict) -> dict``."""
    shutil.copytree(source, target)
    target = Path(target)
    if edit is not None:
        tensors = edit(load_file(target / weights))
        save_file(tensors, target / weights, metadata={"format": "pt"})
    return target


def without(name: str) -> Callable[[dict], dict]:
    """An ``edit`` that removes the tensor ``name`` (which must be there)."""

    def edit(tensors: dict) -> dict:
        assert name in tensors, sorted(tensors)
        return {key: tensor for key, tensor in tensors.items() if key != name}

    return edit


def with_config(folder, file: str = "config.json", **changes) -> Path:
    """``folder`` with the JSON file ``file`` (in place) updated by ``changes``."""
    path = Path(folder) / file
    path.write_text(json.dumps({**json.loads(path.read_text(encoding="utf-8")), **changes}), encoding="utf-8")
    return Path(folder)
