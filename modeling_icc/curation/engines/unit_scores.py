"""Where a job's first pass leaves each unit's scores for the second: work files, or a shard's saved scores.

A top-k / top-fraction job scores every unit before it writes any (:func:`~.passes.run_passes`). For each
unit the first pass keeps, chunk by chunk, the raw score and the language of every caption, each ranking rule's
value per row and a hash of the captions read; the cuts are fitted over the ranking values of every unit, and the second
pass writes each unit with the scores kept for it, after checking that it reads the same captions again
(an input rewritten in place between the passes, even with the same rows in another order, is refused).

- :class:`WorkFileScores`: a single-file job's, appended to work files beside its output as the chunks are
  scored (4 bytes a caption and 8 its language code, 4 or 8 a ranking value), gone with the job;
- :class:`SavedScores`: a shard's, one ``.npz`` in the output directory's work folder, written whole when the
  shard is scored (a shard is read as one table), kept across runs so that a resumed job scores it only once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from ...utils.atomic_files import atomic_file
from ...utils.errors import UserInputError
from ...utils.locations import Location, is_file
from .spill import SpilledArrays

#: One scored chunk as the first pass keeps it: raw scores, each ranking rule's values, the captions' hash, and the
#: captions' languages (:func:`languages_array`).
ScoredChunk = tuple[np.ndarray, dict[str, np.ndarray], str, np.ndarray]
#: What the second pass reads of a chunk: raw scores, the captions' hash (``None``: not kept by an older icc) and
#: their languages (:func:`languages_list`; ``None``: not kept by an older icc, named again).
KeptChunk = tuple[np.ndarray, str | None, list[str | None] | None]


#: Bytes a kept language code takes: the longest code is ``und-`` and a script's four letters (``und-Hani``);
#: the identifier's are two or three letters. One width for every chunk, so that what a chunk holds in memory
#: does not depend on which codes it has.
LANGUAGE_CODE_BYTES = 8


def languages_array(languages: Sequence[str | None]) -> np.ndarray:
    """Language codes as an ASCII array to keep on disk (empty for a blank or non-text caption): no object
    arrays, which ``np.load`` would have to unpickle."""
    codes = np.array([code or "" for code in languages], dtype=np.bytes_)
    if codes.dtype.itemsize > LANGUAGE_CODE_BYTES:
        longest = max(filter(None, languages), key=len)
        raise ValueError(f"a language code longer than {LANGUAGE_CODE_BYTES} characters: {longest}")
    return codes.astype(f"S{LANGUAGE_CODE_BYTES}")


def languages_list(codes: np.ndarray) -> list[str | None]:
    """The language codes :func:`languages_array` kept (one string object per distinct code)."""
    distinct, inverse = np.unique(codes, return_inverse=True)
    names = [code.decode("ascii") or None for code in distinct.tolist()]
    return [names[index] for index in inverse.tolist()]


class UnitScores(Protocol):
    """The first pass's scores of one unit, kept for the cuts and the second pass."""

    def saved(self, ranked: Iterable[str]) -> bool:
        """Whether the unit's scores, with the values of the ``ranked`` rules, are kept already."""

    def save(self, chunks: Iterable[ScoredChunk], before_commit: Callable[[], None] | None = None) -> None:
        """Keep the scores of every chunk of the unit, in order."""

    @property
    def tables(self) -> int:
        """How many tables (chunks) of the unit the scores are kept for."""

    def ranking(self, name: str) -> Iterable[np.ndarray]:
        """Rule ``name``'s values, one array per table, read anew each time it is iterated."""

    def scores(self) -> Iterator[KeptChunk]:
        """The raw scores, captions' hash and languages of each chunk, in order."""

    def changed(self, source: object) -> UserInputError:
        """The error for an input whose captions are not those these scores are of."""


