"""``load_scorer``: the one way to get a scorer, for the published model, local students and
the zero-download models, with an explicit, reported fallback and an optional process cache.

A name is found once (:func:`find_model`: a model shipped in the package, a local folder or a Hub id, and
its ``model_type``); one entry of :data:`LOADERS`, keyed by that type, builds its scorer on the device,
dtype and runtime :func:`~.execution.resolve_execution` decides once per load.

huggingface_hub is imported inside the functions that need it: it costs built-in models about 0.1 s of
start-up, and it reads its progress-bar switch once, when imported, which the CLI sets only as a command
starts (``cli/main.library_bars_off``)."""

from __future__ import annotations

import copy
import difflib
import os
import socket
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from ..models.lite import folder as lite_folder
from ..models.mini.files import HEADS_FILE, MINI_MODEL_TYPE
from ..models.mini.folder import load_folder
from ..models.mini.repository import base_folder, download_repo, is_mini_folder
from ..utils.checkpoints import (
    CODE_MAP_FILES,
    SAFE_WEIGHTS,
    SAFE_WEIGHTS_INDEX,
    load_complete,
    refuse_remote_code,
    require_finite,
    require_fit,
    safetensors_files,
    unusable_config,
)
from ..utils.errors import CheckpointError
from ..utils.hub_repos import CONFIG_FILE, fetch_repo, model_type
from .arguments import check_arguments
from .base import BATCH_SETTINGS, ConcretenessScorer
from .execution import (
    LITE_RUNTIMES,
    MINI_RUNTIMES,
    ONNXRUNTIME,
    PYTHON,
    STUDENT_RUNTIMES,
    Execution,
    resolve_execution,
)
from .lite import LiteScorer

if TYPE_CHECKING:  # torch and transformers are imported only when a neural model is loaded
    import torch
    from transformers import PreTrainedTokenizerBase

    from ..models.icc.configuration_icc import ICCConfig
    from ..models.icc.modeling_icc import ICCForConcreteness

#: The published ICC student (Yanuka et al., 2024): DistilRoBERTa regression, on the Hub (a download).
PUBLISHED_MODEL_ID = "moranyanuka/icc"
LITE_MODEL_ID = "lite"
MINI_MODEL_ID = "mini"
#: The model used wherever the caller names none (``load_scorer()``, the ``icc`` commands without
#: ``--model``, the data engines, the Space, the ``evaluate`` module): mini, which ships in the
#: package and works offline. The published student is used only by name (:data:`PUBLISHED_MODEL_ID`).
DEFAULT_MODEL_ID = MINI_MODEL_ID
#: The :data:`LOADERS` key of every model that is neither mini nor lite: a student (``model_type`` ``icc``,
#: as ``ICCConfig`` writes it; the published RoBERTa format; or none, where the loader says what is missing).
STUDENT_MODEL_TYPE = "icc"
#: Models that ship inside the package (no download): name -> model type (its :data:`LOADERS` key).
ZERO_DOWNLOAD_MODELS: dict[str, str] = {MINI_MODEL_ID: MINI_MODEL_TYPE, LITE_MODEL_ID: lite_folder.LITE_MODEL_TYPE}
#: Weight files that need unpickling, which can run arbitrary code: never loaded.
PICKLE_WEIGHT_PATTERNS = ("pytorch_model*.bin", "*.pt", "*.pth", "*.ckpt", "*.pkl")
#: What functions that take a model accept: anything :func:`load_scorer` loads, or a ready scorer.
ModelSpec = str | os.PathLike | ConcretenessScorer | None
#: The files of a Hub student checked before it loads: those that can ask for code, and the weights.
STUDENT_CHECK_FILES = (*CODE_MAP_FILES, SAFE_WEIGHTS, SAFE_WEIGHTS_INDEX, "model-*.safetensors")
#: Config fields that size the student's network: each must be a positive whole number.
SIZE_FIELDS = (
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "max_position_embeddings",
    "type_vocab_size",
)


def named_model_id(model: ModelSpec) -> str | None:
    """The ``model_id`` scores of ``model`` record (``None``: no model named), without loading it."""
    if model is None:
        return None
    return model.model_id if isinstance(model, ConcretenessScorer) else os.fspath(model)


