"""lite as a model repository (``hub_cards/icc-lite``, ``ORG/icc-lite``): ``config.json``, the linear
model's weights (``lite_model.json``), its lexicon (``lexicon.tsv.gz``) and the lexicon's sources."""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path

from ...utils.hub_repos import CONFIG_FILE, fetch_repo, model_type
from .lexicon import LEXICON_FILE, SOURCES_FILE, Lexicon, read_lexicon
from .modeling_lite import MODEL_FILE, LiteModel

#: ``model_type`` in a lite folder's ``config.json``.
LITE_MODEL_TYPE = "icc_lite"
#: The shipped files a lite repository holds as they are.
DATA_FILES = (MODEL_FILE, LEXICON_FILE, SOURCES_FILE)


def folder_files() -> dict[str, bytes]:
    """The files of a lite repository, by name, from the files shipped in the package."""
    config = {"model_type": LITE_MODEL_TYPE, "model_file": MODEL_FILE, "lexicon_file": LEXICON_FILE}
    data = resources.files("modeling_icc.models.lite") / "data"
    return {
        CONFIG_FILE: (json.dumps(config, indent=2, sort_keys=True) + "\n").encode("utf-8"),
        **{name: (data / name).read_bytes() for name in DATA_FILES},
    }


def is_lite_folder(folder: str | os.PathLike) -> bool:
    folder = Path(folder)
    return model_type(folder) == LITE_MODEL_TYPE and all((folder / name).is_file() for name in DATA_FILES)


def load_folder(folder: str | os.PathLike) -> tuple[Lexicon, LiteModel]:
    """The lexicon and linear model of the lite repository ``folder``."""
    folder = Path(folder)
    return read_lexicon(folder / LEXICON_FILE), LiteModel.load(folder / MODEL_FILE)


def download_repo(repo_id: str, revision: str | None = None, local_files_only: bool = False) -> Path | None:
    """The files of the Hub repository ``repo_id`` when it is a lite repository that can be fetched here."""
    folder = fetch_repo(repo_id, (CONFIG_FILE, *DATA_FILES), revision, local_files_only=local_files_only)
    return folder if folder is not None and is_lite_folder(folder) else None
