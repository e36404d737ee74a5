"""Trust on remote locations (issue 48): one writer per prefix, no secret recorded or printed, remote calls
that end, resumes that see what workers wrote, no staging copies left behind, web servers without Range
requests, the Hub offline.

Against real servers on 127.0.0.1: moto's S3 server in a process of its own (so that a test can freeze it
with SIGSTOP, as a server that stops answering), and Python's ``http.server`` (which answers no Range
requests). Jobs run as ``icc`` processes, as a user runs them.
"""

from __future__ import annotations

import fcntl
import functools
import http.server
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import s3fs
from cli_run import icc

from modeling_icc.utils import leases
from modeling_icc.utils.locations import location
from modeling_icc.utils.provenance import synthetic_captions
from modeling_icc.utils.redaction import public_url, redact, remember

SECRET = "icc-test-secret-key-never-printed"
SHARDS, ROWS = 3, 600
#: Generous: what a hang would exceed, not what a run takes.
DEADLINE = 120
_BUCKETS = itertools.count()

_SERVER = """
import logging, sys, time
from moto.server import ThreadedMotoServer
logging.getLogger("werkzeug").setLevel(logging.WARNING)
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
host, port = server.get_host_and_port()
print(f"http://{host}:{port}", flush=True)
sys.stdin.read()  # until the test closes it
"""


@pytest.fixture(scope="module")
def server():
    """moto's S3 server in its own process: ``(endpoint, process)``."""
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    endpoint = process.stdout.readline().strip()
    assert endpoint.startswith("http://"), endpoint
    yield endpoint, process
    process.send_signal(signal.SIGCONT)
    process.stdin.close()
    process.kill()
    process.wait()


@contextmanager
def frozen(process: subprocess.Popen):
    """The server stops answering (its connections stay open) for the block."""
    process.send_signal(signal.SIGSTOP)
    try:
        yield
    finally:
        process.send_signal(signal.SIGCONT)


@pytest.fixture
def s3(server, monkeypatch, request, tmp_path):
    """A fresh bucket, this process pointed at it, and ``env``: the environment of ``icc`` processes."""
    endpoint, _ = server
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": "icc-test",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
        "FSSPEC_S3_ENDPOINT_URL": endpoint,
        "HF_HUB_OFFLINE": "1",
        "TMPDIR": str(tmp_path / "tmp"),
    }
    (tmp_path / "tmp").mkdir()
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "AWS_EC2_METADATA_DISABLED"):
        monkeypatch.setenv(name, env[name])
    monkeypatch.setenv("FSSPEC_S3_ENDPOINT_URL", endpoint)
    monkeypatch.setitem(fsspec.config.conf, "s3", {"endpoint_url": endpoint})
    s3fs.S3FileSystem.clear_instance_cache()
    fs = s3fs.S3FileSystem(endpoint_url=endpoint, use_listings_cache=False)
    bucket = f"trust-{next(_BUCKETS)}"
    fs.mkdir(bucket)
    yield fs, bucket, env
    s3fs.S3FileSystem.clear_instance_cache()


@pytest.fixture
def pool(tmp_path, s3, request):
    """Parquet shards (three, or the test's parameter) on local disk and in the bucket (``s3://BUCKET/in/``)."""
    fs, bucket, _ = s3
    shards = getattr(request, "param", SHARDS)
    captions = synthetic_captions(shards * ROWS, seed=5)
    table = pa.table({"uid": [f"{i:032x}" for i in range(len(captions))], "caption": captions})
    (tmp_path / "in").mkdir()
    for shard in range(shards):
        pq.write_table(table.slice(shard * ROWS, ROWS), tmp_path / "in" / f"{shard:05d}.parquet")
    fs.put(str(tmp_path / "in") + "/", f"{bucket}/in/", recursive=True)
    return tmp_path / "in"