class ModelNotAvailableError(OSError):
    """The requested checkpoint is neither on disk, in the HF cache, nor reachable."""


class ModelFallbackWarning(UserWarning):
    """A scorer was loaded from the caller's ``fallback`` model because the requested one is not available."""


def offline_alternatives() -> str:
    """The zero-download models, as a user would name them: ``'lite'`` (or ``'lite', 'mini'``)."""
    return ", ".join(repr(name) for name in ZERO_DOWNLOAD_MODELS)


def _not_available_message(name: str, reason: str) -> str:
    offline = next(iter(ZERO_DOWNLOAD_MODELS))
    return (
        f"Could not load the ICC model {name!r}: {reason}\n"
        f"  - To use it, download it once where the Hub is reachable: `hf download {name}` "
        "(it is then found in the Hugging Face cache), or pass a local directory that holds "
        "config.json, model.safetensors and the tokenizer files.\n"
        f"  - To score without any download, use a model shipped in the package ({offline_alternatives()}): "
        f"load_scorer({offline!r}) or `icc score --model {offline}`; to use one only when this model cannot "
        f"be loaded, load_scorer({name!r}, fallback={offline!r}) or `--fallback {offline}` (reported, and "
        "recorded as the model used)."
    )


def load_scorer(
    name_or_path: ModelSpec = None,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
    batch_size: int | None = None,
    *,
    fallback: str | os.PathLike | None = None,
    cache: bool = False,
    max_batch_tokens: int | None = None,
    progress: bool | None = None,
    compile: bool = False,
    tokenize_workers: int | None = None,
) -> ConcretenessScorer:
    """Load a concreteness scorer.

    ``name_or_path``: the name of a model shipped in the package (:data:`ZERO_DOWNLOAD_MODELS`:
    ``"mini"``, the pip-shipped MiniLM with the package's heads, and ``"lite"``, pure Python), a Hub
    id (such as the published student, :data:`PUBLISHED_MODEL_ID`), a local directory with a saved
    student (ours or the published RoBERTa format), or a ready :class:`ConcretenessScorer`, returned
    as is (so functions that take a model take either). ``None`` (the default) is
    :data:`DEFAULT_MODEL_ID`, mini: no download, so it loads offline. A near miss of a shipped name
    (``"minii"``) is refused with the name it resembles.
    ``device`` defaults to CUDA when present; ``dtype`` to bf16 on GPUs and on CPUs with
    native bf16 (AMX, AVX512-BF16), fp32 on other CPUs (see ``hardware.default_dtype``). Without torch
    (the core install) mini runs in fp32 on ONNX Runtime on any CPU, and a request only torch can run (a
    GPU, bf16, a student) is a ``UserInputError`` naming ``pip install "icc-concreteness[torch]"``.
    Weights are read from safetensors only, and no code shipped with a checkpoint ever runs.
    Every argument's type and range is checked first (``TypeError``, ``ValueError``; see ``arguments.py``).

    ``fallback``: a model to load instead when ``name_or_path`` is not available here
    (:class:`ModelNotAvailableError`: not on disk, not in the HF cache, Hub unreachable);
    never used for a broken checkpoint (:class:`CheckpointError`). Nothing falls back unless
    the caller names the model, and every fallback is reported with a
    :class:`ModelFallbackWarning` naming both models; the scorer's ``model_id`` names the
    model actually used.

    ``cache=True`` keeps the loaded model for the rest of the process, keyed by model,
    fallback, device, dtype and runtime (``None`` resolved as :func:`planned_execution` resolves it)
    and ``compile``: the evaluate module, the Space and the data engines call this once per batch
    or click and load each model once. ``batch_size``, ``max_batch_tokens`` and ``progress`` then
    apply to a shallow copy that shares the cached weights.

    ``compile=True`` runs the ``transformers`` module through ``torch.compile`` (dynamic
    shapes, frozen weights) instead of the default
    :class:`~modeling_icc.models.icc.fast_encoder.FastICCEncoder`: about a minute to start
    and, on this project's 2-core CPU, slower than the default
    (``benchmarks/speed/student_throughput.py --compile``); untested on GPUs here.

    ``tokenize_workers``: processes that tokenize for the neural models (``None``: every usable core
    when the model runs on a GPU, where one process cannot tokenize as fast as the model scores; 0 on a
    CPU, whose cores run the model; 0 always tokenizes in this process). Like ``batch_size``, it applies
    per call, also to a cached model. Lite ignores it.
    """
    check_arguments(**locals())  # every argument, as named in the signature, before anything is read
    if isinstance(name_or_path, ConcretenessScorer):
        return name_or_path
    name = os.fspath(name_or_path) if name_or_path is not None else DEFAULT_MODEL_ID
    fallback = os.fspath(fallback) if fallback is not None else None
    batch = dict(
        batch_size=batch_size, max_batch_tokens=max_batch_tokens, progress=progress, tokenize_workers=tokenize_workers
    )
    if cache:
        scorer, notice = _cached(_cache_key(name, fallback, device, dtype, compile), tuple(batch.items()))
    else:
        scorer, notice = _load_with_fallback(name, fallback, device=device, dtype=dtype, compile=compile, **batch)
    if notice:
        warnings.warn(notice, ModelFallbackWarning, stacklevel=2)
    return scorer


