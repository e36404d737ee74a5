"""Validation of caption inputs, shared by every scorer.

The documented contract: the captions come in an ordered, one-dimensional
container (list, tuple, NumPy array, pandas Series, Arrow array, generator);
a single string, bytes, a mapping, a set or a table raises ``TypeError``.
``None`` or a non-string item raises ``TypeError`` naming its index (or
becomes NaN with ``errors="nan"``); captions with nothing visible (empty, or only
whitespace, invisible format characters and controls: :func:`has_content`) score
NaN, which every filter drops. A lone surrogate (``json.loads`` makes one of the escape ``"\\ud800"``; no
tokenizer, language identifier or UTF-8 file takes it) is read as U+FFFD, as the file readers replace it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Set
from typing import Literal

import numpy as np

from ..utils.caption_text import replace_surrogates

ErrorMode = Literal["raise", "nan"]
#: Unicode categories of characters that show nothing: format characters (Cf: zero-width spaces and joiners,
#: the byte order mark, soft hyphens, ...) and controls (Cc: NUL, ...).
INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc"})


def prepare_texts(texts: Iterable[object], errors: ErrorMode = "raise") -> tuple[list[str], np.ndarray]:
    """Split ``texts`` into the captions to score and a mask of which positions they fill.

    Returns ``(valid_texts, valid_mask)``: ``valid_texts`` are the strings with
    content (:func:`has_content`) in input order; ``valid_mask[i]`` says whether position ``i`` is one.
    """
    if errors not in ("raise", "nan"):
        raise ValueError(f"errors must be 'raise' or 'nan', got {errors!r}")
    items = caption_list(texts)
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
        read = readable(item)
        if read is not None:
            mask[index] = True
            valid.append(read)
    return valid, mask


def readable(text: str) -> str | None:
    """``text`` as every model reads it, ``None`` where it has no content (:func:`has_content`): its lone
    surrogates replaced by U+FFFD (:func:`replace_surrogates`); printable text, the common case, as it is."""
    if text.isprintable():
        return text if text.strip() else None
    return replace_surrogates(text) if has_content(text) else None


def has_content(text: str) -> bool:
    """Whether ``text`` shows anything: a character that is not whitespace, a format character or a control.

    Text without one has no words for any model to read, yet would get a constant score from each (the
    score of an empty input); it is blank, like the empty string. Every scorer decides it here.
    """
    if text.isprintable():  # the common case, at C speed: no control or format character, no space but " "
        return bool(text.strip())
    return any(not char.isspace() and unicodedata.category(char) not in INVISIBLE_CATEGORIES for char in text)


def caption_list(texts: object) -> list:
    """``texts`` as a list, refusing containers whose items are not captions in a known order.

    Each refusal names the container and what to pass instead: iterating a string or
    bytes gives characters or integers, a mapping gives its keys, a set has no order
    to put scores back in, and a table gives its column names.
    """
    if isinstance(texts, str):
        raise TypeError("expected a list of captions, not a single string: wrap it as [text]")
    if isinstance(texts, (bytes, bytearray, memoryview)):
        raise TypeError(
            f"expected a list of str captions, got {type(texts).__name__}: decode it first, e.g. [data.decode('utf-8')]"
        )
    if isinstance(texts, Mapping):
        raise TypeError(
            f"expected a list of captions, got a mapping ({type(texts).__name__}): pass list(d.values()) "
            "or list(d) to say which you mean"
        )
    if isinstance(texts, Set):
        raise TypeError(
            f"expected a list of captions, got a {type(texts).__name__}, which has no order to return scores in: "
            "pass a list, e.g. sorted(captions)"
        )
    if getattr(texts, "ndim", 1) != 1:
        raise TypeError(
            f"expected a one-dimensional list of captions, got a {texts.ndim}-dimensional "
            f"{type(texts).__name__}: pass one column, e.g. table['caption']"
        )
    if hasattr(texts, "to_pylist"):  # Arrow arrays: plain Python strings, not Arrow scalars
        return texts.to_pylist()
    if not isinstance(texts, Iterable):
        raise TypeError(f"expected a list of captions, got {type(texts).__name__}")
    return list(texts)


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
