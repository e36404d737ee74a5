"""DataComp subset files: the kept samples' uids in the format DataComp's resharder consumes.

A DataComp pool names each sample by a 128-bit hash written as 32 hex digits
(``uid`` in the metadata parquets and in each sample's ``.json``). The
resharder takes the chosen subset as a NumPy ``.npy`` array of dtype
``numpy.dtype("u8,u8")`` (high and low 64 bits of each uid), shape
``(subset_size,)``, in lexicographic sorted order.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ...utils.errors import UserInputError
from ...utils.locations import Location, location
from .outputs import atomic_output, check_writable

#: The column holding DataComp's uids unless told another.
UID_COLUMN = "uid"
UID_DTYPE = np.dtype("u8,u8")
UID_HEX_DIGITS = 32


def uids_to_array(uids: Iterable[str]) -> np.ndarray:
    """Hex uids as a ``u8,u8`` structured array, in input order (not sorted)."""
    pairs = []
    for index, uid in enumerate(uids):
        if not isinstance(uid, str) or len(uid) != UID_HEX_DIGITS:
            raise UserInputError(f"uid at position {index} is {uid!r}, not a {UID_HEX_DIGITS}-digit hex string")
        try:
            pairs.append((int(uid[:16], 16), int(uid[16:], 16)))
        except ValueError:
            raise UserInputError(f"uid at position {index} is {uid!r}, not a hex string") from None
    return np.array(pairs, dtype=UID_DTYPE)


def array_to_uids(array: np.ndarray) -> list[str]:
    """The 32-digit lowercase hex uids of a ``u8,u8`` array."""
    high, low = array.dtype.names
    return [f"{int(h):016x}{int(lo):016x}" for h, lo in zip(array[high], array[low], strict=True)]


def subset_array(parts: Iterable[np.ndarray]) -> tuple[np.ndarray, int]:
    """Sorted, de-duplicated union of uid arrays, and how many duplicates were dropped."""
    merged = np.concatenate([np.asarray(part, dtype=UID_DTYPE) for part in parts] or [np.zeros(0, UID_DTYPE)])
    unique = np.unique(merged)
    return unique, len(merged) - len(unique)


def check_subset_path(path: str | os.PathLike, writable: bool = False) -> Path:
    """A one-line error unless ``path`` names a ``.npy`` file (and, ``writable``, one that can be
    written there: a job checks this before it starts)."""
    path = Path(path)
    if path.suffix != ".npy":
        raise UserInputError(f"the DataComp subset file must end in .npy, got {path.name}")
    return check_writable(path, "DataComp subset file") if writable else path


def save_subset(path: str | os.PathLike, uids: np.ndarray) -> Path:
    """Write a sorted ``u8,u8`` array as ``.npy`` atomically (temp file + rename)."""
    path = check_subset_path(path)
    with atomic_output(path) as stream:
        np.save(stream, np.asarray(uids, dtype=UID_DTYPE), allow_pickle=False)
    return path


def load_subset(path: str | os.PathLike | Location) -> np.ndarray:
    """Read a subset file (no pickles), local or remote."""
    with location(path).open("rb") as stream:
        return np.load(stream, allow_pickle=False)