def _load_with_fallback(name: str, fallback: str | None, **options) -> tuple[ConcretenessScorer, str | None]:
    """The scorer for ``name``, else for ``fallback``, with the notice that reports the switch."""
    try:
        return _load(name, **options), None
    except ModelNotAvailableError as error:
        if fallback is None or fallback == name:
            raise
        reason = str(error).splitlines()[0].removeprefix(f"Could not load the ICC model {name!r}: ").rstrip(".")
        try:
            scorer = _load(fallback, **options)
        except ModelNotAvailableError as fallback_error:
            raise ModelNotAvailableError(
                f"Could not load the ICC model {name!r} ({reason}) nor its fallback: {fallback_error}"
            ) from error
        return scorer, (
            f"the ICC model {name!r} cannot be loaded here ({reason}); "
            f"scoring with the fallback model {scorer.model_id!r} instead"
        )


def _load(
    name: str,
    *,
    device: str | torch.device | None,
    dtype: str | torch.dtype | None,
    compile: bool,
    **batch: int | bool | None,
) -> ConcretenessScorer:
    """The scorer for ``name``: found once, its runtime decided once, built by its type's loader;
    ``batch``: the :data:`~.base.BATCH_SETTINGS` (``None`` for the model's own)."""
    source = find_model(name)
    loader = LOADERS[source.model_type]
    return loader.build(source, resolve_execution(loader.runtimes, device, dtype), compile=compile, **batch)


# -- finding a model by name ------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """A model found by name: its ``model_type`` (a key of :data:`LOADERS`) and where its files are:
    ``folder`` is a local path, or the Hub cache's copy of a Hub id's ``config.json`` (``hub``; ``None``
    where it could not be fetched), and neither for a model shipped in the package."""

    name: str
    model_type: str
    folder: Path | None = None
    hub: bool = False

    @property
    def shipped(self) -> bool:
        return self.folder is None and not self.hub


def find_model(name: str) -> Source:
    """Where ``name`` is, and what type of model: a model shipped in the package, then a local path, then a
    Hub id (its ``config.json`` from the Hugging Face cache, else the Hub where reachable). A name that
    is none of them is a :class:`ModelNotAvailableError`; one that resembles a shipped name says which."""
    if name in ZERO_DOWNLOAD_MODELS:
        return Source(name, ZERO_DOWNLOAD_MODELS[name])
    local = Path(name).expanduser()
    if local.exists():
        return Source(name, _loader_type(local) if local.is_dir() else STUDENT_MODEL_TYPE, local)
    resembled = _resembled_model(name)
    if resembled is not None:
        raise ModelNotAvailableError(
            f"Could not load the ICC model {name!r}: no model of that name ships in the package, "
            f"and no such local path exists; did you mean {resembled!r}?"
        )
    if not looks_like_hub_id(name):
        raise ModelNotAvailableError(
            f"Could not load the ICC model {name!r}: the local path {local.absolute()} does not exist"
        )
    folder = fetch_repo(name, (CONFIG_FILE,), local_files_only=True)
    if folder is None and not hub_offline() and hub_reachable():
        folder = fetch_repo(name, (CONFIG_FILE,))
    return Source(name, _loader_type(folder) if folder is not None else STUDENT_MODEL_TYPE, folder, hub=True)


def _resembled_model(name: str) -> str | None:
    """The shipped model ``name`` is a near miss of (``"minii"``, ``"Lite"``), if any; names with an organisation
    or a folder (``org/mini``, ``./mini``) are taken as written."""
    if "/" in name or "\\" in name or name.startswith((".", "~")):
        return None
    close = difflib.get_close_matches(name.lower(), list(ZERO_DOWNLOAD_MODELS), n=1)
    return close[0] if close else None


def _loader_type(folder: Path) -> str:
    """The :data:`LOADERS` key of the model in ``folder``, by its ``config.json``'s ``model_type``."""
    kind = model_type(folder)
    return kind if kind in LOADERS else STUDENT_MODEL_TYPE


