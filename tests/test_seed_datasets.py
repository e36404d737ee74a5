"""The seeds' datasets read as they are downloaded (issue 17): CC3M, COCO captions, VSR and GBC.

Each test runs ``icc score|filter`` on a small real sample under ``tests/fixtures/seed_datasets``
(see its ATTRIBUTION.md), with the format detected from the file's name and first bytes.
"""

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_run import icc

from modeling_icc import LiteScorer
from modeling_icc.curation.io.formats import detect_format
from modeling_icc.curation.selection import KeepRule, keep_mask

SAMPLES = Path(__file__).parent / "fixtures" / "seed_datasets"
CC3M_RAW = SAMPLES / "Validation_GCC-1.1.0-Validation.head.tsv"
CC3M_WITH_HEADER = SAMPLES / "cc3m_validation_captions.head.tsv"
COCO = SAMPLES / "captions_train2014.head.json"
VSR = SAMPLES / "vsr_train.sample.tsv"
GBC = SAMPLES / "gbc_wiki_graphs.sample.jsonl"
LITE = LiteScorer()


def read_tsv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def gbc_graphs() -> list[dict]:
    return [json.loads(line) for line in GBC.read_text(encoding="utf-8").splitlines()]


def node_captions(graph: dict) -> list[str]:
    return [desc["text"] for vertex in graph["vertices"] for desc in vertex["descs"]]


@pytest.fixture
def gbc_parquet(tmp_path) -> Path:
    path = tmp_path / "gbc.parquet"
    pq.write_table(pa.Table.from_pylist(gbc_graphs()), path)
    return path


@pytest.mark.parametrize(
    ("path", "fmt"),
    [(CC3M_RAW, "cc3m"), (CC3M_WITH_HEADER, "tsv"), (COCO, "coco"), (VSR, "tsv"), (GBC, "gbc")],
)
def test_formats_are_detected_from_name_and_content(path, fmt):
    assert detect_format(path) == fmt


def test_gbc_parquet_is_detected(gbc_parquet):
    assert detect_format(gbc_parquet) == "gbc"


@pytest.mark.parametrize("path", [CC3M_RAW, CC3M_WITH_HEADER])
def test_cc3m_with_and_without_header_scores_every_caption(tmp_path, path):
    out = tmp_path / "scored.tsv"
    assert icc("score", "--model", "lite", "-i", path, "-o", out) == 0
    rows = read_tsv(out)
    reference = read_tsv(CC3M_WITH_HEADER)
    assert [row["caption"] for row in rows] == [row["caption"] for row in reference]
    assert [row["url"] for row in rows] == [row["url"] for row in reference]
    expected = LITE.score([row["caption"] for row in reference])
    np.testing.assert_allclose([float(row["icc_score"]) for row in rows], expected, atol=1e-6)


def test_coco_captions_keep_image_and_annotation_ids(tmp_path):
    out = tmp_path / "kept.jsonl"
    assert icc("filter", "--model", "lite", "-i", COCO, "-o", out, "--top-k", "2") == 0
    annotations = json.loads(COCO.read_text())["annotations"]
    scores = LITE.score([item["caption"] for item in annotations])
    chosen = np.flatnonzero(keep_mask(scores, KeepRule(top_k=2)))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(row["image_id"], row["id"]) for row in rows] == [
        (annotations[i]["image_id"], annotations[i]["id"]) for i in chosen
    ]
    assert [row["icc_score"] for row in rows] == pytest.approx(scores[chosen].tolist(), abs=1e-6)


def test_vsr_relatedness_is_another_rule_column(tmp_path, capsys):
    out = tmp_path / "kept.tsv"
    args = ["filter", "--model", "lite", "-i", VSR, "-o", out, "--threshold", "0.85"]
    assert icc(*args, "--and-column", "is_related", "--and-threshold", "1") == 0
    source = read_tsv(VSR)
    scores = LITE.score([row["caption"] for row in source])
    expected = [
        row["id"] for row, score in zip(source, scores, strict=True) if score >= 0.85 and row["is_related"] == "1"
    ]
    assert [row["id"] for row in read_tsv(out)] == expected
    assert 0 < len(expected) < len(source)
    assert "and is_related: score >= 1" in capsys.readouterr().err
    # the CLIP options are the same rule under their old names
    assert icc(*args, "--clip-column", "is_related", "--clip-threshold", "1", "-o", tmp_path / "clip.tsv") == 0
    assert (tmp_path / "clip.tsv").read_bytes() == out.read_bytes()


@pytest.mark.parametrize("container", ["jsonl", "parquet"])
def test_gbc_graphs_score_every_node_caption(tmp_path, gbc_parquet, container):
    source = GBC if container == "jsonl" else gbc_parquet
    out = tmp_path / f"scored.{container}"
    assert icc("score", "--model", "lite", "-i", source, "-o", out) == 0
    rows = (
        pq.read_table(out).to_pylist()
        if container == "parquet"
        else [json.loads(x) for x in out.read_text().splitlines()]
    )
    for row, graph in zip(rows, gbc_graphs(), strict=True):
        captions = node_captions(graph)
        expected = LITE.score(captions)
        assert row["node_captions"] == captions and row["vertices"] == graph["vertices"]
        assert len(row["node_vertex_ids"]) == len(row["node_labels"]) == len(captions)
        np.testing.assert_allclose(row["icc_score"], expected, atol=1e-6)
        assert row["icc_score_min"] == pytest.approx(expected.min(), abs=1e-6)
        assert row["icc_score_mean"] == pytest.approx(expected.mean(), abs=1e-6)


