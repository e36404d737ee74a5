"""The annotated data shipped inside the package (see ``data/ATTRIBUTION.md``)."""

from __future__ import annotations

import csv
import io
import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

DEV_SPLIT_FILE = "caption_concreteness_dev.csv"
FROZEN_PARTITION_FILE = "dev_frozen_partition_ids.txt"
PAPER_EXAMPLES_FILE = "paper_examples.jsonl"
DEMO_CAPTIONS_FILE = "demo_captions.txt"
CC3M_CAPTIONS_FILE = "cc3m_validation_captions.tsv"
LAION_JUNK_FILE = "laion_alttext_junk.tsv"
LAION_SAMPLE_FILE = "laion_alttext_sample.tsv"
TRANSLATIONS_FILE = "caption_translations.jsonl"
SHORT_ENGLISH_FILE = "short_english_captions.txt"
#: The languages of ``caption_translations.jsonl`` besides English.
TRANSLATED_LANGUAGES = ("de", "fr", "es", "zh", "ru", "ja")
#: Distinct CC3M captions the noise stability benchmark measures by default (seed 0).
CC3M_STABILITY_SAMPLE_SIZE = 2000

#: Parts of the dev split: all 303 captions, the 100 frozen test captions, or the 203 others (fit and CV).
DevPartition = Literal["all", "frozen", "fit"]


def data_path(name: str) -> Path:
    """Filesystem path of a shipped data file (the package is installed unzipped)."""
    return Path(str(resources.files("modeling_icc") / "data" / name))


@lru_cache(maxsize=1)
def _dev_rows() -> tuple[dict, ...]:
    text = data_path(DEV_SPLIT_FILE).read_text(encoding="utf-8")
    return tuple(
        {
            "sample_id": row["sample_id"],
            "caption": row["caption"],
            "concreteness_annotation": int(row["concreteness_annotation"]),
            "icc_score": float(row["icc_score"]),
        }
        for row in csv.DictReader(io.StringIO(text))
    )


def dev_split(partition: DevPartition = "all") -> list[dict]:
    """The 303-caption development split: ``sample_id``, ``caption``,
    ``concreteness_annotation`` (0-3 human label) and ``icc_score`` (published model, raw).

    ``partition="frozen"``: only the 100 captions of the frozen internal test partition
    (:func:`frozen_partition_ids`), for reporting a chosen model once; ``"fit"``: the other 203,
    on which models may be fitted and chosen.
    """
    if partition not in ("all", "frozen", "fit"):
        raise ValueError(f"partition must be 'all', 'frozen' or 'fit', got {partition!r}")
    frozen = frozen_partition_ids()
    return [
        dict(row)
        for row in _dev_rows()
        if partition == "all" or (row["sample_id"] in frozen) == (partition == "frozen")
    ]


@lru_cache(maxsize=1)
def frozen_partition_ids() -> frozenset[str]:
    """The ``sample_id`` of the dev split's frozen test partition (``data/dev_frozen_partition_ids.txt``).

    Frozen before mini was built: 100 ids chosen by a seeded hash, never used to fit or choose
    anything. Every id must be a row of the dev split.
    """
    lines = data_path(FROZEN_PARTITION_FILE).read_text(encoding="utf-8").splitlines()
    ids = frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))
    unknown = ids - {row["sample_id"] for row in _dev_rows()}
    if unknown:
        raise ValueError(f"{FROZEN_PARTITION_FILE}: ids not in {DEV_SPLIT_FILE}: {sorted(unknown)[:3]}")
    return ids


def cc3m_captions() -> list[str]:
    """The 15,833 captions of the Conceptual Captions validation split, in file order (unlabelled web alt-text)."""
    with open(data_path(CC3M_CAPTIONS_FILE), encoding="utf-8", newline="") as handle:
        return [row["caption"] for row in csv.DictReader(handle, delimiter="\t")]


def cc3m_image_urls() -> list[str]:
    """The image URLs of the CC3M validation split, in file order (never fetched: real web URLs as text)."""
    with open(data_path(CC3M_CAPTIONS_FILE), encoding="utf-8", newline="") as handle:
        return [row["url"] for row in csv.DictReader(handle, delimiter="\t")]


def laion_junk_texts() -> list[str]:
    """The LAION-400M alt-texts that are one URL or one image file name, as scraped (``ATTRIBUTION.md``)."""
    return _text_column(LAION_JUNK_FILE)


def laion_sample_texts() -> list[str]:
    """The 5,000 alt-texts of the LAION-400M sample, whitespace made single spaces (unlabelled; ``ATTRIBUTION.md``)."""
    return _text_column(LAION_SAMPLE_FILE)


def _text_column(name: str) -> list[str]:
    """The ``text`` column of the shipped TSV file ``name``."""
    with open(data_path(name), encoding="utf-8", newline="") as handle:
        return [row["text"] for row in csv.DictReader(handle, delimiter="\t")]


def caption_translations() -> list[dict]:
    """The 77 captions with their translations (``ATTRIBUTION.md``): ``source``, ``source_id``, ``partition``
    (``fit``, ``frozen``, ``cc3m``), ``label`` (``concrete``, ``abstract`` or ``None``), ``en`` and one field per
    code of :data:`TRANSLATED_LANGUAGES`."""
    lines = data_path(TRANSLATIONS_FILE).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def short_english_captions() -> list[str]:
    """Short English captions (names, numbers, codes, one to three words) a language step must still read."""
    lines = data_path(SHORT_ENGLISH_FILE).read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def cc3m_distinct_captions() -> list[str]:
    """The CC3M validation captions without blanks and repeats, in file order of first occurrence."""
    return list(dict.fromkeys(text for text in cc3m_captions() if text.strip()))


def cc3m_stability_sample(n: int = CC3M_STABILITY_SAMPLE_SIZE, seed: int = 0) -> list[str]:
    """The captions ``benchmarks/quality/cc3m_noise_stability.py`` measures: ``n`` distinct captions drawn
    by ``numpy.random.default_rng(seed)``, in file order. The mini fit's consistency captions are drawn from
    the others (the default sample), so that the benchmark stays out of the fit."""
    import numpy as np

    distinct = cc3m_distinct_captions()
    if not 0 < n <= len(distinct):
        raise ValueError(f"n must be between 1 and {len(distinct)}, the distinct non-blank captions; got {n}")
    picked = np.sort(np.random.default_rng(seed).choice(len(distinct), size=n, replace=False))
    return [distinct[index] for index in picked]


def paper_examples() -> list[dict]:
    """The 24 example captions of the paper and official README (``group`` is concrete/abstract)."""
    text = data_path(PAPER_EXAMPLES_FILE).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]