def run(env: dict, *args: object, timeout: float = DEADLINE) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "modeling_icc", *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start(env: dict, *args: object) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "modeling_icc", *map(str, args)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def one_line(done: subprocess.CompletedProcess | tuple[int, str], code: int = 2) -> str:
    returncode, err = (done.returncode, done.stderr) if hasattr(done, "stderr") else done
    assert returncode == code, err
    lines = [line for line in err.splitlines() if line.startswith("icc: error:") or line.startswith("icc: interr")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert SECRET not in err
    return lines[0]


@pytest.fixture
def here(capsys):
    """``icc ARGS`` in this process (as the earlier trust tests run it: fast, the model loaded once):
    ``(exit code, stderr)``."""

    def call(*args: object) -> tuple[int, str]:
        code = icc(*args)
        return code, capsys.readouterr().err

    return call


def filter_command(source: object, output_dir: object, *rule: str) -> list[str]:
    return ["filter", "--model", "lite", "-i", source, "--output-dir", output_dir, "--no-progress", *rule]


def outputs(fs: s3fs.S3FileSystem, prefix: str) -> dict[str, bytes]:
    return {Path(key).name: fs.cat_file(key) for key in sorted(fs.glob(f"{prefix}/*.parquet"))}


def local_outputs(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.glob("*.parquet"))}


def wait_for(condition, what: str, deadline: float = DEADLINE) -> None:
    end = time.monotonic() + deadline
    while not condition():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.05)


# -- one writer per prefix (item 2) -------------------------------------------------------------------------

TOP, THRESHOLD = ["--top-fraction", "0.3"], ["--threshold", "0.5"]


def test_two_jobs_with_different_rules_started_together_on_one_prefix_never_mix(s3, pool, here):
    fs, bucket, env = s3
    prefix = f"s3://{bucket}/kept"
    jobs = [start(env, *filter_command(f"s3://{bucket}/in/*.parquet", prefix, *rule)) for rule in (THRESHOLD, TOP)]
    results = [(job.wait(timeout=DEADLINE), job.stderr.read()) for job in jobs]
    assert sorted(code for code, _ in results) == [0, 2], results
    line = one_line(next(result for result in results if result[0] == 2))
    assert "another icc job is writing to" in line or "holds a run with" in line
    winner, loser = (THRESHOLD, TOP) if results[0][0] == 0 else (TOP, THRESHOLD)
    recorded = json.loads(fs.cat_file(f"{bucket}/kept/_run.json"))["rule"]
    assert recorded["threshold" if winner is THRESHOLD else "top_fraction"] is not None
    # What the prefix holds is the winner's run, byte for byte, and says so.
    assert here(*filter_command(pool / "*.parquet", pool.parent / "ref", *winner))[0] == 0
    assert outputs(fs, f"{bucket}/kept") == local_outputs(pool.parent / "ref")
    assert not fs.exists(f"{bucket}/kept/.icc.lock")  # released at the end
    assert "holds a run with" in one_line(here(*filter_command(f"s3://{bucket}/in/*.parquet", prefix, *loser)))


def test_a_job_holding_the_prefix_refuses_a_second_one_in_one_line(s3, pool, here):
    fs, bucket, _ = s3
    prefix = f"s3://{bucket}/kept"
    command = filter_command(f"s3://{bucket}/in/*.parquet", prefix, *TOP)
    with leases.leased(location(f"{prefix}/.icc.lock"), prefix):
        line = one_line(here(*command))
        assert f"another icc job is writing to {prefix} (pid {os.getpid()} on this machine" in line
        assert "wait for it to end, or stop it and run this command again" in line
        assert not fs.glob(f"{bucket}/kept/*.parquet")
    assert not fs.exists(f"{bucket}/kept/.icc.lock")
    assert here(*command)[0] == 0  # the advice: once the other has ended


def _lease_record(**holder) -> bytes:
    record = {"icc_lease": 1, "owner": "someone-else", "started": "2026-01-01T00:00:00+00:00", **holder}
    return json.dumps(record).encode()


def test_the_lease_of_a_job_killed_on_this_machine_is_taken_over_at_once(s3, pool, here):
    fs, bucket, _ = s3
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that names no process now (or another, started later)
    holder = {**leases._this_process(), "pid": gone.pid, "process_start": -1, "seconds": 120}
    fs.pipe_file(f"{bucket}/kept/.icc.lock", _lease_record(**holder))
    code, err = here(*filter_command(f"s3://{bucket}/in/*.parquet", f"s3://{bucket}/kept", *TOP))
    assert code == 0, err
    said = f"taking over s3://{bucket}/kept: the icc job that held it (pid {gone.pid} on this machine) is gone"
    assert f"icc: notice: {said}" in err