def test_gbc_node_level_filter_keeps_concrete_node_captions(tmp_path, capsys):
    out = tmp_path / "nodes.parquet"  # JSON lines in, Parquet out: GBC's nested vertices survive the conversion
    assert icc("filter", "--model", "lite", "-i", GBC, "-o", out, "--level", "node", "--threshold", "0.6") == 0
    rows = pq.read_table(out).to_pylist()
    assert len(rows) == 3
    kept_total = 0
    for row, graph in zip(rows, gbc_graphs(), strict=True):
        captions = node_captions(graph)
        labels = [vertex["label"] for vertex in graph["vertices"] for _ in vertex["descs"]]
        chosen = np.flatnonzero(LITE.score(captions) >= 0.6)
        assert row["node_captions"] == [captions[i] for i in chosen]
        assert row["node_labels"] == [labels[i] for i in chosen]
        kept_total += len(chosen)
    assert f"node captions kept: {kept_total} of 15" in capsys.readouterr().err


def test_gbc_rows_by_aggregate_in_one_file_and_in_shards(tmp_path, gbc_parquet):
    minima = [LITE.score(node_captions(graph)).min() for graph in gbc_graphs()]
    out = tmp_path / "top.jsonl"
    assert icc("filter", "--model", "lite", "-i", GBC, "-o", out, "--aggregate", "min", "--top-k", "1") == 0
    assert [json.loads(line)["img_url"] for line in out.read_text().splitlines()] == [
        gbc_graphs()[int(np.argmax(minima))]["img_url"]
    ]
    (tmp_path / "in").mkdir()
    shutil.copy(GBC, tmp_path / "in" / "a.jsonl")
    shutil.copy(gbc_parquet, tmp_path / "in" / "b.parquet")
    args = ["filter", "--model", "lite", "-i", tmp_path / "in" / "*", "--aggregate", "min", "--top-k", "2"]
    assert icc(*args, "--output-dir", tmp_path / "kept", "--no-progress") == 0
    kept = [json.loads(line)["img_url"] for line in (tmp_path / "kept" / "a.jsonl").read_text().splitlines()]
    kept += pq.read_table(tmp_path / "kept" / "b.parquet").column("img_url").to_pylist()
    doubled = minima + minima  # the same graphs in both shards: ties go to the first shard
    expected = np.flatnonzero(keep_mask(np.asarray(doubled), KeepRule(top_k=2)))
    assert kept == [(gbc_graphs() * 2)[i]["img_url"] for i in expected]


def test_gbc_node_level_in_sharded_jobs(tmp_path):
    (tmp_path / "in").mkdir()
    shutil.copy(GBC, tmp_path / "in" / "graphs.jsonl")
    args = ["filter", "--model", "lite", "-i", tmp_path / "in" / "*.jsonl", "--level", "node", "--top-k", "1"]
    assert icc(*args, "--output-dir", tmp_path / "kept", "--no-progress") == 0
    rows = [json.loads(line) for line in (tmp_path / "kept" / "graphs.jsonl").read_text().splitlines()]
    for row, graph in zip(rows, gbc_graphs(), strict=True):
        captions = node_captions(graph)
        assert row["node_captions"] == [captions[int(np.argmax(LITE.score(captions)))]]
        assert len(row["node_vertex_ids"]) == len(row["node_labels"]) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["score", "-i", GBC, "--format", "jsonl"], "no column 'caption'"),
        (["filter", "-i", GBC, "--threshold", "0.5"], "aggregate="),
        (["score", "-i", GBC, "--output-format", "txt"], ".txt output cannot hold"),
        (["filter", "-i", GBC, "--level", "node", "--threshold", "0.5", "--show", "2"], "--show"),
        (["score", "-i", VSR, "--format", "coco"], "not valid JSON"),
        (["filter", "-i", GBC, "--aggregate", "min", "--threshold", "0.5", "--node-columns", "x"], "node_columns"),
    ],
)
def test_format_overrides_and_mismatches_are_one_line_errors(capsys, args, message):
    assert icc(args[0], "--model", "lite", *args[1:]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_format_override_reads_a_headerless_cc3m_file_of_any_name(tmp_path):
    renamed = tmp_path / "captions.txt"
    shutil.copy(CC3M_RAW, renamed)
    out = tmp_path / "scored.jsonl"
    assert icc("score", "--model", "lite", "-i", renamed, "--format", "cc3m", "-o", out) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["caption"] for row in rows] == [row["caption"] for row in read_tsv(CC3M_WITH_HEADER)]
    assert all(row["url"].startswith("http") for row in rows)


def test_json_that_is_not_coco_captions_is_named_as_such(tmp_path, capsys):
    other = tmp_path / "chat.json"
    other.write_text('[{"id": 1, "conversations": []}]')
    assert icc("score", "--model", "lite", "-i", other, "--format", "coco") == 2
    assert "not a COCO captions file (no 'annotations' list of objects)" in capsys.readouterr().err
