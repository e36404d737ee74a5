"""``add_icc_scores`` / ``filter_by_icc`` on ``datasets.Dataset`` and streaming ``IterableDataset``."""

import json
import os

import datasets
import numpy as np
import pytest
from precision import score_atol

from modeling_icc import (
    ConcretenessScorer,
    LiteScorer,
    add_icc_scores,
    filter_by_icc,
    load_scorer,
)
from modeling_icc.curation.engines import scoring as engine_scoring
from modeling_icc.curation.engines import workers
from modeling_icc.curation.selection import KeepRule, keep_mask
from modeling_icc.scoring import load as scorer_load
from modeling_icc.scoring.load import ModelNotAvailableError
from modeling_icc.utils.errors import UserInputError

datasets.disable_progress_bars()

CAPTIONS = [
    "a man with a white shirt",
    "a great method of quantifying concreteness",
    "",
    None,
    "a red car parked on a street",
    "freedom and justice for all",
    "two dogs playing with a ball on the grass",
    "the meaning of life",
]
LITE = LiteScorer()


def pool() -> datasets.Dataset:
    clip = [0.31, 0.35, 0.2, 0.3, 0.22, 0.4, 0.33, None]
    return datasets.Dataset.from_dict(
        {"uid": [f"u{i}" for i in range(len(CAPTIONS))], "caption": CAPTIONS, "clip": clip}
    )


def expected_scores() -> np.ndarray:
    return LITE.score(CAPTIONS, errors="nan")


@pytest.mark.parametrize("fmt", [None, "numpy", "pandas", "arrow", "torch"])
def test_scores_match_the_scorer_for_every_batch_format(fmt):
    scored = add_icc_scores(pool().with_format(fmt), model="lite", map_batch_size=3)
    scores = np.asarray(scored.with_format(None)["icc_score"], dtype=np.float64)
    np.testing.assert_allclose(scores, expected_scores(), atol=1e-6, equal_nan=True)
    assert scored.features["icc_score"] == datasets.Value("float32")
    assert scored.with_format(None)["uid"] == [f"u{i}" for i in range(len(CAPTIONS))]