# -- one loader per model type ----------------------------------------------------------


def _lite(source: Source, execution: Execution, **_: object) -> ConcretenessScorer:
    """lite, shipped or from a repository (``ORG/icc-lite``): pure Python, so device, dtype, ``compile`` and
    batching do not apply."""
    if source.shipped:
        return LiteScorer()
    folder = lite_folder.download_repo(source.name, local_files_only=hub_offline()) if source.hub else source.folder
    if folder is None or not lite_folder.is_lite_folder(folder):
        raise CheckpointError(
            f"the lite repository {source.name!r} lacks {', '.join(lite_folder.DATA_FILES)} or config.json"
        )
    scorer = LiteScorer(*lite_folder.load_folder(folder))
    scorer.model_id = source.name
    return scorer


def _mini(source: Source, execution: Execution, *, compile: bool, **batch: int | bool | None) -> ConcretenessScorer:
    """mini, shipped or from a repository (``hub_cards/icc-mini``: config and heads, no encoder weights), on
    ``execution``'s runtime: ONNX Runtime (no torch import for the shipped mini) or torch."""
    if source.shipped and execution.runtime == ONNXRUNTIME:
        from .mini_onnx import MiniOnnxScorer  # imports onnxruntime

        return MiniOnnxScorer(**batch)
    if source.shipped:
        from .mini import MiniScorer  # imports torch

        return MiniScorer(device=execution.device, dtype=execution.dtype, **batch)
    offline = hub_offline()
    folder = download_repo(source.name, local_files_only=offline) if source.hub else source.folder
    if folder is None or not is_mini_folder(folder):
        raise CheckpointError(f"the mini repository {source.name!r} lacks its heads file or config.json")

    def torch_mini(**settings: int | bool | None) -> ConcretenessScorer:
        from transformers import AutoTokenizer

        from .mini import MiniScorer

        model, base = load_folder(folder, local_files_only=offline)
        tokenizer = AutoTokenizer.from_pretrained(str(base), trust_remote_code=False)
        return MiniScorer(model, tokenizer, device=execution.device, dtype=execution.dtype, **settings)

    if execution.runtime == ONNXRUNTIME:
        from .mini_onnx import MiniOnnxScorer

        base = base_folder(folder, local_files_only=offline)
        scorer = MiniOnnxScorer(
            folder / HEADS_FILE, base, torch_mini=lambda: torch_mini(progress=batch["progress"]), **batch
        )
    else:
        scorer = torch_mini(**batch)
    scorer.model_id = source.name
    return scorer


def _student(source: Source, execution: Execution, *, compile: bool, **batch: int | bool | None) -> ConcretenessScorer:
    """A student (ours or the published RoBERTa format) from a local folder or a Hub id, checked before it
    loads (see :func:`check_model_directory` and :func:`_load_student`)."""
    from .devices import resolve_device, resolve_dtype  # imports torch
    from .neural import NeuralScorer

    device = resolve_device(execution.device)
    dtype = resolve_dtype(execution.dtype, device)
    name = source.name
    if not source.hub:
        check_model_directory(source.folder, name)
        model, tokenizer = _load_student(str(source.folder), name, dtype, local_files_only=True)
    else:
        try:
            model, tokenizer = _load_student(name, name, dtype, local_files_only=True)
        except ModelNotAvailableError:
            if hub_offline() or not hub_reachable():
                raise
            model, tokenizer = _load_student(name, name, dtype, local_files_only=False)
    model.to(device)
    return NeuralScorer(model, tokenizer, model_id=name, compile=compile, **batch)


