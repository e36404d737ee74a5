"""Jobs on object stores: inputs and outputs named by URL, against a real S3 server (moto's, on 127.0.0.1).

s3fs talks to it over HTTP through its endpoint setting (``FSSPEC_S3_ENDPOINT_URL`` for the CLI processes,
fsspec's config in this one), as it would to AWS. ``memory://`` runs the same code with no server; ``hf://``
cannot be reached here, so only its wiring is tested, offline.
"""

import io
import json
import logging
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import s3fs
from cli_run import icc
from moto.server import ThreadedMotoServer

from modeling_icc.curation.engines import in_process
from modeling_icc.utils.locations import is_remote, location
from modeling_icc.utils.provenance import synthetic_captions

SECRET = "icc-test-secret-key-never-printed"
N_SHARDS = 6
ROWS = 3000


@pytest.fixture(scope="module")
def endpoint():
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # a line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3(endpoint, monkeypatch, request):
    """A fresh bucket on the server, and this process and its children pointed at it."""
    environment = {
        "AWS_ACCESS_KEY_ID": "icc-test",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
        "FSSPEC_S3_ENDPOINT_URL": endpoint,
    }
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setitem(fsspec.config.conf, "s3", {"endpoint_url": endpoint})
    s3fs.S3FileSystem.clear_instance_cache()
    fs = s3fs.S3FileSystem(endpoint_url=endpoint)
    bucket = request.node.name.lower().replace("_", "-")[:50].strip("-")
    fs.mkdir(bucket)
    yield fs, bucket
    s3fs.S3FileSystem.clear_instance_cache()


def write_pool(directory: Path) -> None:
    captions = synthetic_captions(N_SHARDS * ROWS, seed=3)
    captions[7] = ""  # NaN, never kept
    pool = pa.table({"uid": [f"{i:032x}" for i in range(len(captions))], "caption": captions})
    directory.mkdir(parents=True, exist_ok=True)
    for shard in range(N_SHARDS):
        pq.write_table(pool.slice(shard * ROWS, ROWS), directory / f"{shard:05d}.parquet")


def local_outputs(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.glob("*.parquet"))}


def remote_outputs(fs: s3fs.S3FileSystem, prefix: str) -> dict[str, bytes]:
    fs.invalidate_cache()
    return {Path(key).name: fs.cat_file(key) for key in sorted(fs.glob(f"{prefix}/*.parquet"))}


def filter_job(source: object, output_dir: object, *flags: str) -> int:
    """``icc filter --model lite`` of ``source`` (a path, a glob or a URL) into ``output_dir``."""
    return icc("filter", "--model", "lite", "-i", source, "--output-dir", output_dir, *flags)


@pytest.fixture
def pool(tmp_path, s3):
    """The pool on local disk and in the bucket (``s3://BUCKET/in/``), and the local job's outputs."""
    fs, bucket = s3
    write_pool(tmp_path / "in")
    fs.put(str(tmp_path / "in") + "/", f"{bucket}/in/", recursive=True)
    return tmp_path / "in"


RULE = ["--top-fraction", "0.3", "--no-progress"]


def test_a_sharded_ranking_job_from_s3_to_s3_writes_the_bytes_of_the_local_job(tmp_path, s3, pool):
    fs, bucket = s3
    assert filter_job(pool / "*.parquet", tmp_path / "ref", *RULE) == 0
    pattern, out = f"s3://{bucket}/in/*.parquet", f"s3://{bucket}/kept/"
    assert filter_job(pattern, out, *RULE) == 0
    assert remote_outputs(fs, f"{bucket}/kept") == local_outputs(tmp_path / "ref")
    fs.invalidate_cache()
    assert len(fs.glob(f"{bucket}/kept/*.stats.json")) == N_SHARDS and fs.exists(f"{bucket}/kept/_summary.json")
    assert not fs.exists(f"{bucket}/kept/.icc-work")  # work files go once the job is done
    # A re-run finds every shard done and changes nothing.
    before = {key: fs.info(key)["ETag"] for key in fs.glob(f"{bucket}/kept/*")}
    assert filter_job(pattern, out, *RULE) == 0
    fs.invalidate_cache()
    assert {key: fs.info(key)["ETag"] for key in fs.glob(f"{bucket}/kept/*")} == before