def test_the_lease_of_another_machine_refuses_until_it_lapses_then_is_taken_over(s3, pool, here):
    fs, bucket, _ = s3
    fs.pipe_file(f"{bucket}/kept/.icc.lock", _lease_record(host="elsewhere", pid=4242, seconds=1))
    command = filter_command(f"s3://{bucket}/in/*.parquet", f"s3://{bucket}/kept", *TOP)
    code, err = here(*command)
    if code == 2:  # the server's clock may already say that a second has passed
        line = one_line((code, err))
        assert "pid 4242 on elsewhere" in line and "run this command again in 1 s, when its lease lapses" in line
        time.sleep(1.5)  # as the line says
        code, err = here(*command)
    assert code == 0, err
    assert "the icc job that held it (pid 4242 on elsewhere) has not renewed its lease for" in err


def test_a_lease_is_renewed_while_held_and_lost_when_another_job_takes_it(s3):
    fs, bucket, _ = s3
    place = location(f"s3://{bucket}/out/.icc.lock")
    with leases.leased(place, "out", seconds=0.4) as lease:
        first = fs.info(place.path)["ETag"]
        wait_for(lambda: fs.info(place.path)["ETag"] != first, "a renewal", deadline=10)
        lease.check()  # still held
        with pytest.raises(Exception, match="another icc job is writing to out"):
            leases.Lease(place, "out", 120).take(print)
        fs.pipe_file(place.path, _lease_record(host="elsewhere", pid=1, seconds=120))  # taken by force
        wait_for(lambda: lease._lost is not None, "the loss to be seen", deadline=10)
        with pytest.raises(leases.LeaseLost, match="taken over by another job"):
            lease.check()
    assert fs.exists(place.path)  # another job's lease is never released by this one


def test_two_single_file_jobs_never_write_one_s3_object(s3, pool, here):
    fs, bucket, _ = s3
    output = f"s3://{bucket}/scored.parquet"
    command = ["score", "--model", "lite", "-i", pool / "00000.parquet", "-o", output]
    with leases.leased(location(f"s3://{bucket}/.scored.parquet.icc.lock"), output):
        assert f"another icc job is writing to {output}" in one_line(here(*command))
    assert not fs.exists(f"{bucket}/scored.parquet")
    assert here(*command)[0] == 0
    assert not fs.exists(f"{bucket}/.scored.parquet.icc.lock")


def test_a_store_without_conditional_writes_holds_a_lease_object_and_says_which_to_delete(here):
    memory = fsspec.filesystem("memory")
    memory.pipe("/icc-lease/in.txt", b"a red bus\nan idea\n")
    memory.pipe("/icc-lease/out/.icc.lock", _lease_record(host="elsewhere", pid=7))
    command = ["score", "--model", "lite", "-i", "memory://icc-lease/in.txt", "--output-dir", "memory://icc-lease/out"]
    line = one_line(here(*command))
    assert "pid 7 on elsewhere" in line and "delete memory://icc-lease/out/.icc.lock and run this command again" in line
    memory.rm("/icc-lease/out/.icc.lock")  # as the line says
    assert here(*command)[0] == 0
    assert not memory.exists("/icc-lease/out/.icc.lock")
    memory.rm("/icc-lease", recursive=True)


def test_a_prefix_whose_summary_disagrees_with_its_record_is_never_reported_finished(s3, pool, here):
    """Left by two jobs at once (an older icc): ``_run.json`` records the threshold, the outputs and summary
    hold the top 30%. Re-running the threshold command must not print "kept ... (top 30.0%)" and exit 0."""
    fs, bucket, _ = s3
    source = f"s3://{bucket}/in/*.parquet"
    assert here(*filter_command(source, f"s3://{bucket}/mixed", *TOP))[0] == 0
    assert here(*filter_command(source, f"s3://{bucket}/other", *THRESHOLD))[0] == 0
    fs.pipe_file(f"{bucket}/mixed/_run.json", fs.cat_file(f"{bucket}/other/_run.json"))
    code, err = here(*filter_command(source, f"s3://{bucket}/mixed", *THRESHOLD))
    line = one_line((code, err))
    assert "holds a summary of another job" in line and "top 30.0%" in line and "kept" not in err
    fs.rm(f"{bucket}/mixed", recursive=True)  # as the line says
    code, err = here(*filter_command(source, f"s3://{bucket}/mixed", *THRESHOLD))
    assert code == 0 and "(score >= 0.5)" in err, err


