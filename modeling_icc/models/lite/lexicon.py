"""The lite model's word and phrase norms: loading and phrase matching.

The lexicon ships inside the package as ``data/lexicon.tsv.gz`` (built from
human rating studies by :mod:`modeling_icc.training.build_lite_lexicon`), so the lite
scorer needs no download. Lookups are plain dicts because that is the fastest
thing pure Python can do per word.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

LEXICON_FILE = "lexicon.tsv.gz"
SOURCES_FILE = "lexicon_sources.json"
NORM_COLUMNS = ("concreteness", "visual", "haptic", "auditory", "interoceptive")


@dataclass(frozen=True)
class Lexicon:
    """Ratings per normalized entry (see :func:`~modeling_icc.utils.words.normalize_entry`).

    ``norms[name][entry]`` is the entry's rating on that norm (missing when the
    study did not rate it). ``phrase_prefixes`` holds every proper word prefix of
    every multiword entry, which lets :meth:`match` extend a phrase greedily.
    """

    norms: dict[str, dict[str, float]]
    phrase_prefixes: frozenset[str]

    def match(self, tokens: list[str], norm: str = "concreteness") -> list[tuple[int, int, str]]:
        """Greedy longest-first matching of rated entries in ``tokens``.

        Returns ``(start, end, entry)`` spans for rated entries; unrated tokens are
        skipped. "fire hydrant" matches as one phrase even though both words are
        rated on their own.
        """
        rated = self.norms[norm]
        prefixes = self.phrase_prefixes
        spans = []
        i, n = 0, len(tokens)
        while i < n:
            phrase = tokens[i]
            best_end = i + 1 if phrase in rated else -1
            j = i + 1
            while j < n and phrase in prefixes:
                phrase = phrase + " " + tokens[j]
                j += 1
                if phrase in rated:
                    best_end = j
            if best_end > 0:
                spans.append((i, best_end, " ".join(tokens[i:best_end])))
                i = best_end
            else:
                i += 1
        return spans


def read_lexicon(path: str | Path) -> Lexicon:
    """Read a lexicon TSV (gzip) as written by the builder."""
    norms: dict[str, dict[str, float]] = {name: {} for name in NORM_COLUMNS}
    prefixes: set[str] = set()
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        header = handle.readline().rstrip("\n").split("\t")
        if header[0] != "entry" or not set(NORM_COLUMNS) <= set(header):
            raise ValueError(f"{path} is not an icc lexicon (header {header[:4]}...)")
        columns = [(index, name) for index, name in enumerate(header) if name in NORM_COLUMNS]
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            entry = fields[0]
            for index, name in columns:
                if fields[index]:
                    norms[name][entry] = float(fields[index])
            parts = entry.split(" ")
            for k in range(1, len(parts)):
                prefixes.add(" ".join(parts[:k]))
    return Lexicon(norms=norms, phrase_prefixes=frozenset(prefixes))


@lru_cache(maxsize=1)
def default_lexicon() -> Lexicon:
    """The lexicon shipped with the package (loaded once per process)."""
    with resources.as_file(_shipped(LEXICON_FILE)) as path:
        return read_lexicon(path)


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """The single words (letters only) of the shipped lexicon: the English vocabulary, human-rated words, that
    names a caption English (``modeling_icc.scoring.languages``). Read without the norms: about 40 ms."""
    with gzip.open(_shipped(LEXICON_FILE).open("rb"), "rt", encoding="utf-8") as handle:
        handle.readline()  # the header
        entries = (line.split("\t", 1)[0] for line in handle)
        return frozenset(entry for entry in entries if entry.isalpha())


def _shipped(name: str) -> Traversable:
    return resources.files("modeling_icc.models.lite") / "data" / name


def lexicon_sources() -> dict:
    """Provenance and licences of the norm sets in the shipped lexicon."""
    text = _shipped(SOURCES_FILE).read_text(encoding="utf-8")
    return json.loads(text)
