"""``modeling_icc.curation.engines.ray`` on a local Ray instance: parquet in, actor-pool scoring, parquet out."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ray = pytest.importorskip("ray", reason="the [ray] extra is not installed")

from precision import score_atol  # noqa: E402

from modeling_icc import LiteScorer, load_scorer  # noqa: E402
from modeling_icc.curation.engines import ray as icc_ray  # noqa: E402
from modeling_icc.curation.selection import KeepRule, keep_mask  # noqa: E402
from modeling_icc.utils.errors import UserInputError  # noqa: E402
from modeling_icc.utils.provenance import synthetic_captions  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


def write_pool(directory, n_files=2, rows=60):
    captions = synthetic_captions(n_files * rows, seed=4)
    captions[5] = ""
    clip = np.random.default_rng(0).random(n_files * rows)
    table = pa.table({"id": np.arange(n_files * rows), "caption": captions, "clip_score": clip})
    directory.mkdir()
    for i in range(n_files):
        pq.write_table(table.slice(i * rows, rows), directory / f"part-{i}.parquet")
    return table


def read_sorted(directory) -> pa.Table:
    table = pq.read_table(directory)
    return table.take(pa.compute.sort_indices(table, [("id", "ascending")]))


def test_lite_threshold_and_clip_rule_parquet_round_trip(local_ray, tmp_path):
    pool = write_pool(tmp_path / "in")
    ds = ray.data.read_parquet(str(tmp_path / "in"))
    kept = icc_ray.filter_by_icc(ds, threshold=0.5, model="lite", clip=KeepRule(top_fraction=0.5))
    kept.write_parquet(str(tmp_path / "out"))

    scores = LiteScorer().score(pool.column("caption").to_pylist())
    expected = keep_mask(scores, KeepRule(threshold=0.5))
    expected &= keep_mask(pool.column("clip_score").to_numpy(), KeepRule(top_fraction=0.5))  # no ties: exact
    result = read_sorted(tmp_path / "out")
    assert result.column("id").to_pylist() == np.flatnonzero(expected).tolist()
    np.testing.assert_allclose(result.column("icc_score").to_numpy(), scores[expected], atol=1e-6)
    assert "__icc_raw_score" not in result.column_names


def test_other_languages_apart_returns_both_parts(local_ray):
    captions = ["a red car parked on a street", "ein rotes Auto, das an einer Straße parkt", "", "一辆红色汽车"]
    ds = ray.data.from_items([{"id": index, "caption": text} for index, text in enumerate(captions)])
    parts = icc_ray.filter_by_icc(ds, top_k=1, model="lite", other_languages="apart")
    assert sorted(parts) == ["kept", "other_languages"]
    assert [row["id"] for row in parts["kept"].take_all()] == [0]
    apart = sorted(parts["other_languages"].take_all(), key=lambda row: row["id"])
    assert [(row["id"], row["icc_language"]) for row in apart] == [(1, "de"), (3, "zh")]
    assert "__icc_raw_score" not in parts["other_languages"].schema().names


@pytest.mark.dtype
def test_tiny_student_actor_scores_match_the_scorer_and_top_k(local_ray, tmp_path, tiny_student_dir):
    pool = write_pool(tmp_path / "in", n_files=1, rows=50)
    ds = ray.data.read_parquet(str(tmp_path / "in"))
    scored = icc_ray.add_icc_scores(ds, model=str(tiny_student_dir), device="cpu", num_actors=1, map_batch_size=16)
    scored.write_parquet(str(tmp_path / "scored"))
    scorer = load_scorer(tiny_student_dir, device="cpu")  # the default dtype, as the actors use
    reference = scorer.score(pool.column("caption").to_pylist())
    result = read_sorted(tmp_path / "scored")
    np.testing.assert_allclose(result.column("icc_score").to_numpy(), reference, atol=score_atol(scorer))

    top = icc_ray.filter_by_icc(ray.data.read_parquet(str(tmp_path / "scored")), top_k=7).take_all()
    assert np.isnan(reference[5])  # the blank caption: never kept, and np.sort puts NaN last
    cutoff = np.sort(reference[~np.isnan(reference)])[-7]  # documented: every row tied at the cutoff is kept
    assert sorted(row["id"] for row in top) == np.flatnonzero(reference >= cutoff).tolist()
    assert len(top) >= 7


def test_tie_break_column_keeps_exactly_k_rows_with_the_smallest_ids(local_ray):
    captions = ["a red car parked on the street"] * 6 + synthetic_captions(30, seed=9)
    uids = [f"{i * 7919 % 97:032x}" for i in range(len(captions))]  # unique, not in row order
    table = pa.table({"uid": uids, "caption": captions})
    scores = LiteScorer().score(captions)
    tied_score = scores[0]
    k = int((scores > tied_score).sum()) + 2  # the cut falls inside the six identical captions
    ds = ray.data.from_arrow(table).repartition(3)

    kept = icc_ray.filter_by_icc(ds, top_k=k, model="lite", tie_break_column="uid").take_all()
    smallest_tied = sorted(uids[:6])[:2]
    expected = {uid for uid, score in zip(uids, scores, strict=True) if score > tied_score} | set(smallest_tied)
    assert len(kept) == k
    assert {row["uid"] for row in kept} == expected

    every_tie = icc_ray.filter_by_icc(ds, top_k=k, model="lite").take_all()
    assert len(every_tie) == k + 4

    repeated = ray.data.from_arrow(table.set_column(0, "uid", pa.array(["same"] * len(uids))))
    with pytest.raises(UserInputError, match="unique"):
        icc_ray.filter_by_icc(repeated, top_k=k, model="lite", tie_break_column="uid")


def test_ray_rescores_what_another_model_stored(local_ray):
    """A stored icc_score stands for a named model only when it records that model (issue 25, item 5)."""
    captions = synthetic_captions(30, seed=5)
    fake = {"caption": captions, "id": list(range(30)), "icc_score": [1.0] * 30, "icc_model": ["mini"] * 30}
    dataset = ray.data.from_items([dict(zip(fake, row, strict=True)) for row in zip(*fake.values(), strict=True)])
    rows = sorted(icc_ray.filter_by_icc(dataset, threshold=0.5, model="lite").take_all(), key=lambda r: r["id"])
    reused = icc_ray.filter_by_icc(dataset, threshold=0.5, model="mini").count()
    lite = LiteScorer().score(captions)
    assert [row["id"] for row in rows] == np.flatnonzero(lite >= 0.5).tolist()
    assert {row["icc_model"] for row in rows} <= {"lite"} and reused == 30


@pytest.mark.parametrize("rule", [{"threshold": 0.5}, {"top_k": 3}, {"top_fraction": 0.5}])
def test_an_empty_dataset_filters_to_an_empty_dataset(local_ray, rule):
    empty = ray.data.from_arrow(pa.table({"caption": pa.array([], pa.string())}))
    assert icc_ray.filter_by_icc(empty, model="lite", **rule).take_all() == []


def nested_pool() -> pa.Table:
    nodes = [synthetic_captions(3, seed=i) for i in range(5)] + [[]]
    return pa.table({"id": list(range(6)), "nodes": nodes, "kinds": [[f"k{j}" for j in range(len(n))] for n in nodes]})


def test_node_level_filter_keeps_aligned_node_captions_within_rows(local_ray):
    pool = nested_pool()
    threshold = float(np.median(LiteScorer().score(pool.column("nodes")[0].as_py())))
    ds = ray.data.from_arrow(pool).repartition(2)
    kept = icc_ray.filter_by_icc(
        ds, column="nodes", level="node", threshold=threshold, node_columns=["kinds"], model="lite"
    ).take_all()
    assert sorted(row["id"] for row in kept) == list(range(6))  # every row stays, with its passing nodes
    for row in kept:
        source = pool.to_pylist()[row["id"]]
        chosen = np.flatnonzero(LiteScorer().score(source["nodes"]) >= threshold) if source["nodes"] else []
        assert list(row["nodes"]) == [source["nodes"][i] for i in chosen]
        assert list(row["kinds"]) == [source["kinds"][i] for i in chosen]


def test_row_level_ranking_on_a_nested_column_uses_the_aggregate(local_ray):
    pool = nested_pool()
    minima = [LiteScorer().score(nodes).min() if nodes else np.nan for nodes in pool.column("nodes").to_pylist()]
    kept = icc_ray.filter_by_icc(
        ray.data.from_arrow(pool), column="nodes", aggregate="min", top_k=2, model="lite", tie_break_column="id"
    ).take_all()
    assert sorted(row["id"] for row in kept) == sorted(np.argsort(-np.nan_to_num(minima, nan=-1))[:2].tolist())


def test_every_documented_ray_write_names_its_mode():
    """Ray's write_parquet appends by default: a documented example run twice would double every row."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sources = [root / "README.md", *sorted((root / "docs").glob("*.md")), root / "modeling_icc/curation/engines/ray.py"]
    calls = [call for path in sources for call in re.findall(r"\.write_parquet\([^)]*\)", path.read_text("utf-8"))]
    assert calls and all("mode=" in call for call in calls), calls