@dataclass
class WorkFileScores:
    """A single-file job's first-pass scores, appended to work files as chunks are scored (see the module doc).

    ``work_file()`` makes each work file (beside the job's output, removed when the job ends).
    """

    work_file: Callable[[], Path]
    _raw: SpilledArrays | None = None
    _languages: SpilledArrays | None = None
    _ranking: dict[str, SpilledArrays] = field(default_factory=dict)
    _digests: list[str] = field(default_factory=list)

    def saved(self, ranked: Iterable[str]) -> bool:
        return self._raw is not None

    def save(self, chunks: Iterable[ScoredChunk], before_commit: Callable[[], None] | None = None) -> None:
        self._raw, self._languages = SpilledArrays(self.work_file()), SpilledArrays(self.work_file())
        for raw, ranking, digest, languages in chunks:
            self._raw.append(raw)
            self._languages.append(languages)
            for name, values in ranking.items():
                if name not in self._ranking:
                    self._ranking[name] = SpilledArrays(self.work_file())
                self._ranking[name].append(values)
            self._digests.append(digest)

    @property
    def tables(self) -> int:
        return len(self._digests)

    def ranking(self, name: str) -> Iterable[np.ndarray]:
        return self._ranking[name]

    def scores(self) -> Iterator[KeptChunk]:
        for raw, digest, languages in zip(self._raw, self._digests, self._languages, strict=True):
            yield raw, digest, languages_list(languages)

    def changed(self, source: object) -> UserInputError:
        return UserInputError(
            "the input changed between the two passes of this job (its captions are not the ones scored); "
            "run the command again once nothing rewrites it"
        )


@dataclass(frozen=True)
class SavedScores:
    """A shard's first-pass scores in one ``.npz`` file (``icc_raw``, ``captions_digest``, ``icc_language`` and
    ``rank_NAME`` arrays), written atomically when the shard is scored; ``path`` lies in the output directory's work
    folder. Files of an older icc may lack the digest (then not checked), the languages (then named again) or the
    ranking values (then not ``saved``)."""

    path: Location

    def saved(self, ranked: Iterable[str]) -> bool:
        if not is_file(self.path):  # on a store, a failure is raised rather than taken for "not saved"
            return False
        with self.path.open("rb") as stream, np.load(stream, allow_pickle=False) as arrays:
            return all(f"rank_{name}" in arrays.files for name in ranked)

    def save(self, chunks: Iterable[ScoredChunk], before_commit: Callable[[], None] | None = None) -> None:
        [(raw, ranking, digest, languages)] = chunks  # a shard is read as one table
        with atomic_file(self.path, before_commit) as stream:  # a work file: a link there is replaced
            ranks = {f"rank_{name}": values for name, values in ranking.items()}
            np.savez(stream, icc_raw=raw, captions_digest=np.array(digest), icc_language=languages, **ranks)

    #: A shard is read as one table.
    tables = 1

    def ranking(self, name: str) -> Iterable[np.ndarray]:
        return _SavedRanking(self, name)

    def scores(self) -> Iterator[KeptChunk]:
        with self.path.open("rb") as stream, np.load(stream, allow_pickle=False) as arrays:
            digest = str(arrays["captions_digest"]) if "captions_digest" in arrays.files else None
            languages = languages_list(arrays["icc_language"]) if "icc_language" in arrays.files else None
            yield arrays["icc_raw"], digest, languages

    def changed(self, source: object) -> UserInputError:
        # The directory's record and every shard's cuts are of the input as it was scored: only a new start works.
        directory = self.path.parent.parent
        return UserInputError(
            f"{source} changed since its scores were saved (its captions are not those scored), and the cuts "
            f"span every shard: once nothing rewrites it, use a new --output-dir, or delete {directory} to start over"
        )


@dataclass(frozen=True)
class _SavedRanking:
    """One rule's saved values of a shard, read from disk on each iteration (one shard in memory at a time)."""

    scores: SavedScores
    name: str

    def __iter__(self) -> Iterator[np.ndarray]:
        with self.scores.path.open("rb") as stream, np.load(stream, allow_pickle=False) as arrays:
            yield arrays[f"rank_{self.name}"]


@dataclass(frozen=True)
class ChainedRanking:
    """One rule's values of every unit, in unit then chunk order, read anew on each iteration: what the cuts
    are fitted over, in passes, holding one chunk's values at a time."""

    units: Sequence[UnitScores]
    name: str

    def __iter__(self) -> Iterator[np.ndarray]:
        for unit in self.units:
            yield from unit.ranking(self.name)
