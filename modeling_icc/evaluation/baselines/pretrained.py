"""Loading the baselines' pretrained parts (CLIP, causal LMs, text-to-image pipelines) by Hub id or path.

Same policy as :func:`modeling_icc.load_scorer`: a local directory or the
Hugging Face cache first, the Hub only when it is reachable, safetensors only,
and one clear :class:`~modeling_icc.scoring.load.ModelNotAvailableError` otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ...scoring.load import ModelNotAvailableError, hub_offline, hub_reachable

T = TypeVar("T")


def load_pretrained(loader: Callable[..., T], name: str | os.PathLike, **kwargs) -> T:
    """``loader(name, **kwargs)`` from disk or cache first, then from the Hub if it can be reached."""
    name = os.fspath(name)
    local = Path(name).expanduser()
    if local.exists():
        return loader(str(local), **kwargs)
    try:
        return loader(name, local_files_only=True, **kwargs)
    except OSError as error:
        if hub_offline() or not hub_reachable():
            raise ModelNotAvailableError(
                f"{name!r} is neither a local directory nor in the Hugging Face cache, and the Hub cannot be "
                f"reached ({str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__}). "
                f"Download it once where the Hub is reachable (`hf download {name}`) or pass a local directory."
            ) from error
    return loader(name, **kwargs)