def test_a_record_replaced_while_a_job_runs_is_not_reported_finished(tmp_path, here, monkeypatch):
    """Another writer (an older icc, a lapsed lease) replaces ``_run.json`` mid-job: the job stops in one line
    before its summary."""
    from modeling_icc.curation.engines import in_process

    (tmp_path / "in").mkdir()
    for shard in range(2):
        (tmp_path / "in" / f"{shard}.txt").write_text("\n".join(synthetic_captions(50, seed=shard)) + "\n")
    real = in_process.run_task

    def then_another_job_writes_the_record(job, task, *args, **kwargs):
        result = real(job, task, *args, **kwargs)
        record = tmp_path / "out" / "_run.json"
        record.write_text(json.dumps({**json.loads(record.read_text()), "rule": {"threshold": 0.9}}))
        return result

    monkeypatch.setattr(in_process, "run_task", then_another_job_writes_the_record)
    command = filter_command(tmp_path / "in" / "*.txt", tmp_path / "out", "--threshold", "0.5")
    line = one_line(here(*command))
    assert "no longer records this job's settings (rule differ)" in line
    assert f"delete {tmp_path / 'out'} and run this command again" in line
    assert not (tmp_path / "out" / "_summary.json").exists()
    monkeypatch.setattr(in_process, "run_task", real)  # the other writer gone
    shutil.rmtree(tmp_path / "out")  # as the line says
    assert here(*command)[0] == 0


# -- nothing secret recorded or printed (item 3) --------------------------------------------------------------