@dataclass(frozen=True)
class Loader:
    """How one type of model loads: the runtimes it can run on (see :func:`~.execution.resolve_execution`)
    and ``build(source, execution, *, compile, **batch settings)``, which builds its scorer."""

    runtimes: tuple[str, ...]
    build: Callable[..., ConcretenessScorer]


#: The loader of each model type (a ``config.json``'s ``model_type``; every other type is a student's).
LOADERS: dict[str, Loader] = {
    MINI_MODEL_TYPE: Loader(MINI_RUNTIMES, _mini),
    lite_folder.LITE_MODEL_TYPE: Loader(LITE_RUNTIMES, _lite),
    STUDENT_MODEL_TYPE: Loader(STUDENT_RUNTIMES, _student),
}


# -- the process cache ----------------------------------------------------------------


def planned_execution(
    model: ModelSpec, device: str | torch.device | None = None, dtype: str | torch.dtype | None = None
) -> Execution:
    """The device, dtype and runtime ``load_scorer(model, device, dtype)`` runs with, decided before any file
    is read, e.g. ``("cpu", "bfloat16", "torch")``; lite's is ``(None, None, "python")``. A model shipped in
    the package is known by name; any other resolves as a student does (a repository's type is known once
    read)."""
    kind = ZERO_DOWNLOAD_MODELS.get(named_model_id(model) or DEFAULT_MODEL_ID, STUDENT_MODEL_TYPE)
    return resolve_execution(LOADERS[kind].runtimes, device, dtype)


def _cache_key(name: str, fallback: str | None, device, dtype, compile: bool) -> tuple:
    """``(name, fallback, execution, compile)`` with ``None`` resolved, so equal requests share one entry: the
    runtime too (mini on torch or ONNX Runtime: fp32 on a CPU either way, scores apart by float32 rounding)."""
    execution = planned_execution(name, device, dtype)
    return (name, fallback, execution, compile and execution.runtime != PYTHON)


@lru_cache(maxsize=8)
def _cached_model(key: tuple) -> tuple[ConcretenessScorer, str | None]:
    name, fallback, execution, compile = key
    unset = dict.fromkeys(BATCH_SETTINGS)  # set per call, on a copy
    return _load_with_fallback(name, fallback, device=execution.device, dtype=execution.dtype, compile=compile, **unset)


@lru_cache(maxsize=16)
def _cached(key: tuple, batch: tuple[tuple[str, int | bool | None], ...]) -> tuple[ConcretenessScorer, str | None]:
    """The cached model with these batch settings (``(name, value)`` pairs): a shallow copy sharing its
    weights (kept, so its per-instance state, such as the fast encoder, is built once)."""
    scorer, notice = _cached_model(key)
    changes = {name: value for name, value in batch if value is not None and hasattr(scorer, name)}
    if not changes:
        return scorer, notice
    resized = copy.copy(scorer)
    for name, value in changes.items():
        setattr(resized, name, value)
    return resized, notice


def clear_scorer_cache() -> None:
    """Forget every cached scorer (frees their memory once no caller holds them)."""
    _cached.cache_clear()
    _cached_model.cache_clear()


@contextmanager
def fallback_notices() -> Iterator[list[str]]:
    """Collect the fallback reports of the loads inside the block, for callers that show
    their own notice (the CLI, the Space) instead of a Python warning.

    The list is filled when the block ends; other warnings are shown as usual.
    """
    notices: list[str] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ModelFallbackWarning)
            yield notices
    finally:
        for warning in caught:
            if issubclass(warning.category, ModelFallbackWarning):
                notices.append(str(warning.message))
            else:
                warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)


