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
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ...utils.locations import Location, is_remote, open_to_seek
from .text import LineDecoder

KEY_FIELD = "__key__"
TEXT_FIELD = "txt"
SCORES_SUFFIX = ".icc.json"


def split_key(name: str) -> tuple[str, str]:
    """``("dir/000123", "jpg")`` for ``"dir/000123.jpg"`` (webdataset's key convention)."""
    directory, _, base = name.rpartition("/")
    stem, _, extension = base.partition(".")
    return (f"{directory}/{stem}" if directory else stem), extension.lower()


def iter_samples(archive: tarfile.TarFile) -> Iterator[tuple[str, list[tarfile.TarInfo]]]:
    """``(key, members)`` for each run of consecutive file members with the same key.

    Members are read one by one and forgotten once their sample is yielded (``TarFile``
    would otherwise keep every header of the archive in memory).
    """
    key, members = None, []
    while (member := archive.next()) is not None:
        if not member.isfile():
            continue
        member_key, _ = split_key(member.name)
        if members and member_key != key:
            yield key, members
            members = []
            archive.members.clear()
        key = member_key
        members.append(member)
    if members:
        yield key, members


#: ``tarfile``'s mode for webdataset shards: plain tar (compressed ones are refused before they are read,
#: ``compression.refuse_compressed``). Not ``"r:*"``, which tries every decompressor in turn: LZMA's reads
#: a file that is no xz stream to its end, minutes for gigabytes of zeros.
TAR_READ_MODE = "r:"


@contextmanager
def _archive(source: str | Path | Location) -> Iterator[tarfile.TarFile]:
    """``source`` opened as a tar archive: a local file by name, a remote one through its fsspec file."""
    if not is_remote(source):
        with tarfile.open(source, TAR_READ_MODE) as archive:
            yield archive
        return
    with open_to_seek(source, "a tar file") as raw, tarfile.open(fileobj=raw, mode=TAR_READ_MODE) as archive:
        yield archive


def iter_records(path: str | Path | Location) -> Iterator[tuple[dict[str, Any], int]]:
    """One record per sample, with how many of its text/json members could not be decoded.

    A ``.txt`` member that is not UTF-8 is decoded with U+FFFD replacements (lone
    surrogates in a ``.json`` member too); a ``.json`` member that is not a JSON object
    contributes no fields. Each is counted.
    """
    with _archive(path) as archive:
        for key, members in iter_samples(archive):
            record: dict[str, Any] = {KEY_FIELD: key}
            decoder = LineDecoder()
            for member in members:
                extension = split_key(member.name)[1]
                if extension not in ("json", TEXT_FIELD):
                    continue
                data = archive.extractfile(member).read()
                before = decoder.bad
                text = decoder.decode(data)
                if extension == TEXT_FIELD:
                    record[TEXT_FIELD] = text
                    continue
                try:
                    fields = decoder.clean_json(json.loads(text), data, counted=decoder.bad > before)
                except json.JSONDecodeError:
                    fields = None
                if not isinstance(fields, dict):
                    decoder.bad += 1
                    continue
                record.update({name: value for name, value in fields.items() if name not in record})
            yield record, decoder.bad


#: ``copy(n_samples, keep_rows, sidecar)``: see :func:`copy_samples`.
CopySamples = Callable[[int, np.ndarray, Callable[[int], dict[str, Any]]], None]


@contextmanager
def copy_samples(source: str | Path | Location, stream: BinaryIO) -> Iterator[CopySamples]:
    """Copy chosen samples of ``source`` to ``stream`` as a tar, in order, reading ``source`` once.

    Yields ``copy(n_samples, keep_rows, sidecar)``: it reads the next ``n_samples``
    samples and copies those at ``keep_rows`` (positions among them). Members are
    copied unchanged (headers and bytes), so the same input gives the same output
    bytes; each kept sample also gets ``KEY.icc.json`` holding ``sidecar(position)``.
    """
    with (
        _archive(source) as archive,
        tarfile.open(fileobj=stream, mode="w", format=archive.format) as out,
    ):
        samples = iter_samples(archive)

        def copy(n_samples: int, keep_rows: np.ndarray, sidecar: Callable[[int], dict[str, Any]]) -> None:
            wanted = set(int(row) for row in keep_rows)
            for position in range(n_samples):
                key, members = next(samples)
                if position not in wanted:
                    continue
                for member in members:
                    out.addfile(member, archive.extractfile(member))
                payload = json.dumps(sidecar(position), sort_keys=True).encode("utf-8")
                info = tarfile.TarInfo(f"{key}{SCORES_SUFFIX}")
                info.size, info.mtime, info.mode = len(payload), members[0].mtime, 0o644
                out.addfile(info, io.BytesIO(payload))

        yield copy
