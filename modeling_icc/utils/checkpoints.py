"""Loading checkpoints strictly: a model with weights missing is an error, never a random network.

``transformers`` fills weights missing from a checkpoint with random values and only
logs a table, so an incomplete file would score every caption with a random network:
the worst failure a metric can have (diffusers leaves such a weight uninitialized). Load
through :func:`load_complete`, or with ``output_loading_info=True`` inside
:func:`without_load_report` and pass the info to :func:`require_complete`.

A checkpoint is data, never code: :func:`load_complete` passes ``trust_remote_code=False``
and :func:`refuse_remote_code` refuses a folder that asks for its own Python. Before a model
is allocated, :func:`require_fit` compares the network its config describes (built on the
meta device) with the safetensors headers (for students, and in :func:`load_complete` for
every transformers model loaded from a local folder: teachers, baselines, distillation's
backbone), so a config that claims a bigger network than the file holds is refused without
allocating it; :func:`require_finite` refuses NaN or infinite weights after the load.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from .errors import CheckpointError

if TYPE_CHECKING:
    from diffusers import DiffusionPipeline
    from torch import nn

T = TypeVar("T")
#: What a full CLIP checkpoint (the paper's ``openai/clip-vit-large-patch14``) holds beyond the text
#: tower: the image tower, its projection and the contrastive temperature, unused by a text tower alone.
CLIP_IMAGE_SIDE = ("vision_model.", "visual_projection.", "logit_scale")
#: The loggers whose reports of missing weights :func:`require_complete` replaces with an error.
LOAD_REPORT_LOGGERS = ("transformers.modeling_utils", "diffusers.models.modeling_utils")
#: The files whose ``auto_map`` asks transformers to import Python that ships with a checkpoint.
CODE_MAP_FILES = (
    "config.json",
    "tokenizer_config.json",
    "preprocessor_config.json",
    "processor_config.json",
    "video_preprocessor_config.json",
)
#: A checkpoint's weights: one safetensors file, or an index naming its shards.
SAFE_WEIGHTS, SAFE_WEIGHTS_INDEX = "model.safetensors", "model.safetensors.index.json"
#: Old names transformers still renames on load (``LayerNorm.gamma`` is ``LayerNorm.weight``).
_LEGACY_NAMES = (
    (re.compile(r"LayerNorm\.gamma$"), "LayerNorm.weight"),
    (re.compile(r"LayerNorm\.beta$"), "LayerNorm.bias"),
)


def require_complete(
    name: str,
    loading_info: dict,
    *,
    allowed_missing: tuple[str, ...] = (),
    allowed_unexpected: tuple[str, ...] = (),
) -> None:
    """Raise :class:`CheckpointError` if the load missed, added or reshaped any weight.

    ``loading_info`` is what ``from_pretrained(..., output_loading_info=True)`` returns;
    transformers has already dropped what a model declares ignorable (old ``position_ids``).
    Keys starting with an ``allowed_missing``/``allowed_unexpected`` prefix are no error: the
    caller knows them to be new (a head to train) or unused (another task's head).
    """
    missing = sorted(key for key in loading_info.get("missing_keys") or () if not key.startswith(allowed_missing))
    unexpected = sorted(
        key for key in loading_info.get("unexpected_keys") or () if not key.startswith(allowed_unexpected)
    )
    mismatched = sorted(_mismatch(item) for item in loading_info.get("mismatched_keys") or ())
    problems = [
        f"{len(keys)} {what} ({separator.join(keys[:3])}{separator + '...' if len(keys) > 3 else ''})"
        for what, keys, separator in (
            ("weights missing", missing, ", "),
            ("unexpected weights", unexpected, ", "),
            ("weights of the wrong shape", mismatched, "; "),
        )
        if keys
    ]
    if problems:
        raise CheckpointError(
            f"The checkpoint {name!r} does not match the model: {'; '.join(problems)}. Refusing to run "
            "with randomly initialized weights; re-save or re-download the model"
        )


def _mismatch(item: tuple) -> str:
    """A wrongly shaped weight's name, with its shapes when known (``NAME is 32 in the file, 8192 in the model``)."""
    if len(item) < 3:
        return str(item[0])
    return f"{item[0]} is {_shape(item[1])} in the file, {_shape(item[2])} in the model"


def _shape(shape: Iterable[int]) -> str:
    return "x".join(map(str, shape)) or "a scalar"


def load_complete(
    loader: Callable[..., tuple[T, dict]],
    source: str | os.PathLike,
    *,
    name: str | None = None,
    allowed_missing: tuple[str, ...] = (),
    allowed_unexpected: tuple[str, ...] = (),
    **kwargs,
) -> T:
    """``loader(source, **kwargs)`` (a transformers or diffusers ``from_pretrained``), refused by
    :func:`require_complete` (under ``name``, by default ``source``) unless every weight was loaded.

    A transformers loader always gets ``trust_remote_code=False``: no Python shipped with a checkpoint
    runs, and transformers never stops to ask on stdin (diffusers' models take no such option)."""
    name = name or os.fspath(source)
    _require_fit_before_loading(loader, source, name, allowed_missing)
    # Mismatched shapes are listed in the loading info (and refused) instead of raised without names.
    options = {**kwargs, "output_loading_info": True, "ignore_mismatched_sizes": True, **_no_remote_code(loader)}
    with without_load_report():
        model, loading_info = loader(source, **options)
    require_complete(name, loading_info, allowed_missing=allowed_missing, allowed_unexpected=allowed_unexpected)
    return model


def _loader_class(loader: Callable) -> type | None:
    """The class whose ``from_pretrained`` ``loader`` is (through ``functools.partial``), if any."""
    while isinstance(loader, partial):
        loader = loader.func
    return getattr(loader, "__self__", None)


def _no_remote_code(loader: Callable) -> dict[str, bool]:
    """``{"trust_remote_code": False}`` for a transformers loader; nothing for a diffusers model's."""
    owner = _loader_class(loader)
    return {} if getattr(owner, "__module__", "").startswith("diffusers") else {"trust_remote_code": False}


def _require_fit_before_loading(
    loader: Callable, source: str | os.PathLike, name: str, allowed_missing: tuple[str, ...]
) -> None:
    """:func:`require_fit` for a transformers loader and a local folder of safetensors weights: the network
    its config describes, built on the meta device, against the files' headers, before the loader allocates
    it. (Hub ids are checked after the load, by :func:`require_complete`; diffusers models too.)"""
    owner = _loader_class(loader)
    if not getattr(owner, "__module__", "").startswith("transformers") or not Path(source).is_dir():
        return
    files = safetensors_files(source)
    if files:
        require_fit(_meta_model(owner, source, name), files, name, allowed_missing=allowed_missing)


def _meta_model(owner: type, source: str | os.PathLike, name: str) -> nn.Module:
    """The network ``owner`` would build from the config in ``source``, on the meta device (no memory)."""
    import torch
    from huggingface_hub.errors import StrictDataclassError
    from transformers import AutoConfig

    try:
        with torch.device("meta"):
            if owner.__name__.startswith("Auto"):
                config = AutoConfig.from_pretrained(source, trust_remote_code=False)
                return owner.from_config(config, trust_remote_code=False)
            return owner._from_config(owner.config_class.from_pretrained(source))
    except (StrictDataclassError, ValueError, TypeError, KeyError, AttributeError) as error:
        raise unusable_config(name, error) from None


def unusable_config(name: str, error: BaseException) -> CheckpointError:
    """The one-line error for a config.json that sizes no network (a wrongly typed field, say)."""
    reason = " ".join(str(error).split())  # "Validation error for field 'hidden_size': TypeError: ..."
    return CheckpointError(f"The checkpoint {name!r} has an unusable config.json: {reason}")


def refuse_remote_code(folder: str | os.PathLike, name: str, allowed: Mapping[str, object] | None = None) -> None:
    """Refuse a checkpoint folder that asks to run its own Python: an ``auto_map`` entry in any of
    :data:`CODE_MAP_FILES`, except, in ``config.json``, an entry equal to one of ``allowed``.

    transformers imports the module such an entry names when told to trust it and, when not told,
    asks on stdin (the question lands in a command's output, and ``echo y |`` answers it). With
    ``trust_remote_code=False`` nothing runs, but the model may load with other classes than the
    folder asks for; refusing says why in one line. ``allowed`` is for a package's own classes:
    a saved ICC student maps the Auto classes to copies of our code for users without the
    package, and with the package we load our classes, never those copies.
    """
    for file in CODE_MAP_FILES:
        for auto_class, reference in _auto_map(Path(folder) / file).items():
            if file == "config.json" and (allowed or {}).get(auto_class) == reference:
                continue
            raise CheckpointError(
                f"The checkpoint {name!r} asks to run code it ships: {file} maps {auto_class} to "
                f"{_code_files(reference)}, and icc never runs a checkpoint's code; remove the auto_map "
                "entry, or load the model with transformers yourself where you trust that code"
            )


def _auto_map(path: Path) -> dict[str, object]:
    """The ``auto_map`` of a JSON file (``{}`` without one; a bare list is a tokenizer's old form)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # absent or unreadable: the loader says what is wrong with it
        return {}
    auto_map = data.get("auto_map") if isinstance(data, dict) else None
    if not auto_map:
        return {}
    return auto_map if isinstance(auto_map, dict) else {"AutoTokenizer": auto_map}


def _code_files(reference: object) -> str:
    """The Python files an ``auto_map`` value names: ``module.Class`` -> ``module.py``;
    ``repo--module.Class`` -> ``module.py of repo``; a list (slow, fast tokenizer) -> each."""
    references = reference if isinstance(reference, (list, tuple)) else [reference]
    files = []
    for item in (str(item) for item in references if item):
        repo, _, dotted = item.rpartition("--")
        module = dotted.rpartition(".")[0] or dotted
        files.append(f"{module}.py" + (f" of {repo}" if repo else ""))
    return " and ".join(dict.fromkeys(files)) or repr(reference)


def safetensors_files(folder: str | os.PathLike) -> list[Path]:
    """The weight files of a checkpoint folder: :data:`SAFE_WEIGHTS`, else the shards its index names
    (those present; none when the folder holds neither, and the loader says so)."""
    folder = Path(folder)
    if (folder / SAFE_WEIGHTS).is_file():
        return [folder / SAFE_WEIGHTS]
    try:
        weight_map = json.loads((folder / SAFE_WEIGHTS_INDEX).read_text(encoding="utf-8"))["weight_map"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [folder / shard for shard in sorted(set(weight_map.values())) if (folder / shard).is_file()]


def stored_tensors(files: Iterable[str | os.PathLike]) -> dict[str, tuple[tuple[int, ...], str]]:
    """Each stored tensor's shape and safetensors dtype (``F32``, ``I8``, ``BOOL``, ...), read from the
    files' headers: no tensor data is read."""
    from safetensors import safe_open

    stored = {}
    for file in files:
        with safe_open(os.fspath(file), framework="pt") as handle:
            for key in handle.keys():  # noqa: SIM118 (not a dict)
                piece = handle.get_slice(key)
                stored[key] = (tuple(piece.get_shape()), piece.get_dtype())
    return stored


def require_fit(
    model: nn.Module, files: Iterable[str | os.PathLike], name: str, *, allowed_missing: tuple[str, ...] = ()
) -> None:
    """Refuse, before anything is allocated, weights that cannot fill ``model``: the network the config
    describes, built on the meta device (names and shapes, no memory).

    With ``ignore_mismatched_sizes`` a loader allocates and initializes every weight the file lacks or
    holds in another shape before :func:`require_complete` can refuse them, so a config that claims a
    bigger network than the file holds would first allocate all of it. Here the safetensors headers are
    compared instead: weights missing or of the wrong shape are refused with :func:`require_complete`'s
    message, and so is a weight stored as integers or booleans where the model holds floats (a loader
    would cast it silently into a network that scores nonsense). Unexpected weights cost no memory:
    :func:`require_complete` refuses them after the load. Weights under ``allowed_missing`` prefixes may be
    absent (a new head the caller trains).
    """
    stored = stored_tensors(files)
    parameters = dict(model.named_parameters())
    prefix = getattr(model, "base_model_prefix", "")
    found = {}
    for key, (shape, dtype) in stored.items():
        target = _model_key(key, parameters, prefix)
        if target is not None:
            found[target] = (key, shape, dtype)
    ignored = [re.compile(pattern) for pattern in getattr(model, "_keys_to_ignore_on_load_missing", None) or ()]
    missing = [key for key in parameters if key not in found and not any(p.search(key) for p in ignored)]
    mismatched = [
        (target, shape, tuple(parameters[target].shape))
        for target, (_, shape, _) in found.items()
        if shape != tuple(parameters[target].shape)
    ]
    require_complete(name, {"missing_keys": missing, "mismatched_keys": mismatched}, allowed_missing=allowed_missing)
    for target, (key, _, dtype) in sorted(found.items()):
        if parameters[target].is_floating_point() and not _is_float(dtype):
            raise CheckpointError(
                f"The checkpoint {name!r} cannot score: the weight {key} is stored as {_dtype_name(dtype)}, "
                "not as floating-point numbers; re-save or re-download the model"
            )


def _model_key(key: str, parameters: Mapping[str, object], prefix: str) -> str | None:
    """The model's name for a stored tensor, by the renames transformers applies to such checkpoints:
    old ``LayerNorm.gamma``/``beta``, and the base model's prefix added or dropped."""
    for pattern, replacement in _LEGACY_NAMES:
        key = pattern.sub(replacement, key)
    candidates = (key, f"{prefix}.{key}", key.removeprefix(f"{prefix}.")) if prefix else (key,)
    return next((candidate for candidate in candidates if candidate in parameters), None)


def _is_float(dtype: str) -> bool:
    return dtype.startswith("F") or dtype == "BF16"


def _dtype_name(dtype: str) -> str:
    """A safetensors dtype as torch names it: ``I8`` -> ``int8``, ``BOOL`` -> ``bool``."""
    kinds = {"I": "int", "U": "uint"}
    return kinds[dtype[0]] + dtype[1:] if dtype[0] in kinds else dtype.lower()


def require_finite(model: nn.Module, name: str) -> None:
    """Refuse a loaded model with a NaN or infinite weight: every caption would score NaN, and a job's
    summary would blame the data."""
    import torch

    for key, tensor in model.state_dict().items():
        if not tensor.is_floating_point() or tensor.numel() == 0:
            continue
        # NaN spreads to the min and max, an Inf is one of them: one pass, no tensor-sized mask
        if not bool(torch.isfinite(torch.stack(torch.aminmax(tensor))).all()):
            raise CheckpointError(
                f"The checkpoint {name!r} cannot score: the weight {key} holds NaN or Inf values; "
                "re-save or re-download the model"
            )


@contextmanager
def without_load_report() -> Iterator[None]:
    """Silence the libraries' loading reports while :func:`require_complete` turns their content into an error."""
    loggers = [logging.getLogger(name) for name in LOAD_REPORT_LOGGERS]
    # A filter, not a higher level: transformers runs extra checks that log elsewhere when its level is raised.
    for logger in loggers:
        logger.addFilter(_drop_record)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(_drop_record)


def _drop_record(record: logging.LogRecord) -> bool:
    return False


def load_complete_pipeline(source: str | os.PathLike, **kwargs) -> DiffusionPipeline:
    """``DiffusionPipeline.from_pretrained(source, **kwargs)`` with every network in it loaded strictly.

    diffusers itself refuses no missing weight: its own models leave one uninitialized (on the
    meta device by default) and log a warning, and transformers components fill it randomly. So
    each network that ``model_index.json`` names is loaded here through :func:`load_complete`
    (from its subfolder) and handed to the pipeline, which then loads only the rest.
    """
    import diffusers
    import transformers

    libraries = {"diffusers": diffusers, "transformers": transformers}
    networks = {}
    for component, spec in diffusers.DiffusionPipeline.load_config(source).items():
        if not isinstance(spec, list) or spec[0] not in libraries:  # "_class_name", a component set to null
            continue
        network = getattr(libraries[spec[0]], spec[1])
        if issubclass(network, (diffusers.ModelMixin, transformers.PreTrainedModel)):  # not tokenizers, schedulers
            name = f"{os.fspath(source)} ({component})"
            networks[component] = load_complete(
                network.from_pretrained, source, name=name, subfolder=component, **kwargs
            )
    # No custom pipeline or component code from the folder runs (diffusers' default, said here).
    return diffusers.DiffusionPipeline.from_pretrained(source, **kwargs, **networks, trust_remote_code=False)