class _NoRanges(http.server.SimpleHTTPRequestHandler):
    """Python's file server: it answers no Range request (the whole file, 200)."""

    def log_message(self, *args: object) -> None:
        """Quiet."""


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up (icc, once it knows that no range is answered) is no error here."""


@pytest.fixture
def web(tmp_path):
    """A web server on 127.0.0.1 serving ``tmp_path / "web"``, without Range requests: its base URL."""
    folder = tmp_path / "web"
    folder.mkdir()
    httpd = _QuietServer(("127.0.0.1", 0), functools.partial(_NoRanges, directory=folder))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", folder
    httpd.shutdown()
    httpd.server_close()


PASSWORD = "Pa55-word-never-written"


def test_a_password_in_an_http_url_is_never_recorded_or_printed(tmp_path, web, here):
    base, folder = web
    (folder / "pool.txt").write_text("\n".join(synthetic_captions(200, seed=1)) + "\n")
    authority = base.replace("http://", f"http://alice:{PASSWORD}@")
    signed = f"{base}/pool.txt?X-Amz-Credential=alice&X-Amz-Signature={PASSWORD}&X-Amz-Date=20260101"
    for number, source in enumerate((f"{authority}/pool.txt", signed)):
        out = tmp_path / f"out{number}"
        shards = here("filter", "--model", "lite", "-i", source, "--output-dir", out, "--top-k", "50")
        single = here(
            "filter", "--model", "lite", "-i", source, "-o", tmp_path / "kept.tsv", "--top-k", "5", "--show", "2"
        )
        missing = here("score", "--model", "lite", "-i", source.replace("pool.txt", "gone.txt"), "-o", out / "x.tsv")
        assert shards[0] == 0 and single[0] == 0, (shards, single)
        assert "input file not found: http://" in one_line(missing)
        written = "".join(path.read_text() for path in out.iterdir() if path.suffix == ".json")
        for text in (written, shards[1], single[1], missing[1]):
            assert PASSWORD not in text and "alice" not in text
        recorded = json.loads((out / "_run.json").read_text())["inputs"][0]["path"]
        assert recorded == public_url(source) and "***" in recorded
        assert json.loads((out / "pool.stats.json").read_text())["input"] == recorded


def test_credentials_in_an_s3_url_are_refused_in_one_line_without_the_secret(s3, tmp_path, here):
    _, bucket, _ = s3
    url = f"s3://AKIAEXAMPLE:{SECRET}@{bucket}/in/00000.parquet"
    (tmp_path / "in.txt").write_text("a dog\n")
    for command in (
        ["score", "--model", "lite", "-i", url, "-o", tmp_path / "x.parquet"],
        ["score", "--model", "lite", "-i", tmp_path / "in.txt", "-o", url],
        filter_command(url.replace("00000", "*"), tmp_path / "out", *TOP),
        filter_command(tmp_path / "in.txt", f"s3://AKIAEXAMPLE:{SECRET}@{bucket}/kept", *TOP),
    ):
        line = one_line(here(*command))
        assert f"s3://***@{bucket}/" in line and "credentials cannot be given in s3:// URLs" in line
        assert "AKIAEXAMPLE" not in line


def test_secrets_a_url_carried_are_hidden_wherever_a_library_quotes_them():
    from modeling_icc.cli import main as cli_main

    remember(f"s3://KEYID:{SECRET}@bucket/x.parquet")
    quoted = f'Invalid bucket name "KEYID:{SECRET}@bucket": Bucket name must match'
    assert redact(quoted) == 'Invalid bucket name "***@bucket": Bucket name must match'
    assert public_url(f"ftp://bob:{SECRET}@host/a.txt and https://h/a?sig={SECRET}&sv=1") == (
        "ftp://***@host/a.txt and https://h/a?sig=***&sv=1"
    )
    lines = []

    class Stream:
        def write(self, text: str) -> int:
            lines.append(text)
            return len(text)

    stream = cli_main.RedactedStream(Stream())
    print(f"icc: a warning naming {SECRET}", file=stream)
    try:
        raise RuntimeError(f"cannot open s3://KEYID:{SECRET}@bucket")
    except RuntimeError as error:
        saved, sys.stderr = sys.stderr, stream
        try:
            cli_main._redacted_excepthook(type(error), error, error.__traceback__)
        finally:
            sys.stderr = saved
    text = "".join(lines)
    assert "Traceback" in text and SECRET not in text and "KEYID" not in text


# -- remote calls end (item 5) ------------------------------------------------------------------------------


@pytest.mark.parametrize("pool", [5], indirect=True)
@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_in_remote_io_ends_the_job_within_seconds_and_it_resumes(s3, pool, server, here, workers):
    """With two workers, each was stopped mid-shard but then ran the next shard queued for it (the pool
    reports a task's ``SystemExit`` and goes on), waiting on the frozen store for minutes."""
    fs, bucket, env = s3
    command = filter_command(f"s3://{bucket}/in/*.parquet", f"s3://{bucket}/kept", *TOP)
    job = start(env, *command, "--workers", workers)
    wait_for(lambda: fs.glob(f"{bucket}/kept/.icc-work/*.raw.npz") or job.poll() is not None, "a first shard")
    assert job.poll() is None, job.stderr.read()
    with frozen(server[1]):  # mid-run: shards are being read and saved
        time.sleep(0.5)  # the job waits on the store now
        stopped = time.monotonic()
        job.send_signal(signal.SIGINT)
        code = job.wait(timeout=DEADLINE)
        seconds = time.monotonic() - stopped
    assert one_line((code, job.stderr.read()), code=130) == "icc: interrupted; run the same command again to resume"
    assert seconds < 15, f"Ctrl-C took {seconds:.1f} s"
    code, err = here(*command)  # resumes: the interrupted job's lease was released, or is taken over
    assert code == 0, err
    assert here(*filter_command(pool / "*.parquet", pool.parent / "ref", *TOP))[0] == 0
    assert outputs(fs, f"{bucket}/kept") == local_outputs(pool.parent / "ref")


def test_a_server_that_stops_answering_ends_the_job_with_one_line(s3, pool, server):
    _, bucket, env = s3
    env = {**env, "ICC_REMOTE_TIMEOUT": "0.5"}
    command = ["score", "--model", "lite", "-i", f"s3://{bucket}/in/00000.parquet", "-o", f"s3://{bucket}/o.parquet"]
    with frozen(server[1]):
        line = one_line(run(env, *command))
    assert "did not answer within 0.5 s, ICC_REMOTE_TIMEOUT" in line
    assert "not found" not in line and "not a readable" not in line  # a timeout is said as one
    assert "run the same command again once it answers" in line
    assert run(env, *command).returncode == 0  # as the line says, now that it answers


def test_a_web_server_that_never_answers_ends_the_job_with_one_line(tmp_path):
    """fsspec's HTTP filesystem says "not found" for any failure: a timeout must not read as a missing file."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # connections are made, and never answered
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/pool.txt"
        env = {**os.environ, "ICC_REMOTE_TIMEOUT": "0.5", "HF_HUB_OFFLINE": "1"}
        line = one_line(run(env, "score", "--model", "lite", "-i", url, "-o", tmp_path / "o.tsv"))
    assert f"cannot read or write {url}" in line and "did not answer within 0.5 s" in line


def test_a_dead_server_ends_the_job_with_one_line(s3, pool, tmp_path, here, monkeypatch):
    _, bucket, _ = s3
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens here once closed
    monkeypatch.setitem(fsspec.config.conf, "s3", {"endpoint_url": f"http://127.0.0.1:{port}"})
    for command in (
        ["score", "--model", "lite", "-i", f"s3://{bucket}/in/00000.parquet", "-o", tmp_path / "o.parquet"],
        filter_command(pool / "*.parquet", f"s3://{bucket}/kept", *TOP),
    ):
        line = one_line(here(*command))
        assert f"127.0.0.1:{port}" in line and "not found" not in line


# -- resumes see what workers wrote (item 6) ---------------------------------------------------------------


@pytest.mark.parametrize("rule", [TOP, THRESHOLD], ids=["top-fraction", "threshold"])
def test_a_killed_job_resumed_with_two_workers_finishes_at_once(s3, pool, here, rule):
    """The resuming process lists the prefix before its workers write to it: what they wrote must be seen
    (a cached listing failed the resume, ``FileNotFoundError`` on the first shard a worker saved)."""
    fs, bucket, env = s3
    command = filter_command(f"s3://{bucket}/in/*.parquet", f"s3://{bucket}/kept", *rule)
    job = start(env, *command)
    saved = f"{bucket}/kept/.icc-work/*.raw.npz" if rule is TOP else f"{bucket}/kept/*.stats.json"
    wait_for(lambda: fs.glob(saved) or job.poll() is not None, "saved work")
    os.killpg(job.pid, signal.SIGKILL)
    job.wait()
    assert len(fs.glob(f"{bucket}/kept/*.stats.json")) < SHARDS, "the kill must land mid-run"
    # The first resume finishes (in a process of its own: a pool's forkserver started earlier in this one
    # would not have this test's credentials).
    done = run(env, *command, "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert here(*filter_command(pool / "*.parquet", pool.parent / "ref", *rule))[0] == 0
    assert outputs(fs, f"{bucket}/kept") == local_outputs(pool.parent / "ref")


# -- no staging copies left behind (item 8) ---------------------------------------------------------------


def test_staging_copies_of_a_killed_upload_are_removed_by_the_next_and_a_running_ones_kept(tmp_path, here, monkeypatch):
    staging = tmp_path / "tmp"
    staging.mkdir()
    env = {**os.environ, "TMPDIR": str(staging), "HF_HUB_OFFLINE": "1"}
    (tmp_path / "pool.txt").write_text("\n".join(synthetic_captions(300_000, seed=2)) + "\n")
    # memory:// is uploaded as any store is (through a staging copy), in the job's own process
    job = start(env, "score", "--model", "lite", "-i", tmp_path / "pool.txt", "-o", "memory://big/scored.txt")
    wait_for(lambda: list(staging.glob("icc-upload-*/scored.txt")) or job.poll() is not None, "a staging copy")
    os.killpg(job.pid, signal.SIGKILL)
    assert job.wait() == -signal.SIGKILL
    assert list(staging.glob("icc-upload-*")), "the killed job left its staging copy"
    running = staging / "icc-upload-running"
    running.mkdir()
    (running / "x.parquet").write_bytes(b"being uploaded")
    handle = os.open(running, os.O_RDONLY)
    fcntl.flock(handle, fcntl.LOCK_EX)  # as a running job holds its own
    monkeypatch.setattr(tempfile, "tempdir", str(staging))
    try:
        (tmp_path / "small.txt").write_text("a red bus\n")
        assert here("score", "--model", "lite", "-i", tmp_path / "small.txt", "-o", "memory://small/s.txt")[0] == 0
        assert sorted(staging.glob("icc-upload-*")) == [running]
    finally:
        os.close(handle)
    fsspec.filesystem("memory").rm("/small", recursive=True)


# -- web servers without Range requests (item 9) ------------------------------------------------------------


def test_a_web_server_without_range_requests(tmp_path, web, here):
    base, folder = web
    captions = synthetic_captions(80_000, seed=4)  # about 6 MB: more than one of fsspec's 5 MB blocks
    (folder / "big.txt").write_text("\n".join(captions) + "\n")
    code, err = here("score", "--model", "lite", "-i", f"{base}/big.txt", "-o", tmp_path / "scored.tsv")
    assert code == 0, err  # text is streamed, in one request
    assert len((tmp_path / "scored.tsv").read_text().splitlines()) == len(captions) + 1
    blob = pa.array([os.urandom(1 << 20) for _ in range(6)])  # 6 MB that do not compress: read by seeks
    pq.write_table(pa.table({"caption": captions[:6], "jpg": blob}), folder / "pool.parquet")
    for command in (
        ["score", "--model", "lite", "-i", f"{base}/pool.parquet", "-o", tmp_path / "p.parquet"],
        ["score", "--model", "lite", "-i", f"{base}/pool.parquet", "--output-dir", tmp_path / "shards"],
    ):
        line = one_line(here(*command))
        assert f"{base}/pool.parquet: the server does not answer HTTP Range requests" in line
        assert "download the file and pass the local copy" in line
    with urllib.request.urlopen(f"{base}/pool.parquet") as answer:  # as the line says
        (tmp_path / "pool.parquet").write_bytes(answer.read())
    assert here("score", "--model", "lite", "-i", tmp_path / "pool.parquet", "-o", tmp_path / "p.parquet")[0] == 0


# -- the Hub offline (item 14) ------------------------------------------------------------------------------


def test_a_single_hub_input_offline_says_offline_as_globs_and_outputs_do(tmp_path, here):
    (tmp_path / "in.txt").write_text("a red bus\n")
    hub = "hf://datasets/someone/pool"
    for command in (
        ["score", "--model", "lite", "-i", f"{hub}/data/00000.parquet", "-o", tmp_path / "o.parquet"],
        ["score", "--model", "lite", "-i", f"{hub}/data/00000.parquet", "--output-dir", tmp_path / "shards"],
        ["score", "--model", "lite", "-i", f"{hub}/data/*.parquet", "--output-dir", tmp_path / "shards"],
        ["score", "--model", "lite", "-i", tmp_path / "in.txt", "-o", f"{hub}/o.txt"],
    ):
        line = one_line(here(*command))
        assert "offline mode is enabled" in line and "not found" not in line, line


def test_a_killed_jobs_multipart_uploads_are_aborted_by_the_next_holder_of_the_output(s3, pool, here):
    """S3 keeps (and bills) the parts of an upload that a ``kill -9`` cut short until it is aborted: the next job
    to hold the prefix's lease aborts those under it, and never those elsewhere."""
    fs, bucket, _ = s3
    for key in ("kept/00001.parquet", "elsewhere/x.parquet"):
        upload = fs.call_s3("create_multipart_upload", Bucket=bucket, Key=key)
        fs.call_s3("upload_part", Bucket=bucket, Key=key, UploadId=upload["UploadId"], PartNumber=1, Body=b"x" * 100)
    assert here(*filter_command(f"s3://{bucket}/in/*.parquet", f"s3://{bucket}/kept", *THRESHOLD))[0] == 0
    left = fs.call_s3("list_multipart_uploads", Bucket=bucket).get("Uploads", [])
    assert [upload["Key"] for upload in left] == ["elsewhere/x.parquet"]
