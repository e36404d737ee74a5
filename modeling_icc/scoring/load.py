"""``load_scorer``: one entry point for the published model, local students and ``"lite"``."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from huggingface_hub import constants as hf_constants
from huggingface_hub.utils import HFValidationError, validate_repo_id

from ..utils.checkpoints import require_complete, without_load_report
from ..utils.errors import CheckpointError
from .base import ConcretenessScorer
from .lite import LiteScorer

if TYPE_CHECKING:  # torch and transformers are imported only when a neural model is loaded
    import torch
    from transformers import PreTrainedTokenizerBase

    from ..models.icc.modeling_icc import ICCForConcreteness

#: The published ICC student (Yanuka et al., 2024): DistilRoBERTa regression.
DEFAULT_MODEL_ID = "moranyanuka/icc"
LITE_MODEL_ID = "lite"
MINI_MODEL_ID = "mini"
#: Weight files that need unpickling, which can run arbitrary code: never loaded.
PICKLE_WEIGHT_PATTERNS = ("pytorch_model*.bin", "*.pt", "*.pth", "*.ckpt", "*.pkl")


class ModelNotAvailableError(OSError):
    """The requested checkpoint is neither on disk, in the HF cache, nor reachable."""


def _not_available_message(name: str, reason: str) -> str:
    return (
        f"Could not load the ICC model {name!r}: {reason}\n"
        f"  - To use it, download it once where the Hub is reachable: `hf download {name}` "
        "(it is then found in the Hugging Face cache), or pass a local directory that holds "
        "config.json, model.safetensors and the tokenizer files.\n"
        "  - To score without any download, use the embedded model: load_scorer('lite') "
        "or `icc score --model lite`."
    )


def load_scorer(
    name_or_path: str | os.PathLike | None = None,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
    batch_size: int | None = None,
    *,
    max_batch_tokens: int | None = None,
    progress: bool | None = None,
    compile: bool = False,
) -> ConcretenessScorer:
    """Load a concreteness scorer.

    ``name_or_path``: a Hub id (default: the published ``moranyanuka/icc``), a local
    directory with a saved student (ours or the published RoBERTa format), ``"mini"``
    (the pip-shipped MiniLM with the package's heads) or ``"lite"`` (pure Python): the
    two zero-download models. ``device`` defaults to CUDA
    when present; ``dtype`` to bf16 on GPUs and on CPUs with native bf16 (AMX,
    AVX512-BF16), fp32 on other CPUs (see ``devices.resolve_dtype``). Weights are read
    from safetensors only. ``compile=True`` runs the ``transformers`` module through
    ``torch.compile`` (dynamic shapes, frozen weights) instead of the default
    :class:`~modeling_icc.models.icc.fast_encoder.FastICCEncoder`: about a minute to start and, on
    this project's 2-core CPU, slower than the default
    (``benchmarks/student_throughput.py --compile``); untested on GPUs here.
    """
    name = os.fspath(name_or_path) if name_or_path is not None else DEFAULT_MODEL_ID
    if name == LITE_MODEL_ID:  # device, dtype and batching do not apply to the pure-Python model
        return LiteScorer()
    if name == MINI_MODEL_ID:  # pip-shipped MiniLM + heads in the package, nothing to download; compile: students only
        from .mini import MiniScorer

        return MiniScorer(
            device=device, dtype=dtype, batch_size=batch_size, max_batch_tokens=max_batch_tokens, progress=progress
        )
    from .devices import resolve_device, resolve_dtype
    from .neural import NeuralScorer

    resolved_device = resolve_device(device)
    resolved_dtype = resolve_dtype(dtype, resolved_device)
    local = Path(name).expanduser()
    if local.exists():
        check_model_directory(local, name)
        model, tokenizer = _load_student(str(local), name, resolved_dtype, local_files_only=True)
    elif not looks_like_hub_id(name):
        raise ModelNotAvailableError(
            f"Could not load the ICC model {name!r}: the local path {local.absolute()} does not exist"
        )
    else:
        try:
            model, tokenizer = _load_student(name, name, resolved_dtype, local_files_only=True)
        except ModelNotAvailableError:
            if hf_constants.HF_HUB_OFFLINE or not hub_reachable():
                raise
            model, tokenizer = _load_student(name, name, resolved_dtype, local_files_only=False)
    model.to(resolved_device)
    return NeuralScorer(
        model,
        tokenizer,
        model_id=name,
        batch_size=batch_size,
        max_batch_tokens=max_batch_tokens,
        progress=progress,
        compile=compile,
    )


def looks_like_hub_id(name: str) -> bool:
    """Whether ``name`` could be a Hub repository id (``org/name`` or ``name``), not a filesystem path."""
    if name.startswith((".", "/", "~")) or "\\" in name:
        return False
    try:
        validate_repo_id(name)
    except HFValidationError:
        return False
    return True


def check_model_directory(path: Path, name: str) -> None:
    """Refuse, with what is wrong, a local path that cannot hold a student we would load.

    A file or a folder without ``config.json`` is not a model; a folder whose only
    weights are pickles (``pytorch_model.bin``) is refused because unpickling can run code.
    """
    if not path.is_dir():
        raise ModelNotAvailableError(
            f"Could not load the ICC model {name!r}: {path} is a file, not a model directory "
            "(one with config.json, model.safetensors and the tokenizer files)"
        )
    if not (path / "config.json").is_file():
        raise ModelNotAvailableError(
            f"Could not load the ICC model {name!r}: the directory {path} has no config.json "
            "(a model directory holds config.json, model.safetensors and the tokenizer files)"
        )
    if (path / "model.safetensors").is_file() or (path / "model.safetensors.index.json").is_file():
        return
    pickles = sorted({found.name for pattern in PICKLE_WEIGHT_PATTERNS for found in path.glob(pattern)})
    if pickles:
        raise CheckpointError(
            f"The checkpoint {name!r} holds only pickle weights ({', '.join(pickles)}), which icc never loads: "
            "unpickling a file can run arbitrary code. Convert it once, in an environment where you trust the "
            f"file: `import modeling_icc, transformers; transformers.AutoModelForSequenceClassification"
            f".from_pretrained({str(path)!r}, use_safetensors=False).save_pretrained({str(path)!r})` writes "
            "model.safetensors (transformers < 5: add safe_serialization=True)"
        )
    raise CheckpointError(f"The checkpoint {name!r} has no weights: {path} holds no model.safetensors")


def _load_student(
    source: str, name: str, dtype: torch.dtype, *, local_files_only: bool
) -> tuple[ICCForConcreteness, PreTrainedTokenizerBase]:
    from safetensors import SafetensorError
    from transformers import AutoTokenizer

    from ..models.icc.modeling_icc import ICCForConcreteness

    try:
        tokenizer = AutoTokenizer.from_pretrained(source, use_fast=True, local_files_only=local_files_only)
        with without_load_report():
            # Mismatched shapes are listed in loading_info (and refused below) instead of raised without names.
            model, loading_info = ICCForConcreteness.from_pretrained(
                source,
                dtype=dtype,
                use_safetensors=True,
                local_files_only=local_files_only,
                output_loading_info=True,
                ignore_mismatched_sizes=True,
            )
    except OSError as error:
        if Path(source).is_dir():  # a local model directory with a file missing or unreadable
            raise CheckpointError(f"The checkpoint {name!r} could not be read: {_first_line(error)}") from error
        raise ModelNotAvailableError(_not_available_message(name, _first_line(error))) from error
    except (ValueError, RuntimeError, KeyError, SafetensorError) as error:
        raise CheckpointError(f"The checkpoint {name!r} could not be read: {_first_line(error)}") from error
    require_complete(name, loading_info)
    return model, tokenizer


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether a TCP connection to the Hub endpoint opens quickly.

    Checked before any download so that a machine without network fails in
    seconds instead of waiting through the Hub client's retries. Behind an HTTP
    proxy the check is skipped (the proxy decides).
    """
    if any(os.environ.get(key) for key in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return True
    endpoint = urlparse(hf_constants.ENDPOINT)
    port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    try:
        with socket.create_connection((endpoint.hostname, port), timeout=timeout):
            return True
    except OSError:
        return False


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
