"""Loading checkpoints strictly: a model with weights missing is an error, never a random network.

``transformers`` fills weights missing from a checkpoint with random values and only
logs a table, so an incomplete file would score every caption with a random network:
the worst failure a metric can have. Load with ``output_loading_info=True`` inside
:func:`without_load_report` and pass the info to :func:`require_complete`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from .errors import CheckpointError


def require_complete(name: str, loading_info: dict) -> None:
    """Raise :class:`CheckpointError` if the load missed, added or reshaped any weight.

    ``loading_info`` is what ``from_pretrained(..., output_loading_info=True)`` returns;
    transformers has already dropped what a model declares ignorable (old ``position_ids``).
    """
    missing = sorted(loading_info.get("missing_keys") or ())
    unexpected = sorted(loading_info.get("unexpected_keys") or ())
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


@contextmanager
def without_load_report() -> Iterator[None]:
    """Silence transformers' loading table while :func:`require_complete` turns its content into an error."""
    logger = logging.getLogger("transformers.modeling_utils")
    # A filter, not a higher level: transformers runs extra checks that log elsewhere when its level is raised.
    logger.addFilter(_drop_record)
    try:
        yield
    finally:
        logger.removeFilter(_drop_record)


def _drop_record(record: logging.LogRecord) -> bool:
    return False