def test_a_single_file_from_s3_to_s3_is_the_local_file(tmp_path, s3, pool):
    fs, bucket = s3
    local, remote = tmp_path / "scored.jsonl.gz", f"s3://{bucket}/scored.jsonl.gz"
    for output in (local, remote):
        assert icc("score", "--model", "lite", "-i", f"s3://{bucket}/in/00001.parquet", "-o", output) == 0
    assert fs.cat_file(f"{bucket}/scored.jsonl.gz") == local.read_bytes()


def _job(command: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "modeling_icc", *command], start_new_session=True, stderr=subprocess.DEVNULL
    )


def test_sigkill_at_random_moments_then_resume_is_byte_identical(tmp_path, s3, pool):
    fs, bucket = s3
    assert filter_job(pool / "*.parquet", tmp_path / "ref", *RULE) == 0
    command = ["filter", "--model", "lite", "-i", f"s3://{bucket}/in/*.parquet", "--output-dir", f"s3://{bucket}/k"]
    command += RULE
    # First kill: once the first shard's raw scores are saved (mid-run, for certain); then at random moments.
    job = _job(command)
    deadline = time.monotonic() + 120
    while job.poll() is None and time.monotonic() < deadline:
        fs.invalidate_cache()
        if fs.glob(f"{bucket}/k/.icc-work/*.raw.npz"):
            break
        time.sleep(0.05)
    os.killpg(job.pid, signal.SIGKILL)
    assert job.wait() == -signal.SIGKILL, "the first kill must land mid-run"
    kills = 1
    for delay in np.random.default_rng(11).uniform(0.5, 4.0, size=3):
        job = _job(command)
        try:
            job.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)
            kills += job.wait() == -signal.SIGKILL
    assert icc(*command) == 0
    assert remote_outputs(fs, f"{bucket}/k") == local_outputs(tmp_path / "ref")
    assert kills >= 2


