"""The annotated data shipped inside the package (see ``data/ATTRIBUTION.md``)."""

from __future__ import annotations

import csv
import io
import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

DEV_SPLIT_FILE = "caption_concreteness_dev.csv"
PAPER_EXAMPLES_FILE = "paper_examples.jsonl"
DEMO_CAPTIONS_FILE = "demo_captions.txt"
#: The dev split's frozen internal test partition (issue 16's protocol): its ``sample_id``s.
FROZEN_PARTITION_FILE = "dev_frozen_partition_ids.txt"


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


def dev_split() -> list[dict]:
    """The 303-caption development split: ``sample_id``, ``caption``,
    ``concreteness_annotation`` (0-3 human label) and ``icc_score`` (published model, raw)."""
    return [dict(row) for row in _dev_rows()]


def frozen_partition_ids() -> list[str]:
    """The ``sample_id``s of the dev split's frozen test partition, in file order (``#`` lines are its header)."""
    lines = data_path(FROZEN_PARTITION_FILE).read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def paper_examples() -> list[dict]:
    """The 24 example captions of the paper and official README (``group`` is concrete/abstract)."""
    text = data_path(PAPER_EXAMPLES_FILE).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]
