"""Graph-Based Captioning (GBC) annotations as nested caption columns.

A GBC sample (GBC1M/GBC10M) is a graph whose ``vertices`` each carry a
``label`` (``image``, ``entity``, ``composition`` or ``relation``) and a list of
``descs`` (descriptions with a ``text``). Every description of every vertex, in
graph order, becomes one item of aligned list columns (``node_captions``,
``node_vertex_ids``, ``node_labels``): added to a ``datasets`` dataset by
:func:`add_gbc_node_captions`, and to every row read by ``icc score|filter`` from
GBC JSON lines or Parquet, ready for scoring and node-level filtering.

For ``icc``, GBC is an adapter on top of the JSONL and Parquet readers: :func:`read` picks the
reader by the file's content and adds the node caption columns; :func:`in_json_lines` and
:func:`in_parquet` tell GBC graphs from other JSON lines or Parquet (they carry ``vertices``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ...utils.locations import is_remote, location, open_to_seek
from . import readers
from .table import CaptionTable

if TYPE_CHECKING:
    from datasets import Dataset, IterableDataset

VERTICES = "vertices"
CAPTIONS = "node_captions"
VERTEX_IDS = "node_vertex_ids"
LABELS = "node_labels"


def gbc_node_captions(vertices: list[dict[str, Any]] | None) -> dict[str, list]:
    """The captions of one GBC graph with, at the same positions, their vertex id and vertex label."""
    out: dict[str, list] = {CAPTIONS: [], VERTEX_IDS: [], LABELS: []}
    for vertex in vertices or []:
        for description in vertex.get("descs") or []:
            out[CAPTIONS].append(description.get("text"))
            out[VERTEX_IDS].append(vertex.get("vertex_id"))
            out[LABELS].append(vertex.get("label"))
    return out


def _flatten_batch(graphs: list[list[dict[str, Any]] | None]) -> dict[str, list]:
    rows = [gbc_node_captions(vertices) for vertices in graphs]
    return {name: [row[name] for row in rows] for name in (CAPTIONS, VERTEX_IDS, LABELS)}


def add_gbc_node_captions(
    dataset: Dataset | IterableDataset, vertices_column: str = VERTICES
) -> Dataset | IterableDataset:
    """Add ``node_captions``, ``node_vertex_ids`` and ``node_labels`` (aligned lists) from GBC ``vertices``.

    Score and keep concrete node captions with::

        data = add_gbc_node_captions(data)
        data = filter_by_icc(data, column="node_captions", level="node", threshold=0.5,
                             node_columns=["node_vertex_ids", "node_labels"])
    """
    return dataset.map(_flatten_batch, batched=True, input_columns=[vertices_column])


def with_node_captions(tables: Iterator[CaptionTable]) -> Iterator[CaptionTable]:
    """Tables of GBC graphs with the node caption columns added (their ``vertices`` kept as they are)."""
    for table in tables:
        yield table.with_values(_flatten_batch(table.values(VERTICES) if len(table) else []))


def read(opened: readers.Input, column: str, rows: int) -> Iterator[CaptionTable]:
    """GBC graphs from JSON lines or Parquet (told apart by the content), with the node caption columns."""
    read_container = readers.read_parquet if readers.is_parquet(opened.source) else readers.read_jsonl
    return with_node_captions(read_container(opened, column, rows))


def written_as(path: str | os.PathLike | None) -> str:
    """The table format GBC graphs are written as by default: the one they were read from."""
    return "parquet" if path is not None and readers.is_parquet(path) else "jsonl"


def in_json_lines(first_line: bytes, path: os.PathLike) -> bool:
    """Whether a JSON lines file holds GBC graphs: its first record carries a ``vertices`` list."""
    try:
        record = json.loads(first_line)
    except ValueError:
        return False
    return isinstance(record, dict) and isinstance(record.get(VERTICES), list)


def in_parquet(first_line: bytes, path: os.PathLike) -> bool:
    """Whether a Parquet file holds GBC graphs: its schema has a ``vertices`` column."""
    if not readers.is_parquet(path):
        return False
    import pyarrow as pa
    import pyarrow.parquet as pq

    place = location(path)
    try:
        if is_remote(place):  # through its fsspec file (pyarrow's own filesystems ignore fsspec's settings)
            with open_to_seek(place, "Parquet") as stream:
                return VERTICES in pq.read_schema(stream).names
        return VERTICES in pq.read_schema(path).names
    except (pa.ArrowInvalid, OSError):  # not readable: the reader says so
        return False
