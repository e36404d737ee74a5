"""Validation of caption inputs, shared by every scorer.

The documented contract: ``None`` or a non-string item raises ``TypeError``
naming its index (or becomes NaN with ``errors="nan"``); empty and
whitespace-only captions score NaN, which every filter drops.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import numpy as np

ErrorMode = Literal["raise", "nan"]


def prepare_texts(texts: Iterable[object], errors: ErrorMode = "raise") -> tuple[list[str], np.ndarray]:
    """Split ``texts`` into the captions to score and a mask of which positions they fill.

    Returns ``(valid_texts, valid_mask)``: ``valid_texts`` are the non-blank
    strings in input order; ``valid_mask[i]`` says whether position ``i`` is one.
    """
    if errors not in ("raise", "nan"):
        raise ValueError(f"errors must be 'raise' or 'nan', got {errors!r}")
    if isinstance(texts, str):
        raise TypeError("score() takes a list of captions, not a single string: wrap it as [text]")
    items = list(texts)
    mask = np.zeros(len(items), dtype=bool)
    valid: list[str] = []
    for index, item in enumerate(items):
        if not isinstance(item, str):
            if errors == "raise":
                raise TypeError(
                    f"caption at index {index} is {type(item).__name__}, not str "
                    "(pass errors='nan' to score such items as NaN)"
                )
            continue
        if item.strip():
            mask[index] = True
            valid.append(item)
    return valid, mask


def deduplicate(texts: list[str]) -> tuple[list[str], np.ndarray]:
    """``(distinct_texts, inverse)`` with ``texts[i] == distinct_texts[inverse[i]]``, first-seen order.

    Web caption pools repeat captions (alt-text boilerplate, product names, stock
    phrases); scoring each distinct caption once gives the same scores for less work.
    """
    positions: dict[str, int] = {}
    inverse = np.fromiter((positions.setdefault(text, len(positions)) for text in texts), np.int64, len(texts))
    return list(positions), inverse


def scatter(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Place scores of the valid captions back at their positions; NaN elsewhere."""
    out = np.full(mask.shape[0], np.nan, dtype=np.float32)
    out[mask] = values
    return out
