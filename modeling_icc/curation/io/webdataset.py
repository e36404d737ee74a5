"""webdataset ``.tar`` shards as caption tables (stdlib ``tarfile``; no webdataset dependency).

A shard holds samples as consecutive members sharing a key: ``dir/000123.jpg``,
``dir/000123.txt`` and ``dir/000123.json`` form the sample ``dir/000123`` (the
key is the path up to the first dot of the file name). Each sample becomes one
row: ``__key__``, the ``.json`` member's fields and ``txt`` (the ``.txt``
member). Only text members are read; images are never decoded.

Filtering writes the kept samples' members byte for byte, in input order, plus
one ``KEY.icc.json`` member per sample with the new columns (scores, model).
"""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

KEY_FIELD = "__key__"
TEXT_FIELD = "txt"
SCORES_SUFFIX = ".icc.json"


def split_key(name: str) -> tuple[str, str]:
    """``("dir/000123", "jpg")`` for ``"dir/000123.jpg"`` (webdataset's key convention)."""
    directory, _, base = name.rpartition("/")
    stem, _, extension = base.partition(".")
    return (f"{directory}/{stem}" if directory else stem), extension.lower()


def iter_samples(archive: tarfile.TarFile) -> Iterator[tuple[str, list[tarfile.TarInfo]]]:
    """``(key, members)`` for each run of consecutive file members with the same key."""
    key, members = None, []
    for member in archive:
        if not member.isfile():
            continue
        member_key, _ = split_key(member.name)
        if members and member_key != key:
            yield key, members
            members = []
        key = member_key
        members.append(member)
    if members:
        yield key, members


def read_samples(path: str | Path) -> tuple[list[dict[str, Any]], int]:
    """One record per sample, and how many text/json members could not be decoded.

    A ``.txt`` member that is not UTF-8 is decoded with U+FFFD replacements; a
    ``.json`` member that is not a JSON object contributes no fields. Both are counted.
    """
    records, bad = [], 0
    with tarfile.open(path, "r:*") as archive:
        for key, members in iter_samples(archive):
            record: dict[str, Any] = {KEY_FIELD: key}
            for member in members:
                extension = split_key(member.name)[1]
                if extension not in ("json", TEXT_FIELD):
                    continue
                data = archive.extractfile(member).read()
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    bad += 1
                    text = data.decode("utf-8", errors="replace")
                if extension == TEXT_FIELD:
                    record[TEXT_FIELD] = text
                    continue
                try:
                    fields = json.loads(text)
                except json.JSONDecodeError:
                    fields = None
                if not isinstance(fields, dict):
                    bad += 1
                    continue
                record.update({name: value for name, value in fields.items() if name not in record})
            records.append(record)
    return records, bad


def write_samples(
    source: str | Path, stream: BinaryIO, keep_rows: np.ndarray, sidecar: Callable[[int], dict[str, Any]]
) -> None:
    """Copy the samples at ``keep_rows`` (sample positions in ``source``) to ``stream`` as a tar.

    Members are copied unchanged (headers and bytes), so the same input gives the
    same output bytes; each kept sample also gets ``KEY.icc.json`` holding
    ``sidecar(position)`` (its scores and model).
    """
    wanted = set(int(row) for row in keep_rows)
    with tarfile.open(source, "r:*") as archive, tarfile.open(fileobj=stream, mode="w", format=archive.format) as out:
        for position, (key, members) in enumerate(iter_samples(archive)):
            if position not in wanted:
                continue
            for member in members:
                out.addfile(member, archive.extractfile(member))
            payload = json.dumps(sidecar(position), sort_keys=True).encode("utf-8")
            info = tarfile.TarInfo(f"{key}{SCORES_SUFFIX}")
            info.size, info.mtime, info.mode = len(payload), members[0].mtime, 0o644
            out.addfile(info, io.BytesIO(payload))
