"""Caption sets for teacher training and scoring, from local tables, LLaVA's chat.json, or the Hub."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..curation.io.tables import TEXT_COLUMN, infer_format, read_table
from ..utils.errors import UserInputError


def count_words(caption: str) -> int:
    """Caption length in words (whitespace-separated), the unit of length standardization."""
    return len(caption.split())


@dataclass
class CaptionSet:
    """Captions with stable row ids (strings), in source order."""

    ids: list[str]
    captions: list[str]

    def __post_init__(self) -> None:
        if len(self.ids) != len(self.captions):
            raise ValueError("ids and captions differ in length")
        if len(set(self.ids)) != len(self.ids):
            raise UserInputError("caption ids are not unique; pick an id column with unique values")

    def __len__(self) -> int:
        return len(self.captions)

    def head(self, n: int | None) -> CaptionSet:
        return self if n is None else CaptionSet(self.ids[:n], self.captions[:n])


def load_captions(
    source: str | os.PathLike,
    column: str = TEXT_COLUMN,
    id_column: str | None = None,
    split: str = "train",
    max_samples: int | None = None,
) -> CaptionSet:
    """Read captions from ``.txt``/``.jsonl``/``.csv``/``.tsv``/``.parquet``, LLaVA's ``chat.json``
    (the assistant turn of each conversation is the caption), or a Hub dataset id.

    Rows whose caption is blank or not a string are dropped (a teacher cannot score
    them); ids come from ``id_column``, LLaVA's ``id``, or the row number.
    """
    path = Path(source).expanduser()
    if path.suffix.lower() == ".json" and path.is_file() and _is_json_array(path):
        ids, captions = _read_llava_chat(path)
    elif path.exists():
        table = read_table(path, infer_format(path), column=column)
        ids = _ids_from_records(table.records or table.arrow.to_pylist(), id_column, path)
        captions = table.captions
    else:
        ids, captions = _read_hub_dataset(os.fspath(source), column, id_column, split)
    keep = [i for i, caption in enumerate(captions) if isinstance(caption, str) and caption.strip()]
    return CaptionSet([ids[i] for i in keep], [captions[i].strip() for i in keep]).head(max_samples)


def _is_json_array(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(64).lstrip().startswith(b"[")


def _read_llava_chat(path: Path) -> tuple[list[str], list[str]]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    ids, captions = [], []
    for number, row in enumerate(rows):
        turns = row.get("conversations") if isinstance(row, dict) else None
        if not turns:
            raise UserInputError(f"{path}: entry {number} has no 'conversations' (expected LLaVA's chat.json)")
        answer = next((turn.get("value") for turn in turns if turn.get("from") in ("gpt", "assistant")), None)
        ids.append(str(row.get("id", number)))
        captions.append(answer)
    return ids, captions


def _ids_from_records(records: list[dict], id_column: str | None, name: object) -> list[str]:
    if id_column is None:
        return [str(i) for i in range(len(records))]
    if records and id_column not in records[0]:
        raise UserInputError(f"{name}: no id column {id_column!r}")
    return [str(record.get(id_column)) for record in records]


def _read_hub_dataset(name: str, column: str, id_column: str | None, split: str) -> tuple[list[str], list[str]]:
    from datasets import load_dataset

    try:
        dataset = load_dataset(name, split=split)
    except Exception as error:  # datasets raises many types for "not found / offline"
        raise UserInputError(f"{name!r} is neither a local file nor a loadable Hub dataset ({error})") from None
    if column not in dataset.column_names:
        raise UserInputError(f"{name}: no column {column!r}; available: {', '.join(dataset.column_names)}")
    ids = [str(v) for v in dataset[id_column]] if id_column else [str(i) for i in range(len(dataset))]
    return ids, list(dataset[column])