def _one_line_error(capsys, code: int) -> str:
    err = capsys.readouterr().err
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.startswith("icc: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert SECRET not in err
    return lines[0]


def test_a_missing_bucket_is_one_line(tmp_path, s3, pool, capsys):
    code = filter_job(pool / "*.parquet", "s3://no-such-bucket/k/", *RULE)
    line = _one_line_error(capsys, code)
    assert "no-such-bucket" in line
    code = filter_job("s3://no-such-bucket/in/*.parquet", tmp_path, *RULE)
    assert "no-such-bucket" in _one_line_error(capsys, code)


def test_missing_credentials_are_one_line_and_no_secret_is_printed(tmp_path, s3, pool):
    _, bucket = s3
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("AWS_ACCESS") and "SECRET" not in name
    }
    environment.update(AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"), AWS_CONFIG_FILE=str(tmp_path / "none"))
    command = ["filter", "--model", "lite", "-i", f"s3://{bucket}/in/*.parquet", "--output-dir", tmp_path / "k"]
    done = subprocess.run(
        [sys.executable, "-m", "modeling_icc", *map(str, command), *RULE],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("icc: error:")]
    assert len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "credentials" in errors[0].lower() and SECRET not in done.stderr


def test_a_key_that_vanishes_mid_job_is_one_line_and_what_was_committed_stays(tmp_path, s3, pool, capsys, monkeypatch):
    fs, bucket = s3
    assert filter_job(pool / "*.parquet", tmp_path / "ref", "--threshold", "0.5") == 0
    capsys.readouterr()
    real = in_process.run_task
    done = []

    def then_delete_the_next_input(job, task, *args, **kwargs):
        real(job, task, *args, **kwargs)
        done.append(task.unit.source.name)
        if len(done) == 2:
            fs.rm(f"{bucket}/in/00003.parquet")

    monkeypatch.setattr(in_process, "run_task", then_delete_the_next_input)
    command = ["filter", "--model", "lite", "-i", f"s3://{bucket}/in/*.parquet", "--output-dir", f"s3://{bucket}/k"]
    command += ["--threshold", "0.5", "--no-progress"]
    line = _one_line_error(capsys, icc(*command))
    assert "00003.parquet" in line
    fs.invalidate_cache()
    committed = sorted(Path(key).name for key in fs.glob(f"{bucket}/k/*.stats.json"))
    assert committed == ["00000.stats.json", "00001.stats.json", "00002.stats.json"]  # 00003 vanished
    fs.put_file(str(pool / "00003.parquet"), f"{bucket}/in/00003.parquet")
    monkeypatch.setattr(in_process, "run_task", real)
    assert icc(*command) == 0
    assert remote_outputs(fs, f"{bucket}/k") == local_outputs(tmp_path / "ref")


def test_memory_urls_run_the_same_jobs_without_a_server(tmp_path, capsys):
    write_pool(tmp_path / "in")
    memory = fsspec.filesystem("memory")
    for path in sorted((tmp_path / "in").glob("*.parquet")):
        memory.pipe(f"/icc-pool/in/{path.name}", path.read_bytes())
    rule = ["--top-k", "500", "--no-progress"]
    assert filter_job(tmp_path / "in" / "*.parquet", tmp_path / "ref", *rule) == 0
    assert filter_job("memory://icc-pool/in/*.parquet", "memory://icc-pool/k", *rule) == 0
    kept = {Path(key).name: memory.cat_file(key) for key in sorted(memory.glob("/icc-pool/k/*.parquet"))}
    assert kept == local_outputs(tmp_path / "ref")
    code = filter_job("memory://icc-pool/in/*.parquet", "memory://icc-pool/w", *rule, "--workers", "2")
    assert "use --workers 1" in _one_line_error(capsys, code)
    memory.rm("/icc-pool", recursive=True)


def test_webdataset_tars_from_s3_keep_their_samples_byte_for_byte(tmp_path, s3):
    """``icc filter`` copies kept samples member by member from the remote tar, as from a local one."""
    fs, bucket = s3
    (tmp_path / "tars").mkdir()
    for shard in range(2):
        with tarfile.open(tmp_path / "tars" / f"{shard:05d}.tar", "w") as archive:
            for index, caption in enumerate(synthetic_captions(40, seed=shard)):
                sample = {"jpg": bytes([index]) * 64, "json": json.dumps({"caption": caption}).encode()}
                for extension, data in sample.items():
                    member = tarfile.TarInfo(f"{shard}{index:04d}.{extension}")
                    member.size = len(data)
                    archive.addfile(member, io.BytesIO(data))
    fs.put(str(tmp_path / "tars") + "/", f"{bucket}/tars/", recursive=True)
    assert filter_job(tmp_path / "tars" / "*.tar", tmp_path / "ref", "--top-fraction", "0.5", "--no-progress") == 0
    remote = f"s3://{bucket}/tars/*.tar"
    assert filter_job(remote, f"s3://{bucket}/kept", "--top-fraction", "0.5", "--no-progress") == 0
    fs.invalidate_cache()
    kept = {Path(key).name: fs.cat_file(key) for key in sorted(fs.glob(f"{bucket}/kept/*.tar"))}
    assert kept == {path.name: path.read_bytes() for path in sorted((tmp_path / "ref").glob("*.tar"))}
    assert len(kept) == 2


def test_hf_urls_reach_huggingface_hubs_filesystem_and_offline_fail_in_one_line(tmp_path, monkeypatch, capsys):
    """The Hub cannot be reached here: the wiring is what is tested (the URL becomes a path on HfFileSystem),
    and a job on it, with HF_HUB_OFFLINE=1 as in every test, stops in one line."""
    from huggingface_hub import HfFileSystem

    place = location("hf://datasets/someone/pool/data/00000.parquet")
    assert is_remote(place) and isinstance(place.fs, HfFileSystem) and place.name == "00000.parquet"
    assert location(f"file://{tmp_path}") == tmp_path and not is_remote(location(str(tmp_path)))
    code = icc("score", "--model", "lite", "-i", "hf://datasets/someone/pool/data/*.parquet", "--output-dir", tmp_path)
    assert "hf://datasets/someone/pool" in _one_line_error(capsys, code)


def test_a_store_whose_library_is_missing_or_unknown_is_one_line():
    from modeling_icc.utils.errors import UserInputError

    for name in ("nosuchstore://bucket/pool.parquet", "no-such-store://bucket/pool.parquet"):
        with pytest.raises(UserInputError, match=name.split(":")[0]):
            location(name)
    try:
        import gcsfs  # noqa: F401  (not among the test dependencies; if installed, its URL loads)
    except ImportError:
        with pytest.raises(UserInputError, match=r"gcsfs.*\[gcs\]"):
            location("gs://bucket/pool.parquet")
