"""Sharded, resumable teacher scoring: a killed run resumes without duplicates or changes."""

import pyarrow.parquet as pq
import pytest

from modeling_icc.teachers import SHARD_SCHEMA, CaptionSet, read_shards, score_to_shards
from modeling_icc.testing import training_corpus
from modeling_icc.testing.teachers import tiny_sba
from modeling_icc.utils.errors import UserInputError

pytestmark = pytest.mark.usefixtures("single_thread")


@pytest.fixture(scope="module")
def teacher():
    return tiny_sba(generation=dict(num_beams=2, num_return_sequences=2, max_new_tokens=6))


@pytest.fixture(scope="module")
def captions():
    texts = training_corpus()[:22]
    return CaptionSet([f"id{i}" for i in range(len(texts))], texts)


class Killed(RuntimeError):
    pass


class DiesAfter:
    """Delegates to a teacher and raises after ``batches`` batches, like a job killed mid-run."""

    def __init__(self, teacher, batches: int) -> None:
        self.teacher, self.batches, self.name = teacher, batches, teacher.name

    def provenance(self):
        return self.teacher.provenance()

    def score(self, captions, row_ids, seed):
        if self.batches == 0:
            raise Killed
        self.batches -= 1
        return self.teacher.score(captions, row_ids, seed)


def test_interrupted_run_resumes_to_the_uninterrupted_result(teacher, captions, tmp_path, capsys):
    options = dict(seed=0, shard_size=5, batch_size=2)
    score_to_shards(teacher, captions, tmp_path / "clean", **options)
    with pytest.raises(Killed):
        score_to_shards(DiesAfter(teacher, batches=7), captions, tmp_path / "resumed", **options)
    finished = sorted(p.name for p in (tmp_path / "resumed").glob("shard-*.parquet"))
    assert finished == ["shard-00000.parquet", "shard-00001.parquet"]  # 7 batches of 2 = 2 whole shards + part
    assert not list((tmp_path / "resumed").glob(".*tmp"))
    with pytest.raises(UserInputError, match="unfinished"):
        read_shards(tmp_path / "resumed")
    capsys.readouterr()
    score_to_shards(teacher, captions, tmp_path / "resumed", **options)
    assert "sba teacher, resumed: 2 of 5 shards done before, 3 this run" in capsys.readouterr().err
    clean, resumed = read_shards(tmp_path / "clean"), read_shards(tmp_path / "resumed")
    assert resumed.num_rows == len(captions) == len(set(resumed.column("id").to_pylist()))
    assert resumed.column("id").to_pylist() == captions.ids
    assert resumed.equals(clean)


def test_rows_carry_the_documented_columns(teacher, captions, tmp_path):
    score_to_shards(teacher, captions.head(3), tmp_path, seed=7, shard_size=10)
    table = pq.read_table(tmp_path / "shard-00000.parquet")
    assert table.schema.equals(SHARD_SCHEMA)
    row = table.to_pylist()[0]
    assert row["caption"] == captions.captions[0] and row["n_words"] == len(captions.captions[0].split())
    assert len(row["candidates"]) == 2 and row["best_candidate"] in row["candidates"]
    assert 0.0 <= row["similarity"] <= 1.0 and row["teacher"] == "sba" and row["seed"] == 7
    assert '"versions"' in row["teacher_provenance"]


def test_a_different_run_in_the_same_directory_is_refused(teacher, captions, tmp_path):
    score_to_shards(teacher, captions.head(4), tmp_path, seed=0, shard_size=2)
    with pytest.raises(UserInputError, match="seed"):
        score_to_shards(teacher, captions.head(4), tmp_path, seed=1, shard_size=2)
    with pytest.raises(UserInputError, match="captions_sha256"):
        score_to_shards(teacher, CaptionSet(["x"], ["a cat"]), tmp_path, seed=0, shard_size=2)


def test_the_run_is_recorded_by_the_shared_resume_protocol(teacher, captions, tmp_path):
    import json

    from modeling_icc.utils.resumable import LOCK_FILE, RUN_FILE

    score_to_shards(teacher, captions.head(4), tmp_path, seed=0, shard_size=2)
    record = json.loads((tmp_path / RUN_FILE).read_text())
    assert record["n_rows"] == 4 and record["shard_size"] == 2 and "versions" in record["provenance"]
    assert not (tmp_path / LOCK_FILE).exists()


def test_a_directory_scored_before_the_shared_run_file_is_refused_not_rescored(teacher, captions, tmp_path):
    score_to_shards(teacher, captions.head(4), tmp_path, seed=0, shard_size=2)
    (tmp_path / "_run.json").rename(tmp_path / "manifest.json")  # as an older version left it
    before = {path.name: path.stat().st_mtime_ns for path in tmp_path.iterdir()}
    for run in (
        lambda: score_to_shards(teacher, captions.head(4), tmp_path, seed=0, shard_size=2),
        lambda: read_shards(tmp_path),
    ):
        with pytest.raises(UserInputError, match=r"older version .*manifest\.json"):
            run()
    assert {path.name: path.stat().st_mtime_ns for path in tmp_path.iterdir()} == before
