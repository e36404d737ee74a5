"""Loading checkpoints strictly: a model with weights missing is an error, never a random network.

``transformers`` fills weights missing from a checkpoint with random values and only
logs a table, so an incomplete file would score every caption with a random network:
the worst failure a metric can have (diffusers leaves such a weight uninitialized). Load
through :func:`load_complete`, or with ``output_loading_info=True`` inside
:func:`without_load_report` and pass the info to :func:`require_complete`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

from .errors import CheckpointError

if TYPE_CHECKING:
    from diffusers import DiffusionPipeline

T = TypeVar("T")
#: What a full CLIP checkpoint (the paper's ``openai/clip-vit-large-patch14``) holds beyond the text
#: tower: the image tower, its projection and the contrastive temperature, unused by a text tower alone.
CLIP_IMAGE_SIDE = ("vision_model.", "visual_projection.", "logit_scale")
#: The loggers whose reports of missing weights :func:`require_complete` replaces with an error.
LOAD_REPORT_LOGGERS = ("transformers.modeling_utils", "diffusers.models.modeling_utils")


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
    mismatched = sorted(str(item[0]) for item in loading_info.get("mismatched_keys") or ())
    problems = [
        f"{len(keys)} {what} ({', '.join(keys[:3])}{', ...' if len(keys) > 3 else ''})"
        for what, keys in (
            ("weights missing", missing),
            ("unexpected weights", unexpected),
            ("weights of the wrong shape", mismatched),
        )
        if keys
    ]
    if problems:
        raise CheckpointError(
            f"The checkpoint {name!r} does not match the model: {'; '.join(problems)}. Refusing to run "
            "with randomly initialized weights; re-save or re-download the model"
        )


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
    :func:`require_complete` (under ``name``, by default ``source``) unless every weight was loaded."""
    # Mismatched shapes are listed in the loading info (and refused) instead of raised without names.
    options = {**kwargs, "output_loading_info": True, "ignore_mismatched_sizes": True}
    with without_load_report():
        model, loading_info = loader(source, **options)
    require_complete(
        name or os.fspath(source),
        loading_info,
        allowed_missing=allowed_missing,
        allowed_unexpected=allowed_unexpected,
    )
    return model


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
    return diffusers.DiffusionPipeline.from_pretrained(source, **kwargs, **networks)