def looks_like_hub_id(name: str) -> bool:
    """Whether ``name`` could be a Hub repository id (``org/name`` or ``name``), not a filesystem path."""
    if name.startswith((".", "/", "~")) or "\\" in name:
        return False
    from huggingface_hub.utils import HFValidationError, validate_repo_id

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
    """The student and its tokenizer, refused as cheaply as possible when they cannot score: no code of
    the checkpoint runs (:func:`refuse_remote_code`; our own ``auto_map`` is allowed, as we load our
    classes), the config must size a network (:func:`_student_config`) whose weights the file's headers
    hold (:func:`require_fit`) before any weight is allocated, and no loaded weight may be NaN or
    infinite (:func:`require_finite`)."""
    from safetensors import SafetensorError
    from transformers import AutoTokenizer

    from ..models.icc.configuration_icc import AUTO_MAP
    from ..models.icc.modeling_icc import ICCForConcreteness

    try:
        folder = _student_folder(source, local_files_only)
        if folder is not None:
            refuse_remote_code(folder, name, allowed=AUTO_MAP)
        config = _student_config(source, name, local_files_only=local_files_only)
        files = safetensors_files(folder) if folder is not None else []
        if files:
            require_fit(_empty_student(config, name), files, name)
        tokenizer = AutoTokenizer.from_pretrained(
            source, use_fast=True, local_files_only=local_files_only, trust_remote_code=False
        )
        model = load_complete(
            ICCForConcreteness.from_pretrained,
            source,
            name=name,
            config=config,
            dtype=dtype,
            use_safetensors=True,
            local_files_only=local_files_only,
        )
        require_finite(model, name)
    except CheckpointError:  # already says what is wrong
        raise
    except OSError as error:
        if Path(source).is_dir():  # a local model directory with a file missing or unreadable
            raise CheckpointError(f"The checkpoint {name!r} could not be read: {_first_line(error)}") from error
        raise ModelNotAvailableError(_not_available_message(name, _first_line(error))) from error
    except (ValueError, RuntimeError, KeyError, SafetensorError) as error:
        raise CheckpointError(f"The checkpoint {name!r} could not be read: {_first_line(error)}") from error
    return model, tokenizer


def _student_folder(source: str, local_files_only: bool) -> Path | None:
    """Where the student's config, code maps and weights are: the local folder, or the Hub snapshot they
    are fetched to (``None`` when they cannot be fetched here: the load then says why)."""
    from ..utils.hub_repos import fetch_repo

    if Path(source).is_dir():
        return Path(source)
    return fetch_repo(source, STUDENT_CHECK_FILES, local_files_only=local_files_only)


def _student_config(source: str, name: str, *, local_files_only: bool) -> ICCConfig:
    """The student's config; one that cannot size a network is a :class:`CheckpointError` naming
    ``config.json`` and the field (a wrongly typed field would otherwise end in a traceback)."""
    from huggingface_hub.errors import StrictDataclassError
    from transformers import AutoConfig

    from ..models.icc.configuration_icc import ICCConfig

    try:
        backbone = AutoConfig.from_pretrained(source, local_files_only=local_files_only, trust_remote_code=False)
        config = ICCConfig.from_backbone_config(backbone)
    except StrictDataclassError as error:
        raise unusable_config(name, error) from None
    for field in SIZE_FIELDS:
        value = getattr(config, field, None)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise CheckpointError(
                f"The checkpoint {name!r} has an unusable config.json: {field} is {value!r}, "
                "not a positive whole number"
            )
    return config


def _empty_student(config: ICCConfig, name: str) -> ICCForConcreteness:
    """The network ``config`` describes, on the meta device: its weights' names and shapes, no memory."""
    import torch

    from ..models.icc.modeling_icc import ICCForConcreteness

    try:
        with torch.device("meta"):
            return ICCForConcreteness(config)
    except (ValueError, TypeError, RuntimeError) as error:  # e.g. a width the heads do not divide
        raise CheckpointError(f"The checkpoint {name!r} has an unusable config.json: {_first_line(error)}") from None


def hub_offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` is set, as huggingface_hub reads it."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether a TCP connection to the Hub endpoint opens quickly.

    Checked before any download so that a machine without network fails in
    seconds instead of waiting through the Hub client's retries. Behind an HTTP
    proxy the check is skipped (the proxy decides).
    """
    if any(os.environ.get(key) for key in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return True
    from huggingface_hub import constants

    endpoint = urlparse(constants.ENDPOINT)
    port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    try:
        with socket.create_connection((endpoint.hostname, port), timeout=timeout):
            return True
    except OSError:
        return False


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
