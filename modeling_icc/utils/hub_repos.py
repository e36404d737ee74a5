"""Small model repositories (config and a few files) fetched from the Hub cache, or the Hub, by name."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

CONFIG_FILE = "config.json"


def fetch_repo(
    repo_id: str, files: Sequence[str], revision: str | None = None, *, local_files_only: bool = False
) -> Path | None:
    """The folder holding ``files`` of ``repo_id`` (the cache first when ``local_files_only``), or
    ``None`` when they cannot be fetched here."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError

    try:
        return Path(
            snapshot_download(repo_id, revision=revision, allow_patterns=list(files), local_files_only=local_files_only)
        )
    except (HFValidationError, OSError, ValueError):
        return None


def model_type(folder: str | os.PathLike) -> str | None:
    """``model_type`` of ``folder/config.json`` (``None`` without a readable one)."""
    try:
        return json.loads((Path(folder) / CONFIG_FILE).read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError, AttributeError):
        return None
