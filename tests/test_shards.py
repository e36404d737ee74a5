"""Sharded ``icc score|filter --output-dir``: formats, global ranking, resume, SIGKILL, workers, DataComp."""

import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_run import icc

from modeling_icc import LiteScorer
from modeling_icc.curation.io import datacomp
from modeling_icc.curation.selection import KeepRule, fit_cuts, keep_mask
from modeling_icc.utils.provenance import synthetic_captions

LITE = LiteScorer()


def make_uids(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [f"{int(a):016x}{int(b):016x}" for a, b in rng.integers(0, 2**63, size=(n, 2), dtype=np.int64)]


def write_parquet_pool(directory: Path, n_shards: int, rows: int, seed: int = 0) -> pa.Table:
    """Shards of a DataComp-like metadata pool; returns the whole pool in shard order."""
    rng = np.random.default_rng(seed)
    captions = synthetic_captions(n_shards * rows, seed=seed)
    captions[len(captions) // 2] = ""  # a blank caption scores NaN and is never kept
    pool = pa.table(
        {
            "uid": make_uids(n_shards * rows, seed),
            "caption": captions,
            "clip_score": rng.random(n_shards * rows).round(2),  # rounded: many ties
        }
    )
    directory.mkdir(parents=True, exist_ok=True)
    for shard in range(n_shards):
        pq.write_table(pool.slice(shard * rows, rows), directory / f"{shard:05d}.parquet")
    return pool


def write_tar_shard(path: Path, captions: list[str], uids: list[str]) -> None:
    with tarfile.open(path, "w") as archive:
        for index, (caption, uid) in enumerate(zip(captions, uids, strict=True)):
            key = f"{path.stem}{index:04d}"
            members = {
                f"{key}.jpg": bytes(np.random.default_rng(index).integers(0, 256, 64, dtype=np.uint8)),
                f"{key}.txt": caption.encode(),
                f"{key}.json": json.dumps({"uid": uid, "caption": caption, "width": 64}).encode(),
            }
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size, info.mtime = len(data), 1_700_000_000
                archive.addfile(info, io.BytesIO(data))


def top_rows(values: np.ndarray, k: int) -> np.ndarray:
    """The reference ranking: the k highest non-NaN values, ties by position (a stable sort)."""
    chosen = np.argsort(np.where(np.isnan(values), np.inf, -values), kind="stable")[: min(k, (~np.isnan(values)).sum())]
    mask = np.zeros(len(values), dtype=bool)
    mask[chosen] = True
    return mask


def test_cuts_fitted_over_pieces_equal_one_ranking_of_the_concatenation():
    rng = np.random.default_rng(0)
    values = rng.integers(0, 5, size=200).astype(np.float64)  # heavy ties
    values[rng.random(200) < 0.1] = np.nan
    shards = np.split(values, [17, 17, 90, 150])  # includes an empty shard
    n_valid = int((~np.isnan(values)).sum())
    for rule, k in ((KeepRule(top_k=33), 33), (KeepRule(top_fraction=0.5), round(n_valid / 2)), (KeepRule(top_k=0), 0)):
        cuts = fit_cuts(shards, rule)
        joined = np.concatenate([cut.mask(part) for cut, part in zip(cuts, shards, strict=True)])
        np.testing.assert_array_equal(joined, top_rows(values, k))
        np.testing.assert_array_equal(keep_mask(values, rule), top_rows(values, k))
    cuts = fit_cuts(shards, KeepRule(top_k=10_000))
    assert np.concatenate([cut.mask(part) for cut, part in zip(cuts, shards, strict=True)]).sum() == n_valid


@pytest.mark.dtype
def test_sharded_filter_ranks_all_shards_together(tmp_path):
    pool = write_parquet_pool(tmp_path / "in", n_shards=3, rows=40)
    subset = tmp_path / "out" / "subset.npy"
    args = ["filter", "--model", "lite", "-i", tmp_path / "in" / "*.parquet", "--output-dir", tmp_path / "out"]
    assert icc(*args, "--top-fraction", "0.5", "--clip-top-fraction", "0.6", "--datacomp-subset", subset) == 0

    raw = LITE.score(pool.column("caption").to_pylist(), errors="nan", raw=True)
    expected = keep_mask(np.clip(raw, 0, 1), KeepRule(top_fraction=0.5), ranking=raw)
    expected &= keep_mask(pool.column("clip_score").to_numpy(), KeepRule(top_fraction=0.6))
    kept = pa.concat_tables(pq.read_table(tmp_path / "out" / f"{i:05d}.parquet") for i in range(3))
    assert kept.column("uid").to_pylist() == [pool.column("uid")[int(i)].as_py() for i in np.flatnonzero(expected)]
    assert kept.schema.field("clip_score").type == pa.float64()

    saved = datacomp.load_subset(subset)
    assert saved.dtype == np.dtype("u8,u8")
    assert datacomp.array_to_uids(saved) == sorted(kept.column("uid").to_pylist())  # sorted as hex = as (u8, u8)
    summary = json.loads((tmp_path / "out" / "_summary.json").read_text())
    assert (summary["shards"], summary["rows"], summary["kept"], summary["nan"]) == (3, 120, int(expected.sum()), 1)
    stats = json.loads((tmp_path / "out" / "00001.stats.json").read_text())
    assert stats["rows"] == 40 and stats["kept"] == int(expected[40:80].sum())


def test_webdataset_tar_shards_filter_and_score(tmp_path):
    captions = ["a red car on a street", "the meaning of life", "a brown dog on the grass", "an abstract idea"]
    uids = make_uids(4, seed=3)
    (tmp_path / "in").mkdir()
    write_tar_shard(tmp_path / "in" / "shard-a.tar", captions[:2], uids[:2])
    write_tar_shard(tmp_path / "in" / "shard-b.tar", captions[2:], uids[2:])
    inputs = tmp_path / "in" / "*.tar"
    assert icc("filter", "--model", "lite", "-i", inputs, "--output-dir", tmp_path / "kept", "--threshold", "0.6") == 0

    scores = LITE.score(captions)
    with (
        tarfile.open(tmp_path / "in" / "shard-a.tar") as source,
        tarfile.open(tmp_path / "kept" / "shard-a.tar") as out,
    ):
        names = out.getnames()
        kept_keys = [f"shard-a{i:04d}" for i in range(2) if scores[i] >= 0.6]
        assert [n for n in names if not n.endswith(".icc.json")] == [
            f"{k}.{ext}" for k in kept_keys for ext in ("jpg", "txt", "json")
        ]
        for name in names:
            if name.endswith(".icc.json"):
                sidecar = json.loads(out.extractfile(name).read())
                assert sidecar["icc_model"] == "lite" and sidecar["icc_score"] >= 0.6
            else:
                assert out.extractfile(name).read() == source.extractfile(name).read()

    assert icc("score", "--model", "lite", "-i", inputs, "--output-dir", tmp_path / "scores", "--column", "txt") == 0
    table = pq.read_table(tmp_path / "scores" / "shard-b.parquet")
    assert table.column("__key__").to_pylist() == ["shard-b0000", "shard-b0001"]
    assert table.column("uid").to_pylist() == uids[2:]
    np.testing.assert_allclose(table.column("icc_score").to_numpy(), scores[2:], atol=1e-6)


def test_jsonl_shards_keep_order_and_fields(tmp_path):
    (tmp_path / "in").mkdir()
    rows = [{"id": i, "caption": c, "meta": {"k": i}} for i, c in enumerate(synthetic_captions(30, seed=5))]
    for part in range(3):
        lines = "\n".join(json.dumps(r) for r in rows[part * 10 : part * 10 + 10])
        (tmp_path / "in" / f"p{part}.jsonl").write_text(lines + "\n")
    files = sorted((tmp_path / "in").glob("*.jsonl"))
    assert icc("score", "--model", "lite", "-i", *files, "--output-dir", tmp_path / "out") == 0
    out = [json.loads(line) for p in range(3) for line in (tmp_path / "out" / f"p{p}.jsonl").read_text().splitlines()]
    assert [r["id"] for r in out] == list(range(30)) and out[7]["meta"] == {"k": 7}
    assert all(r["icc_model"] == "lite" for r in out)


def outputs(directory: Path) -> dict[str, bytes]:
    """Every file a run leaves, minus what legitimately differs between runs (timings, own paths)."""
    files = {}
    for path in sorted(directory.rglob("*")):
        if not path.is_file() or path.name in ("_summary.json", ".icc.lock"):
            continue
        data = path.read_bytes()
        if path.name.endswith(".stats.json"):
            stats = json.loads(data)
            data = json.dumps({k: v for k, v in stats.items() if k not in ("seconds", "output")}).encode()
        if path.name == "_run.json":
            data = json.dumps({k: v for k, v in json.loads(data).items() if k != "datacomp_subset"}).encode()
        files[str(path.relative_to(directory))] = data
    return files


@pytest.mark.parametrize("rule", [["--threshold", "0.5"], ["--top-k", "40"]])
def test_resume_skips_finished_shards_and_redoes_partial_ones(tmp_path, rule):
    write_parquet_pool(tmp_path / "in", n_shards=3, rows=30)
    args = ["filter", "--model", "lite", "-i", tmp_path / "in" / "*.parquet", *rule]
    assert icc(*args, "--output-dir", tmp_path / "ref") == 0
    assert icc(*args, "--output-dir", tmp_path / "out") == 0
    finished = tmp_path / "out" / "00000.parquet"
    before = finished.stat().st_mtime_ns
    # a crash after shard 1's output was renamed but before its stats; shard 2 died mid-write
    (tmp_path / "out" / "00001.stats.json").unlink()
    (tmp_path / "out" / "00002.stats.json").unlink()
    (tmp_path / "out" / "00002.parquet").unlink()
    (tmp_path / "out" / ".00002.parquet.icc-abc.tmp").write_bytes(b"half a parquet")  # as atomic_file names it
    assert icc(*args, "--output-dir", tmp_path / "out") == 0
    assert finished.stat().st_mtime_ns == before
    assert outputs(tmp_path / "out") == outputs(tmp_path / "ref")


@pytest.mark.parametrize("rule", [["--threshold", "0.5"], ["--top-k", "7"]])
def test_a_resumed_job_says_what_it_resumed(tmp_path, rule, capsys):
    """Issue 48, item 18: how many shards earlier runs did and how many this one did, in the summary lines and
    in the summary (a fresh run: none before; a run with nothing left: all before, none now)."""
    write_parquet_pool(tmp_path / "in", n_shards=4, rows=10)
    out = tmp_path / "out"
    args = ["filter", "--model", "lite", "-i", tmp_path / "in" / "*.parquet", *rule, "--output-dir", out]
    assert icc(*args) == 0
    assert "icc: resumed" not in capsys.readouterr().err
    summary = json.loads((out / "_summary.json").read_text())
    assert (summary["shards_done_before"], summary["shards_this_run"]) == (0, 4)
    for shard in (1, 2, 3):  # killed before marking three shards done
        (out / f"{shard:05d}.stats.json").unlink()
    assert icc(*args) == 0
    assert "icc: resumed: 1 of 4 shards done before, 3 this run\n" in capsys.readouterr().err
    summary = json.loads((out / "_summary.json").read_text())
    assert (summary["shards_done_before"], summary["shards_this_run"]) == (1, 3)
    assert icc(*args) == 0
    assert "icc: resumed: 4 of 4 shards done before, nothing left to do\n" in capsys.readouterr().err


@pytest.mark.parametrize("rule", [["--threshold", "0.5"], ["--top-k", "7"]])
def test_a_finished_job_leaves_no_work_files_and_a_rerun_changes_nothing(tmp_path, rule, capsys):
    """The output directory holds outputs, stats, _run.json and _summary.json; re-running is a no-op."""
    write_parquet_pool(tmp_path / "in", n_shards=3, rows=10)
    out = tmp_path / "out"
    args = ["filter", "--model", "lite", "-i", tmp_path / "in" / "*.parquet", *rule, "--output-dir", out]
    args += ["--datacomp-subset", out / "subset.npy"]
    assert icc(*args) == 0
    left = sorted(path.name for path in out.iterdir())
    shards = [f"{i:05d}.{kind}" for i in range(3) for kind in ("parquet", "stats.json")]
    assert left == sorted(["_run.json", "_summary.json", "subset.npy", *shards])
    stamps = {path.name: (path.stat().st_mtime_ns, path.read_bytes()) for path in out.iterdir()}
    capsys.readouterr()
    assert icc(*args) == 0
    assert {path.name: (path.stat().st_mtime_ns, path.read_bytes()) for path in out.iterdir()} == stamps
    assert "redone" not in capsys.readouterr().err


def test_an_output_lost_after_the_work_files_were_removed_is_redone_with_its_subset(tmp_path, capsys):
    """Ranking values and kept uids are gone once a job finishes: a lost output is rebuilt from the inputs."""
    write_parquet_pool(tmp_path / "in", n_shards=3, rows=20)
    common = ["filter", "--model", "lite", "-i", tmp_path / "in" / "*.parquet", "--top-fraction", "0.4"]
    assert icc(*common, "--output-dir", tmp_path / "ref", "--datacomp-subset", tmp_path / "ref" / "s.npy") == 0
    out = tmp_path / "out"
    args = [*common, "--output-dir", out, "--datacomp-subset", out / "s.npy"]
    assert icc(*args) == 0
    (out / "00001.parquet").unlink()
    capsys.readouterr()
    assert icc(*args) == 0
    assert "redone: 1 finished shard(s)" in capsys.readouterr().err
    assert outputs(out) == outputs(tmp_path / "ref") and not (out / ".icc-work").exists()
    (out / "s.npy").unlink()  # a lost subset is rebuilt too
    assert icc(*args) == 0
    assert outputs(out) == outputs(tmp_path / "ref")


def test_a_running_job_holds_the_directory_and_the_lock_file_goes_with_it(tmp_path, capsys):
    from modeling_icc.utils.resumable import LOCK_FILE, locked

    write_parquet_pool(tmp_path / "in", n_shards=1, rows=3)
    out = tmp_path / "out"
    args = ["score", "--model", "lite", "-i", tmp_path / "in" / "*.parquet", "--output-dir", out]
    with locked(out):
        assert icc(*args) == 2
        assert "another icc job is writing to" in capsys.readouterr().err
    assert not (out / LOCK_FILE).exists()
    assert icc(*args) == 0 and not (out / LOCK_FILE).exists()


def test_resume_refuses_different_settings(tmp_path, capsys):
    write_parquet_pool(tmp_path / "in", n_shards=2, rows=5)
    args = ["filter", "--model", "lite", "-i", tmp_path / "in" / "*.parquet", "--output-dir", tmp_path / "out"]
    assert icc(*args, "--threshold", "0.5") == 0
    assert icc(*args, "--threshold", "0.7") == 2
    assert "holds a run with --threshold 0.5 (this run: --threshold 0.7)" in capsys.readouterr().err


def test_a_run_that_saved_nothing_does_not_lock_its_settings(tmp_path, capsys):
    write_parquet_pool(tmp_path / "in", n_shards=2, rows=5)
    args = ["filter", "--model", "lite", "-i", tmp_path / "in" / "*.parquet", "--output-dir", tmp_path / "out"]
    assert icc(*args, "--top-k", "3", "--column", "captoin") == 2
    assert "no column 'captoin'" in capsys.readouterr().err
    assert icc(*args, "--top-k", "3") == 0
    assert icc(*args, "--top-k", "3") == 0  # and the corrected settings now bind the directory
    assert icc(*args, "--top-k", "4") == 2
    assert "holds a run with --top-k 3 (this run: --top-k 4)" in capsys.readouterr().err


@pytest.mark.parametrize("rule", [["--threshold", "0.5"], ["--top-k", "7"]])
def test_an_output_deleted_after_the_job_finished_is_redone(tmp_path, rule, capsys):
    write_parquet_pool(tmp_path / "in", n_shards=3, rows=10)
    args = ["filter", "--model", "lite", "-i", tmp_path / "in" / "*.parquet", *rule, "--output-dir", tmp_path / "out"]
    assert icc(*args) == 0
    reference = outputs(tmp_path / "out")
    untouched = (tmp_path / "out" / "00000.parquet").stat().st_mtime_ns
    (tmp_path / "out" / "00001.parquet").unlink()
    (tmp_path / "out" / "00002.parquet").write_bytes(b"truncated")
    capsys.readouterr()
    assert icc(*args) == 0
    assert "redone: 2 finished shard(s) whose output was missing or changed" in capsys.readouterr().err
    assert outputs(tmp_path / "out") == reference
    assert (tmp_path / "out" / "00000.parquet").stat().st_mtime_ns == untouched
    summary = json.loads((tmp_path / "out" / "_summary.json").read_text())
    assert summary["redone_missing_outputs"] == 2 and summary["shards"] == 3


def test_output_dir_naming_an_existing_file_is_a_clear_error(tmp_path, capsys):
    write_parquet_pool(tmp_path / "in", n_shards=1, rows=3)
    (tmp_path / "taken").write_text("not a directory")
    for output_dir, message in (
        (tmp_path / "taken", "is an existing file; choose a directory"),
        (tmp_path / "taken" / "sub", "cannot create the output directory"),
    ):
        assert icc("score", "--model", "lite", "-i", tmp_path / "in" / "*.parquet", "--output-dir", output_dir) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
    assert (tmp_path / "taken").read_text() == "not a directory"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["-i", "{dir}/nothing-*.parquet", "--output-dir", "{dir}/o"], "no file matches"),
        (["-i", "{dir}/in", "--output-dir", "{dir}/o"], "is a directory"),
        (["-i", "{dir}/in/*.parquet"], "need --output-dir"),
        (["-i", "{dir}/in/*.parquet", "{dir}/other/00000.parquet", "--output-dir", "{dir}/o"], "would both write"),
        (["-i", "{dir}/in/*.parquet", "--output-dir", "{dir}/in", "--output-format", "parquet"], "overwrite an input"),
        (["-i", "{dir}/in/00000.parquet", "--workers", "2"], "--workers applies to sharded jobs"),
    ],
)
def test_sharded_user_errors(tmp_path, capsys, extra, message):
    write_parquet_pool(tmp_path / "in", n_shards=1, rows=3)
    write_parquet_pool(tmp_path / "other", n_shards=1, rows=3)
    args = [arg.format(dir=tmp_path) for arg in extra]
    assert icc("score", "--model", "lite", *args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_workers_give_the_same_bytes_as_one_process(tmp_path):
    write_parquet_pool(tmp_path / "in", n_shards=4, rows=50)
    args = ["filter", "--model", "lite", "-i", tmp_path / "in" / "*.parquet", "--top-k", "77"]
    assert icc(*args, "--output-dir", tmp_path / "one") == 0
    assert icc(*args, "--output-dir", tmp_path / "two", "--workers", "2") == 0
    assert outputs(tmp_path / "two") == outputs(tmp_path / "one")


@pytest.mark.parametrize(
    ("rule", "marker"),
    [
        (["--threshold", "0.55"], "*.stats.json"),  # one pass: killed after the first finished shard
        (["--top-fraction", "0.4"], ".icc-work/*.raw.npz"),  # ranking: killed in the scoring phase
    ],
)
def test_sigkill_mid_run_then_resume_is_byte_identical(tmp_path, rule, marker):
    n_shards, rows = 16, 3000  # runway: on a loaded machine the poll below may wake several shards late
    write_parquet_pool(tmp_path / "in", n_shards=n_shards, rows=rows)
    common = ["filter", "--model", "lite", "-i", str(tmp_path / "in" / "*.parquet"), *rule, "--no-progress"]
    assert icc(*common, "--output-dir", tmp_path / "ref", "--datacomp-subset", tmp_path / "ref" / "s.npy") == 0

    out = tmp_path / "killed"
    command = [sys.executable, "-m", "modeling_icc", *common, "--output-dir", str(out)]
    command += ["--datacomp-subset", str(out / "s.npy")]
    job = subprocess.Popen(command, start_new_session=True, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not list(out.glob(marker)) and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    os.killpg(job.pid, signal.SIGKILL)
    job.wait()
    finished = len(list(out.glob(marker)))
    assert job.returncode == -signal.SIGKILL and 1 <= finished < n_shards, "the kill must land mid-run"
    assert not (out / "s.npy").exists() and not (out / "_summary.json").exists()

    assert icc(*common, "--output-dir", out, "--datacomp-subset", out / "s.npy") == 0
    assert outputs(out) == outputs(tmp_path / "ref")
    summary = json.loads((out / "_summary.json").read_text())
    assert summary["rows"] == n_shards * rows


@pytest.mark.dtype
def test_datacomp_uids_round_trip(tmp_path):
    uids = [*make_uids(50, seed=9), "00000000000000000000000000000000", "ffffffffffffffffffffffffffffffff"]
    array, duplicates = datacomp.subset_array([datacomp.uids_to_array(uids[:30]), datacomp.uids_to_array(uids[20:])])
    assert duplicates == 10
    path = datacomp.save_subset(tmp_path / "subset.npy", array)
    loaded = np.load(path, allow_pickle=False)
    assert loaded.dtype == np.dtype("u8,u8") and loaded.shape == (52,)
    assert datacomp.array_to_uids(loaded) == sorted(uids)
    # DataComp's own recipe: int(uid[:16], 16), int(uid[16:32], 16), then sort
    reference = np.array([(int(u[:16], 16), int(u[16:32], 16)) for u in uids], np.dtype("u8,u8"))
    reference.sort()
    np.testing.assert_array_equal(loaded, reference)
    with pytest.raises(ValueError, match="not a 32-digit hex string"):
        datacomp.uids_to_array(["abc"])
    with pytest.raises(ValueError, match="not a hex string"):
        datacomp.uids_to_array(["z" * 32])


def test_single_file_filter_with_clip_rule_and_subset(tmp_path, capsys):
    pool = write_parquet_pool(tmp_path, n_shards=1, rows=20)
    subset = tmp_path / "subset.npy"
    args = ["filter", "--model", "lite", "-i", tmp_path / "00000.parquet", "-o", tmp_path / "kept.parquet"]
    assert icc(*args, "--threshold", "0.5", "--clip-threshold", "0.5", "--datacomp-subset", subset) == 0
    scores = LITE.score(pool.column("caption").to_pylist(), errors="nan")
    expected = (np.nan_to_num(scores, nan=-1) >= 0.5) & (pool.column("clip_score").to_numpy() >= 0.5)
    kept = pq.read_table(tmp_path / "kept.parquet").column("uid").to_pylist()
    assert kept == [pool.column("uid")[int(i)].as_py() for i in np.flatnonzero(expected)]
    assert datacomp.array_to_uids(datacomp.load_subset(subset)) == sorted(kept)
    assert "and clip_score: score >= 0.5" in capsys.readouterr().err


def test_resume_from_scores_saved_without_ranking_values(tmp_path, monkeypatch):
    """Work saved by an older icc (raw scores only) is completed, not read as ranking values."""
    write_parquet_pool(tmp_path / "in", n_shards=3, rows=20)
    args = ["filter", "--model", "lite", "-i", tmp_path / "in" / "*.parquet", "--top-k", "9", "--no-progress"]
    assert icc(*args, "--output-dir", tmp_path / "ref") == 0
    with monkeypatch.context() as patch:  # keep the work files, as a run killed before its summary does
        patch.setattr("modeling_icc.curation.engines.output_dir.remove_tree", lambda place: None)
        assert icc(*args, "--output-dir", tmp_path / "out") == 0
    assert len(list((tmp_path / "out" / ".icc-work").glob("*.raw.npz"))) == 3
    for saved in (tmp_path / "out" / ".icc-work").glob("*.raw.npz"):
        with np.load(saved) as arrays:
            raw = arrays["icc_raw"]
        np.savez(saved, icc_raw=raw, clip=np.zeros(0))
    for done in (tmp_path / "out").glob("*.stats.json"):
        done.unlink()
    assert icc(*args, "--output-dir", tmp_path / "out") == 0
    assert outputs(tmp_path / "out") == outputs(tmp_path / "ref")


def test_a_shard_rewritten_between_the_passes_with_the_same_row_count_is_refused(tmp_path, monkeypatch):
    """Scores saved by the first pass of a top-k job are never pinned to the captions of a rewritten shard."""
    from modeling_icc.curation.engines import passes

    write_parquet_pool(tmp_path / "in", n_shards=3, rows=20)
    first = sorted((tmp_path / "in").glob("*.parquet"))[0]
    fit_cuts_then = passes.fit_cuts

    def rewrite_then_fit(*args, **kwargs):  # between the scoring pass and the writing pass
        table = pq.read_table(first)
        pq.write_table(table.take(list(reversed(range(table.num_rows)))), first)
        return fit_cuts_then(*args, **kwargs)

    monkeypatch.setattr(passes, "fit_cuts", rewrite_then_fit)
    args = ["filter", "--model", "lite", "-i", tmp_path / "in" / "*.parquet", "--top-k", "9", "--no-progress"]
    assert icc(*args, "--output-dir", tmp_path / "out") == 2
    assert not (tmp_path / "out" / f"{first.stem}.parquet").exists()


def test_ranking_over_shards_with_an_empty_and_an_all_blank_shard(tmp_path):
    """Cuts fitted shard by shard from disk keep the rows one ranking of the concatenation keeps."""
    rng = np.random.default_rng(3)
    captions = synthetic_captions(90, seed=3)
    captions[30:60] = [""] * 30  # the second shard scores NaN everywhere
    pool = pa.table({"caption": captions, "clip_score": rng.integers(0, 4, 90) / 4})  # heavy ties across shards
    (tmp_path / "in").mkdir()
    for index, (start, stop) in enumerate(((0, 30), (30, 60), (60, 60), (60, 90))):
        pq.write_table(pool.slice(start, stop - start), tmp_path / "in" / f"{index:05d}.parquet")
    args = ["filter", "--model", "lite", "-i", tmp_path / "in" / "*.parquet", "--output-dir", tmp_path / "out"]
    assert icc(*args, "--top-k", "40", "--clip-top-k", "25", "--no-progress") == 0

    raw = LITE.score(captions, errors="nan", raw=True)
    expected = top_rows(raw, 40) & top_rows(pool.column("clip_score").to_numpy(), 25)
    kept = pa.concat_tables(pq.read_table(tmp_path / "out" / f"{i:05d}.parquet") for i in range(4))
    assert kept.column("caption").to_pylist() == [captions[int(i)] for i in np.flatnonzero(expected)]
    assert [pq.read_table(tmp_path / "out" / f"{i:05d}.parquet").num_rows for i in range(4)] == [
        int(expected[:30].sum()),
        0,
        0,
        int(expected[60:].sum()),
    ]
