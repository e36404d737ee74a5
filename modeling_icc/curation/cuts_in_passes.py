"""Top-k / top-fraction cuts over more rows than memory should hold: exact, in a few passes.

:func:`~modeling_icc.curation.selection.fit_cuts` concatenates the ranking values of every
piece (about 17 bytes per row while it cuts). :func:`fit_cuts_in_passes` makes the same
cuts (the k largest values; of the values equal to the k-th, the first in piece then row
order; NaN never kept) from pieces it reads again for each pass, from disk say, holding one
histogram of 65,536 counts instead of the values:

1. count the values that are not NaN (hence k) and find their float type;
2. map each value to an unsigned integer of the same width ordered as the values are
   (:func:`sortable_keys`) and find the k-th largest key 16 bits at a time: a histogram
   of the top 16 bits over every piece names the bucket that holds it and how many keys
   lie above that bucket; the next pass counts the next 16 bits of the keys in that bucket
   only (2 passes for float32 values, 4 for float64);
3. count each piece's values equal to the k-th largest, and give the ties still to keep to
   the first pieces.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .selection import Cut, KeepRule

#: Bits of the key resolved by one histogram pass (a histogram of 2**16 int64 counts: 512 KiB).
DIGIT_BITS = 16
_DIGITS = 1 << DIGIT_BITS


def fit_cuts_in_passes(pieces: Iterable[np.ndarray], rule: KeepRule) -> list[Cut]:
    """Each piece's :class:`Cut`, the same as ``fit_cuts(list(pieces), rule)`` (ties by input order).

    ``pieces`` is iterated once per pass (4 passes for float32 values, 6 for float64), so it
    must give the same arrays every time: a list, or arrays read back from disk; not an iterator.
    """
    if not rule.is_ranking:
        raise ValueError("fit_cuts_in_passes is for top_k / top_fraction rules")
    if iter(pieces) is pieces:
        raise TypeError("pieces are read once per pass: pass a list or another re-iterable, not an iterator")
    n_pieces, n_valid, dtype = 0, 0, np.dtype(np.float32)
    for piece in pieces:
        values = np.asarray(piece)
        n_pieces += 1
        dtype = np.promote_types(dtype, np.float32 if values.dtype.kind == "f" and values.itemsize <= 4 else np.float64)
        n_valid += int(np.count_nonzero(~np.isnan(values.astype(dtype, copy=False))))
    k = rule.top_count(n_valid)
    if k == 0:
        return [Cut(np.inf, ties=0) for _ in range(n_pieces)]
    cutoff, greater = _kth_largest(pieces, k, dtype)
    budget = k - greater
    cuts = []
    for piece in pieces:
        ties = min(budget, int(np.count_nonzero(np.asarray(piece, dtype=dtype) == cutoff)))
        cuts.append(Cut(cutoff, ties))
        budget -= ties
    return cuts


def sortable_keys(values: np.ndarray) -> np.ndarray:
    """Unsigned integers of ``values``' width (float32 or float64) in the same order, NaN dropped.

    Non-negative floats get their sign bit set, negative ones all bits flipped; -0.0 counts as
    0.0, since the two compare equal.
    """
    values = values[~np.isnan(values)]
    unsigned = np.dtype(f"u{values.itemsize}")
    bits = np.where(values == 0, 0, values).astype(values.dtype, copy=False).view(unsigned)
    sign = unsigned.type(1 << (8 * values.itemsize - 1))
    return np.where(bits & sign, ~bits, bits | sign)


def _value_of(key: int, dtype: np.dtype) -> float:
    """The float whose :func:`sortable_keys` key is ``key``."""
    width = 8 * dtype.itemsize
    sign = 1 << (width - 1)
    bits = key ^ sign if key & sign else ~key & ((1 << width) - 1)
    return float(np.array(bits, dtype=f"u{dtype.itemsize}").view(dtype))


def _kth_largest(pieces: Iterable[np.ndarray], k: int, dtype: np.dtype) -> tuple[float, int]:
    """The k-th largest value that is not NaN (``k`` >= 1, at most their count) and how many are larger."""
    width = 8 * dtype.itemsize
    prefix, greater = 0, 0  # the key bits found so far; the keys above the bucket they name
    for shift in range(width - DIGIT_BITS, -1, -DIGIT_BITS):
        counts = np.zeros(_DIGITS, dtype=np.int64)
        for piece in pieces:
            keys = sortable_keys(np.asarray(piece, dtype=dtype))
            if shift + DIGIT_BITS < width:
                keys = keys[(keys >> (shift + DIGIT_BITS)) == prefix]
            counts += np.bincount(((keys >> shift) & (_DIGITS - 1)).astype(np.intp), minlength=_DIGITS)
        at_or_above = np.cumsum(counts[::-1])[::-1]  # keys in the bucket whose next digit is >= d
        digit = int(np.flatnonzero(at_or_above >= k - greater)[-1])
        greater += int(at_or_above[digit] - counts[digit])
        prefix = (prefix << DIGIT_BITS) | digit
    return _value_of(prefix, dtype), greater