@pytest.mark.parametrize("fmt", [None, "arrow", "pandas"])
def test_streaming_scores_equal_in_memory_scores(fmt):
    stream = add_icc_scores(pool().to_iterable_dataset().with_format(fmt), model="lite", map_batch_size=3)
    rows = list(stream.with_format(None))
    assert [row["uid"] for row in rows] == [f"u{i}" for i in range(len(CAPTIONS))]
    np.testing.assert_allclose([row["icc_score"] for row in rows], expected_scores(), atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("rule", [{"threshold": 0.6}, {"top_k": 3}, {"top_fraction": 0.5}])
@pytest.mark.parametrize("streaming", [False, True])
def test_filter_keeps_the_same_rows_as_keep_mask(rule, streaming):
    data = pool().to_iterable_dataset() if streaming else pool()
    kept = filter_by_icc(data, model="lite", map_batch_size=3, **rule)
    uids = [row["uid"] for row in kept]
    mask = keep_mask(expected_scores(), KeepRule(**rule))
    assert uids == [f"u{i}" for i in np.flatnonzero(mask)]
    assert all(not np.isnan(row["icc_score"]) for row in kept)
    assert "__icc_raw_score" not in next(iter(kept))


class Overflowing(ConcretenessScorer):
    """Raw scores above 1 (as the published model can give): all clip to 1.0, only raw order separates them."""

    model_id = "overflowing"

    def _score_valid(self, texts):
        return np.array([1.0 + len(text) / 100 for text in texts], dtype=np.float32)


def test_top_k_ranks_by_raw_scores_when_scores_are_clipped():
    captions = ["a dog", "a long caption about a dog", "a cat on a mat", "a mid caption"]
    data = datasets.Dataset.from_dict({"caption": captions})
    kept = filter_by_icc(data, model=Overflowing(), top_k=2)
    assert kept["caption"] == ["a long caption about a dog", "a cat on a mat"]
    assert kept["icc_score"] == [1.0, 1.0]


def test_existing_score_column_is_used_when_no_model_is_named():
    data = datasets.Dataset.from_dict({"caption": ["a", "b", "c"], "icc_score": [0.2, 0.9, 0.5]})
    kept = filter_by_icc(data, top_k=2)
    assert kept["caption"] == ["b", "c"]
    with pytest.raises(ModelNotAvailableError):  # a model named is used (these scores record none), not ignored
        filter_by_icc(data, top_k=2, model="/no/such/model")


def test_clip_rule_keeps_rows_passing_both():
    clip = KeepRule(top_fraction=0.5)
    for data in (pool(), pool().to_iterable_dataset()):
        kept = [row["uid"] for row in filter_by_icc(data, model="lite", threshold=0.5, clip=clip, clip_column="clip")]
        clip_values = np.array([np.nan if v is None else v for v in pool()["clip"]])
        both = keep_mask(expected_scores(), KeepRule(threshold=0.5)) & keep_mask(clip_values, clip)
        assert kept == [f"u{i}" for i in np.flatnonzero(both)]


def gbc_like() -> datasets.Dataset:
    return datasets.Dataset.from_dict(
        {
            "id": [0, 1, 2, 3],
            "nodes": [
                ["a red car on a street", "freedom", "a brown dog"],
                ["the concept of time", "an idea"],
                [],
                None,
            ],
            "kinds": [["image", "entity", "relation"], ["image", "entity"], [], None],
        }
    )


def test_nested_column_gets_per_row_lists_and_aggregates():
    scored = add_icc_scores(gbc_like(), column="nodes", model="lite", map_batch_size=2)
    rows = scored.to_list()
    for row in rows[:2]:
        expected = LITE.score(row["nodes"])
        np.testing.assert_allclose(row["icc_score"], expected, atol=1e-6)
        assert row["icc_score_min"] == pytest.approx(expected.min(), abs=1e-6)
        assert row["icc_score_mean"] == pytest.approx(expected.mean(), abs=1e-6)
        assert row["icc_score_max"] == pytest.approx(expected.max(), abs=1e-6)
    assert rows[2]["icc_score"] == [] and np.isnan(rows[2]["icc_score_min"])
    assert rows[3]["icc_score"] is None and np.isnan(rows[3]["icc_score_mean"])
    assert scored.features["icc_score"] == datasets.List(datasets.Value("float32"))


@pytest.mark.parametrize("streaming", [False, True])
def test_node_level_filter_keeps_aligned_node_columns(streaming):
    data = gbc_like().to_iterable_dataset() if streaming else gbc_like()
    threshold = float(np.median(LITE.score(gbc_like()[0]["nodes"])))  # keeps 2 of the first row's 3 nodes
    kept = list(
        filter_by_icc(data, column="nodes", level="node", threshold=threshold, node_columns=["kinds"], model="lite")
    )
    assert [row["id"] for row in kept] == [0, 1, 2, 3]
    assert len(kept[0]["nodes"]) == 2
    for row, source in zip(kept[:2], gbc_like().to_list()[:2], strict=True):
        scores = LITE.score(source["nodes"])
        chosen = np.flatnonzero(scores >= threshold)
        assert row["nodes"] == [source["nodes"][i] for i in chosen]
        assert row["kinds"] == [source["kinds"][i] for i in chosen]
        np.testing.assert_allclose(row["icc_score"], scores[chosen], atol=1e-6)
        if len(chosen):
            assert row["icc_score_min"] == pytest.approx(scores[chosen].min(), abs=1e-6)
    assert kept[2]["nodes"] == [] and kept[3]["nodes"] is None


@pytest.mark.parametrize("streaming", [False, True])
def test_row_level_filter_on_nested_column_uses_the_aggregate(streaming):
    data = gbc_like().to_iterable_dataset() if streaming else gbc_like()
    kept = [row["id"] for row in filter_by_icc(data, column="nodes", aggregate="max", top_k=1, model="lite")]
    maxima = [LITE.score(row["nodes"]).max() for row in gbc_like().to_list()[:2]]
    assert kept == [int(np.argmax(maxima))]
    with pytest.raises(UserInputError, match="aggregate="):
        filter_by_icc(gbc_like(), column="nodes", threshold=0.5, model="lite")


def test_misaligned_node_column_is_a_clear_error():
    data = gbc_like().map(lambda row: {"kinds": (row["kinds"] or [])[:1]})
    with pytest.raises(UserInputError, match="one item per caption"):
        filter_by_icc(data, column="nodes", level="node", threshold=0.5, node_columns=["kinds"], model="lite")


def _empty_stream(features: datasets.Features) -> datasets.IterableDataset:
    def no_rows():
        yield from ()

    return datasets.IterableDataset.from_generator(no_rows, features=features)


@pytest.mark.parametrize("rule", [{"threshold": 0.5}, {"top_fraction": 0.5}, {"top_k": 3}])
def test_an_empty_dataset_filters_to_an_empty_dataset_with_the_score_column(rule):
    untyped = datasets.Dataset.from_dict({"caption": []})  # the reproduction: a "null" column
    typed = datasets.Dataset.from_dict(
        {"caption": []}, features=datasets.Features({"caption": datasets.Value("string")})
    )
    for empty in (untyped, typed, typed.with_format("numpy")):
        kept = filter_by_icc(empty, model="lite", **rule)
        assert kept.num_rows == 0 and kept.column_names == ["caption", "icc_score", "icc_model", "icc_language"]
        assert kept.features["icc_score"] == datasets.Value("float32")
    stream = filter_by_icc(_empty_stream(typed.features), model="lite", **rule)
    assert list(stream) == [] and "icc_score" in stream.features

    nodes = datasets.Dataset.from_dict({"caption": [["a dog", "a cat"]]}).select([])
    assert filter_by_icc(nodes, model="lite", level="node", **rule).num_rows == 0
    assert filter_by_icc(nodes, model="lite", aggregate="min", **rule).column_names[:2] == ["caption", "icc_score"]


def test_scoring_an_empty_dataset_adds_the_score_columns():
    empty = datasets.Dataset.from_dict({"caption": []})
    assert add_icc_scores(empty, model="lite", raw_column="raw").features == datasets.Features(
        {
            "caption": datasets.Value("null"),
            "icc_score": datasets.Value("float32"),
            "raw": datasets.Value("float32"),
            "icc_model": datasets.Value("string"),
            "icc_language": datasets.Value("string"),
        }
    )
    nested = add_icc_scores(datasets.Dataset.from_dict({"caption": [["a dog"]]}).select([]), model="lite")
    aggregates = ["icc_score_min", "icc_score_mean", "icc_score_max"]
    assert nested.column_names == ["caption", "icc_score", *aggregates, "icc_model", "icc_language"]
    stream = add_icc_scores(_empty_stream(datasets.Features({"caption": datasets.Value("string")})), model="lite")
    assert list(stream) == [] and stream.features["icc_score"] == datasets.Value("float32")


def test_user_errors():
    with pytest.raises(UserInputError, match="no column 'text'; available columns: uid, caption, clip"):
        add_icc_scores(pool(), column="text", model="lite")
    with pytest.raises(UserInputError, match="exactly one"):
        filter_by_icc(pool(), threshold=0.5, top_k=3, model="lite")
    with pytest.raises(UserInputError, match="num_proc"):
        add_icc_scores(pool().to_iterable_dataset(), model="lite", num_proc=2)
    with pytest.raises(TypeError, match="DatasetDict"):
        add_icc_scores(datasets.DatasetDict({"train": pool()}), model="lite")


def test_scorer_is_loaded_once_per_process(tiny_student_dir, monkeypatch):
    loads = []
    real = scorer_load._load
    monkeypatch.setattr(scorer_load, "_load", lambda *a, **k: loads.append(a) or real(*a, **k))
    scorer_load.clear_scorer_cache()
    add_icc_scores(pool(), model=str(tiny_student_dir), device="cpu", map_batch_size=2)
    list(add_icc_scores(pool().to_iterable_dataset(), model=str(tiny_student_dir), device="cpu", map_batch_size=2))
    assert len(loads) == 1


def test_device_for_rank_spreads_processes_over_gpus():
    assert workers.device_for_rank(None, 0, cuda_devices=2) == "cuda:0"
    assert workers.device_for_rank("cuda", 3, cuda_devices=2) == "cuda:1"
    assert workers.device_for_rank("cuda:1", 0, cuda_devices=2) == "cuda:1"
    assert workers.device_for_rank("cpu", 1, cuda_devices=2) == "cpu"
    assert workers.device_for_rank(None, 1, cuda_devices=0) is None
    assert workers.device_for_rank(None, None, cuda_devices=2) is None


@pytest.mark.dtype
def test_num_proc_places_each_process_by_rank_and_loads_once(tiny_student_dir, tmp_path, monkeypatch):
    """Two processes on CPU; the placement they would get on a 2-GPU machine is recorded per process."""
    log = tmp_path / "placement.jsonl"
    real_load = scorer_load._load

    def record_device(device, rank, cuda_devices=None):
        with log.open("a") as handle:
            handle.write(json.dumps({"pid": os.getpid(), "event": "place", "rank": rank}) + "\n")
            handle.write(
                json.dumps({"pid": os.getpid(), "event": "gpu", "device": workers.device_for_rank(device, rank, 2)})
                + "\n"
            )
        return "cpu"

    def record_load(*args, **kwargs):
        with log.open("a") as handle:
            handle.write(json.dumps({"pid": os.getpid(), "event": "load", "device": kwargs.get("device")}) + "\n")
        return real_load(*args, **kwargs)

    captions = [c or "" for c in CAPTIONS] * 4
    scorer = load_scorer(tiny_student_dir, device="cpu")  # the reference, loaded before loads are recorded
    reference = scorer.score(captions, errors="nan")
    monkeypatch.setattr(engine_scoring, "device_for_rank", record_device)
    monkeypatch.setattr(scorer_load, "_load", record_load)
    scorer_load.clear_scorer_cache()
    scored = add_icc_scores(
        datasets.Dataset.from_dict({"caption": captions}), model=str(tiny_student_dir), num_proc=2, map_batch_size=4
    )
    scores = np.asarray(scored["icc_score"], dtype=float)
    np.testing.assert_allclose(scores, reference, atol=score_atol(scorer), equal_nan=True)

    events = [json.loads(line) for line in log.read_text().splitlines()]
    ranks_by_pid: dict[int, set] = {}
    for event in events:
        if event["event"] == "place":
            ranks_by_pid.setdefault(event["pid"], set()).add(event["rank"])
    assert sorted(rank for ranks in ranks_by_pid.values() for rank in ranks) == [0, 1]
    assert all(len(ranks) == 1 for ranks in ranks_by_pid.values())
    assert {e["device"] for e in events if e["event"] == "gpu"} == {"cuda:0", "cuda:1"}
    loads = [e["pid"] for e in events if e["event"] == "load"]
    assert sorted(loads) == sorted(ranks_by_pid) and all(e["device"] == "cpu" for e in events if e["event"] == "load")


def test_gbc_graphs_flatten_to_aligned_node_columns_and_filter():
    from modeling_icc.curation.io.gbc import add_gbc_node_captions

    def vertex(vertex_id, label, *texts):
        return {"vertex_id": vertex_id, "label": label, "descs": [{"text": t, "label": "short"} for t in texts]}

    graph = [
        vertex("", "image", "a red car parked on a street", "the essence of speed"),
        vertex("car", "entity", "a shiny red car"),
        vertex("car|street", "relation", "the car is on the street"),
    ]
    data = datasets.Dataset.from_dict({"img_url": ["u0", "u1"], "vertices": [graph, []]})
    flat = add_gbc_node_captions(data)
    first = flat[0]
    assert first["node_captions"] == [
        "a red car parked on a street",
        "the essence of speed",
        "a shiny red car",
        "the car is on the street",
    ]
    assert first["node_vertex_ids"] == ["", "", "car", "car|street"]
    assert first["node_labels"] == ["image", "image", "entity", "relation"]
    scores = LITE.score(first["node_captions"])
    kept = filter_by_icc(
        flat,
        column="node_captions",
        level="node",
        top_k=2,
        node_columns=["node_vertex_ids", "node_labels"],
        model="lite",
    )[0]
    chosen = np.flatnonzero(keep_mask(scores, KeepRule(top_k=2)))
    assert kept["node_captions"] == [first["node_captions"][i] for i in chosen]
    assert kept["node_vertex_ids"] == [first["node_vertex_ids"][i] for i in chosen]
    assert kept["node_labels"] == [first["node_labels"][i] for i in chosen]
