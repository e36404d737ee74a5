"""Graph-Based Captioning (GBC) annotations as nested caption columns.

A GBC sample (GBC1M/GBC10M) is a graph whose ``vertices`` each carry a
``label`` (``image``, ``entity``, ``composition`` or ``relation``) and a list of
``descs`` (descriptions with a ``text``). :func:`add_gbc_node_captions` flattens
every description of every vertex, in graph order, into aligned list columns,
ready for :func:`~modeling_icc.add_icc_scores` and node-level
:func:`~modeling_icc.filter_by_icc`.
"""

from __future__ import annotations

from typing import Any

from datasets import Dataset, IterableDataset

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
    dataset: Dataset | IterableDataset, vertices_column: str = "vertices"
) -> Dataset | IterableDataset:
    """Add ``node_captions``, ``node_vertex_ids`` and ``node_labels`` (aligned lists) from GBC ``vertices``.

    Score and keep concrete node captions with::

        data = add_gbc_node_captions(data)
        data = filter_by_icc(data, column="node_captions", level="node", threshold=0.5,
                             node_columns=["node_vertex_ids", "node_labels"])
    """
    return dataset.map(_flatten_batch, batched=True, input_columns=[vertices_column])
