"""``icc score|filter`` failures that must read as one line (``icc: error: ...``, exit 2), never a traceback.

Each test reproduces a case of the third trust audit (issue 25, items 8-17): write errors,
closed standard streams, interrupts, missing devices, advice naming a flag that does not
exist, empty inputs and rules outside the score's range.
"""

import argparse
import ast
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from cli_run import icc, icc_process, one_line_error, written

from modeling_icc.cli.main import COMMANDS, build_parser

PACKAGE = Path(__file__).resolve().parents[1] / "modeling_icc"


@pytest.fixture
def captions(tmp_path) -> Path:
    return written(tmp_path / "in.txt", "a dog on a beach\nthe meaning of life\n")


def test_unknown_output_extension_names_the_output_format_flag(captions, tmp_path, capsys):
    assert icc("score", "--model", "lite", "-i", captions, "-o", tmp_path / "o.xlsx") == 2
    err = capsys.readouterr().err
    one_line_error(err, "cannot tell the format of")
    assert "pass --output-format" in err and "--format " not in err.replace("--output-format", "")
    assert not (tmp_path / "o.xlsx").exists()


def _icc_options() -> set[str]:
    options = set()
    for command in COMMANDS:
        parser = build_parser(command)
        (subparsers,) = (action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
        options.update(flag for action in subparsers.choices[command]._actions for flag in action.option_strings)
    return options


def _flags_in_raised_messages(path: Path) -> list[tuple[int, str]]:
    """``--flag`` words in the string literals of every ``raise`` in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Raise) and node.exc is not None:
            for part in ast.walk(node.exc):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    found += [
                        (node.lineno, flag) for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*\b(?!_)", part.value)
                    ]
    return found


def test_every_flag_an_error_message_names_exists():
    """An error that advises a flag names one the ``icc`` commands have (training scripts have their own parser)."""
    options = _icc_options()
    wrong = [
        f"{path.relative_to(PACKAGE)}:{line}: {flag}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "training.py"
        for line, flag in _flags_in_raised_messages(path)
        if flag not in options
    ]
    assert not wrong, wrong
    assert {"--output-format", "--output-dir", "--workers"} <= options  # the scan sees the real parsers


@pytest.mark.parametrize("threshold", ["1.1", "-0.1"])
def test_threshold_outside_the_score_range_is_refused(captions, tmp_path, capsys, threshold):
    out = tmp_path / "kept.txt"
    assert icc("filter", "--model", "lite", "-i", captions, "-o", out, f"--threshold={threshold}") == 2
    one_line_error(
        capsys.readouterr().err, f"an ICC threshold must be in [0, 1], the range of the scores; got {threshold}"
    )
    assert not out.exists()
    sharded = ("-i", captions, "--output-dir", tmp_path / "kept", f"--threshold={threshold}")
    assert icc("filter", "--model", "lite", *sharded) == 2
    one_line_error(capsys.readouterr().err, "an ICC threshold must be in [0, 1]")
    assert not (tmp_path / "kept").exists()


def test_threshold_bounds_apply_to_the_icc_rule_only(tmp_path, capsys):
    import datasets

    from modeling_icc import KeepRule, filter_by_icc
    from modeling_icc.utils.errors import UserInputError

    pool = datasets.Dataset.from_dict({"caption": ["a red car on a street", "the meaning of life"], "clip": [2.4, 0.3]})
    with pytest.raises(UserInputError, match=r"must be in \[0, 1\]"):
        filter_by_icc(pool, threshold=1.1, model="lite")
    for edge in (0, 1):  # scores can reach both ends
        filter_by_icc(pool, threshold=edge, model="lite")
    # another column may live on any scale (CLIPScore with w=2.5 reaches 2.5); ranking is untouched
    kept = filter_by_icc(pool, top_k=2, clip=KeepRule(threshold=1.5), clip_column="clip", model="lite")
    assert kept["caption"] == ["a red car on a street"]
    source = tmp_path / "pairs.csv"
    source.write_text("caption,clip\na red car on a street,2.4\nthe meaning of life,0.3\n")
    out = tmp_path / "kept.csv"
    assert (
        icc(
            *"filter --model lite -i".split(),
            source,
            "-o",
            out,
            "--top-k",
            "2",
            "--and-threshold",
            "1.5",
            "--and-column",
            "clip",
        )
        == 0
    )
    assert out.read_text().splitlines()[1].startswith("a red car on a street,2.4,")


def test_empty_jsonl_gives_an_empty_output_as_empty_txt_does(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    for name in ("out.jsonl", "out.csv", "out.parquet"):
        assert icc("score", "--model", "lite", "-i", empty, "-o", tmp_path / name) == 0, capsys.readouterr().err
    assert (tmp_path / "out.jsonl").read_bytes() == b""
    assert (tmp_path / "out.csv").read_text().splitlines() == ["icc_score,icc_model,icc_language"]
    assert "icc: wrote 0 rows to" in capsys.readouterr().err
    result = icc_process("filter", "--model", "lite", "-i", "-", "--format", "jsonl", "--top-k", "3", input="")
    assert result.returncode == 0 and result.stdout == "", result.stderr


def test_an_empty_jsonl_shard_among_others_gives_an_empty_output_shard(tmp_path, capsys):
    shards = tmp_path / "pool"
    shards.mkdir()
    uid = "0" * 31 + "5"
    (shards / "a.jsonl").write_text(
        f'{{"caption": "a red car", "uid": "{uid}"}}\n{{"caption": "life", "uid": "{uid[:-1]}6"}}\n'
    )
    (shards / "b.jsonl").write_text("\n")  # empty but for a blank line
    out = tmp_path / "kept"
    args = ("--model", "lite", "-i", shards / "*.jsonl", "--output-dir", out, "--top-k", "1")
    assert icc("filter", *args, "--datacomp-subset", out / "subset.npy") == 0, capsys.readouterr().err
    assert (out / "b.jsonl").read_bytes() == b"" and (out / "b.stats.json").is_file()
    (kept,) = [json.loads(line) for line in (out / "a.jsonl").read_text().splitlines()]
    assert kept["uid"] == uid and kept["caption"] == "a red car"
    assert len(np.load(out / "subset.npy")) == 1


NO_CUDA = pytest.mark.skipif(
    __import__("torch").cuda.is_available(), reason="checks the errors of a machine without CUDA"
)


@NO_CUDA
@pytest.mark.parametrize(
    ("device", "message"),
    [
        ("cuda", "device 'cuda' is not available: this torch"),
        ("cuda:7", "device 'cuda:7' is not available"),
        ("tpu", "unknown device 'tpu'; use 'cpu', 'cuda', 'cuda:N', 'mps' or 'xpu'"),
        ("nonsense", "unknown device 'nonsense'"),
        ("meta", "device 'meta' is not supported"),
    ],
)
def test_a_device_that_is_not_here_is_one_line(captions, tmp_path, capsys, device, message):
    out = tmp_path / "out.jsonl"
    assert icc("score", "--model", "mini", "-i", captions, "-o", out, "--device", device) == 2
    one_line_error(capsys.readouterr().err, message)
    assert not out.exists()
    assert icc("score", "--model", "mini", "a dog", "--device", device) == 2
    one_line_error(capsys.readouterr().err, message)


def test_an_unknown_dtype_is_one_line(capsys):
    assert icc("score", "--model", "mini", "a dog", "--dtype", "int8") == 2
    one_line_error(capsys.readouterr().err, "unknown dtype 'int8'; use one of")


@NO_CUDA
def test_the_evaluate_module_names_a_missing_device():
    from modeling_icc.hub.measurement import compute_icc
    from modeling_icc.utils.errors import UserInputError

    with pytest.raises(UserInputError, match="device 'cuda:7' is not available"):
        compute_icc(["a dog"], model_id="mini", device="cuda:7")
    with pytest.raises(UserInputError, match="unknown dtype 'int8'"):
        compute_icc(["a dog"], model_id="mini", dtype="int8")


def test_a_gpu_index_beyond_the_gpus_here_is_named(monkeypatch):
    import torch

    from modeling_icc.scoring.devices import resolve_device
    from modeling_icc.utils.errors import UserInputError

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert resolve_device("cuda:1") == torch.device("cuda:1")
    with pytest.raises(UserInputError, match=r"device 'cuda:7' is not available: 2 CUDA GPUs here \(cuda:0, cuda:1\)"):
        resolve_device("cuda:7")


def _unwritable_folder() -> Path:
    """A folder where not even root can create a file (sysfs)."""
    folder = Path("/sys")
    try:
        (folder / "icc-probe").touch()
    except OSError:
        return folder
    (folder / "icc-probe").unlink()
    pytest.skip("/sys is writable here")


@pytest.mark.parametrize("where", ["a directory", "under a file", "an unwritable folder", "sharded"])
def test_an_unwritable_datacomp_subset_fails_before_any_work(tmp_path, capsys, where):
    source = tmp_path / "pool.jsonl"
    source.write_text('{"caption": "a red car", "uid": "%s"}\n' % ("0" * 32))
    subset = {
        "a directory": tmp_path / "subset.npy",
        "under a file": source / "subset.npy",
        "an unwritable folder": _unwritable_folder() / "icc" / "subset.npy",
        "sharded": tmp_path / "subset.npy",
    }[where]
    if where in ("a directory", "sharded"):
        subset.mkdir()
    out = tmp_path / ("kept" if where == "sharded" else "kept.jsonl")
    target = ("--output-dir",) if where == "sharded" else ("-o",)
    args = ("-i", source, *target, out, "--threshold", "0.5", "--datacomp-subset", subset)
    assert icc("filter", "--model", "lite", *args) == 2
    err = capsys.readouterr().err
    one_line_error(err, "the DataComp subset file")
    assert ("is a directory" in err) if where in ("a directory", "sharded") else ("cannot write" in err)
    assert not out.exists()


def test_a_sharded_datacomp_subset_not_ending_in_npy_fails_before_any_work(tmp_path, capsys):
    source = tmp_path / "pool.jsonl"
    source.write_text('{"caption": "a red car", "uid": "%s"}\n' % ("0" * 32))
    out = tmp_path / "kept"
    assert (
        icc(
            *"filter --model lite -i".split(),
            source,
            "--output-dir",
            out,
            "--threshold",
            "0.5",
            "--datacomp-subset",
            tmp_path / "s.txt",
        )
        == 2
    )
    one_line_error(capsys.readouterr().err, "must end in .npy")
    assert not out.exists()


def _no_temp_files(folder: Path) -> None:
    assert not list(folder.glob(".*.tmp")), list(folder.iterdir())


def test_a_full_disk_on_stdout_is_one_line(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a dog on a beach\n" * 50_000)
    for command in (["score", "-i", source], ["filter", "-i", source, "--top-k", "10"], ["score", "a dog"]):
        with open("/dev/full", "w") as full:
            result = icc_process(*command, "--model", "lite", stdout=full)
        one_line_error(result.stderr, "icc: error: No space left on device")
        assert result.returncode == 2 and "Exception ignored" not in result.stderr


def test_an_output_that_outgrows_the_disk_keeps_the_old_file(tmp_path):
    """A file size limit (RLIMIT_FSIZE) stands for a full disk: the write fails mid-way."""
    import resource

    source = tmp_path / "in.txt"
    source.write_text("a dog on a beach\n" * 50_000)
    out = tmp_path / "out.jsonl"
    out.write_text("the old output\n")

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))

    for command in (["score"], ["filter", "--top-fraction", "0.5"]):
        result = icc_process(*command, "--model", "lite", "-i", source, "-o", out, preexec_fn=limit_file_size)
        assert result.returncode == 2
        one_line_error(result.stderr, "icc: error: File too large")
        assert out.read_text() == "the old output\n"
        _no_temp_files(tmp_path)


def test_a_folder_that_turns_read_only_keeps_the_old_file(captions, tmp_path, capsys, monkeypatch):
    import errno
    import os

    from modeling_icc.utils import atomic_files

    out = tmp_path / "out.jsonl"
    out.write_text("the old output\n")

    def read_only(source, target):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(target))

    monkeypatch.setattr(atomic_files.os, "replace", read_only)
    assert icc("score", "--model", "lite", "-i", captions, "-o", out) == 2
    one_line_error(capsys.readouterr().err, f"icc: error: {out}: Read-only file system")
    assert out.read_text() == "the old output\n"
    _no_temp_files(tmp_path)


def test_a_failed_write_in_a_sharded_job_is_named_even_when_nothing_can_be_cleaned_up(
    captions, tmp_path, capsys, monkeypatch
):
    import errno
    import os
    import pathlib

    from modeling_icc.utils import atomic_files
    from modeling_icc.utils.resumable import LOCK_FILE, RUN_FILE

    def not_permitted(path: object) -> OSError:
        return PermissionError(errno.EPERM, os.strerror(errno.EPERM), str(path))

    replace = os.replace

    def refuse_rename(source, target):  # the job's settings are recorded; its first shard cannot be
        if pathlib.Path(target).name == RUN_FILE:
            return replace(source, target)
        raise not_permitted(target)

    def refuse_removal(path, missing_ok=False):  # the folder turned read-only: no clean-up succeeds either
        raise not_permitted(path)

    monkeypatch.setattr(atomic_files.os, "replace", refuse_rename)
    monkeypatch.setattr(pathlib.Path, "unlink", refuse_removal)
    out = tmp_path / "out"
    assert icc("score", "--model", "lite", "-i", captions, "--output-dir", out) == 2
    err = capsys.readouterr().err
    one_line_error(err, f"icc: error: {out / 'in.'}")
    assert "Operation not permitted" in err and LOCK_FILE not in err and ".tmp" not in err


def test_an_unwritable_output_or_output_dir_fails_before_any_work(captions, tmp_path, capsys):
    folder = _unwritable_folder()
    assert icc("score", "--model", "lite", "-i", captions, "-o", folder / "out.jsonl") == 2
    one_line_error(capsys.readouterr().err, f"cannot write the output {folder / 'out.jsonl'}: ")
    assert icc("score", "--model", "lite", "-i", captions, "--output-dir", folder) == 2
    one_line_error(capsys.readouterr().err, f"cannot write to the output directory {folder}: ")
    (tmp_path / "d.jsonl").mkdir()
    assert icc("score", "--model", "lite", "-i", captions, "-o", tmp_path / "d.jsonl") == 2
    one_line_error(capsys.readouterr().err, f"the output {tmp_path / 'd.jsonl'} is a directory; name a file")


def _closing(fd: int):
    """A ``preexec_fn`` that starts the command with file descriptor ``fd`` closed (``<&-``, ``>&-``)."""
    import os

    return lambda: os.close(fd)


def test_closed_stdin_is_one_line():
    for command in (["score", "--input", "-"], ["score"], ["filter", "-i", "-", "--threshold", "0.5"]):
        result = icc_process(*command, "--model", "lite", stdin=None, preexec_fn=_closing(0))
        assert result.returncode == 2, result.stderr
        one_line_error(result.stderr, "icc: error: standard input is closed; pass --input FILE")


def test_closed_stdout_is_one_line_unless_an_output_file_is_given(captions, tmp_path):
    for command in (["score", "a dog"], ["score", "-i", captions], ["filter", "-i", captions, "--top-k", "1"]):
        result = icc_process(*command, "--model", "lite", preexec_fn=_closing(1))
        assert result.returncode == 2, result.stderr
        one_line_error(result.stderr, "icc: error: standard output is closed; pass --output FILE")
    out = tmp_path / "out.jsonl"
    result = icc_process("score", "--model", "lite", "-i", captions, "-o", out, preexec_fn=_closing(1))
    assert result.returncode == 0 and len(out.read_text().splitlines()) == 2, result.stderr


def test_closed_stderr_keeps_messages_out_of_the_output(captions):
    result = icc_process("score", "--model", "lite", "-i", captions, preexec_fn=_closing(2))
    assert result.returncode == 0
    header, *rows = result.stdout.splitlines()
    assert header == "caption\ticc_score\ticc_model\ticc_language"
    assert [line.split("\t")[0] for line in rows] == ["a dog on a beach", "the meaning of life"]


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    """``icc score ... | head -1``: no message, exit code 0 (the reader has what it wanted)."""
    source = tmp_path / "in.txt"
    source.write_text("a dog on a beach\n" * 200_000)
    for command in (["score", "-i", source], ["filter", "-i", source, "--top-fraction", "0.9"]):
        process = subprocess.Popen(
            [sys.executable, "-m", "modeling_icc", *map(str, command), "--model", "lite"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stdout.readline() == "caption\ticc_score\ticc_model\ticc_language\n"
        assert process.stdout.readline().startswith("a dog on a beach\t")
        process.stdout.close()
        assert process.wait() == 0
        assert process.stderr.read() == ""


def test_explain_with_a_reader_that_goes_away_ends_quietly_too():
    """``icc explain ... | head -1`` (rich's console would exit with status 1)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "modeling_icc", "explain", "--model", "lite", *["a dog on a beach"] * 3000],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline().startswith("ICC ")
    process.stdout.close()
    assert process.wait() == 0
    assert process.stderr.read() == ""


def _interrupted(command: list[object], ready: Callable[[], bool], **options) -> subprocess.CompletedProcess:
    """Run ``icc COMMAND`` in its own process group and press Ctrl-C (SIGINT to the group) once ``ready()``.

    SIGINT is reset to its default in the child: a suite started in the background (``nohup ... &``)
    ignores SIGINT, and every process it starts would inherit that."""
    import os
    import signal
    import time

    process = subprocess.Popen(
        [sys.executable, "-m", "modeling_icc", *map(str, command)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        **options,
    )
    deadline = time.monotonic() + 120
    while not ready():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=120)
    deadline = time.monotonic() + 15  # no worker, server or tracker left behind (they exit with the job)
    while _group_alive(process.pid):
        assert time.monotonic() < deadline, "processes of the interrupted job are still running"
        time.sleep(0.1)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


#: Exit statuses of an interrupted command: 130, or death by SIGINT when Ctrl-C landed inside C code that
#: ran Python (``PyRun_*``: Python then re-raises the signal at exit). A shell shows both as 130.
INTERRUPTED = (130, -2)


def _group_alive(group: int) -> bool:
    import os

    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def test_ctrl_c_on_one_file_is_one_line_and_leaves_nothing(tmp_path):
    import os

    source = tmp_path / "in.txt"
    source.write_text("a dog on a beach\n" * 300_000)
    out = tmp_path / "out.jsonl"
    out.write_text("the old output\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    command = ["filter", "--model", "lite", "-i", source, "-o", out, "--top-fraction", "0.5"]
    # The first pass's work files lie beside the output (.out.jsonl.icc-*.tmp), none in $TMPDIR.
    started = lambda: any(tmp_path.glob(f".{out.name}.icc-*"))  # noqa: E731
    result = _interrupted(command, started, env={**os.environ, "TMPDIR": str(temp)})
    assert result.returncode in INTERRUPTED
    assert result.stderr.strip() == "icc: interrupted"
    assert out.read_text() == "the old output\n"
    assert not any(temp.iterdir())
    _no_temp_files(tmp_path)


def test_ctrl_c_on_a_sharded_job_says_how_to_resume_and_leaves_nothing(tmp_path):
    pool = tmp_path / "pool"
    pool.mkdir()
    for shard in range(4):
        (pool / f"{shard}.txt").write_text(f"a dog number {shard} on a beach\n" * 60_000)
    out = tmp_path / "scored"
    command = ["score", "--model", "lite", "-i", pool / "*.txt", "--output-dir", out, "--workers", "2"]
    result = _interrupted(command, lambda: any(out.glob(".*.tmp")) or any(out.glob("*.stats.json")))  # mid-job
    assert result.returncode in INTERRUPTED
    assert result.stderr.strip() == "icc: interrupted; run the same command again to resume"
    assert not list(out.rglob("*.tmp"))
    resumed = icc_process(*command)
    assert resumed.returncode == 0, resumed.stderr
    # .txt shards are written as TSV with a header line
    assert [len((out / f"{shard}.tsv").read_text().splitlines()) for shard in range(4)] == [60_001] * 4


def test_workers_beyond_the_shards_and_cores_are_lowered_and_the_summary_says_what_ran(tmp_path, capsys):
    from modeling_icc.scoring.tokenize_workers import usable_cores

    pool = tmp_path / "pool"
    pool.mkdir()
    for shard in range(3):
        (pool / f"{shard}.txt").write_text("a dog on a beach\nthe meaning of life\n")
    out = tmp_path / "scored"
    assert icc("score", "--model", "lite", "-i", pool / "*.txt", "--output-dir", out, "--workers", "1000") == 0
    ran = min(3, usable_cores())
    err = capsys.readouterr().err
    assert f"icc: notice: --workers 1000 lowered to {ran} (3 shards; this process may use" in err
    assert json.loads((out / "_summary.json").read_text())["workers"] == ran
    assert ("by 2 worker processes" in err) == (ran == 2)


def _compress(data: bytes, path: Path) -> Path:
    """``data`` written to ``path`` compressed as its extension says (zstd through Arrow)."""
    import bz2
    import gzip
    import lzma

    import pyarrow as pa

    writers = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}
    if path.suffix == ".zst":
        with pa.output_stream(str(path), compression="zstd") as stream:
            stream.write(data)
    else:
        path.write_bytes(writers[path.suffix](data))
    return path


TABLES = {
    "jsonl": b'{"caption": "a red car on a street", "id": 1}\n{"caption": "the meaning of life", "id": 2}\n',
    "csv": b"id,caption\n1,a red car on a street\n2,the meaning of life\n",
    "tsv": b"id\tcaption\n1\ta red car on a street\n2\tthe meaning of life\n",
    "txt": b"a red car on a street\nthe meaning of life\n",
}


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zst"])
@pytest.mark.parametrize("fmt", sorted(TABLES))
def test_compressed_inputs_read_as_their_plain_text(tmp_path, capsys, fmt, suffix):
    plain = tmp_path / f"in.{fmt}"
    plain.write_bytes(TABLES[fmt])
    packed = _compress(TABLES[fmt], tmp_path / f"in.{fmt}{suffix}")
    assert icc("score", "--model", "lite", "-i", plain, "-o", tmp_path / f"plain.{fmt}") == 0
    assert icc("score", "--model", "lite", "-i", packed, "-o", tmp_path / f"packed.{fmt}") == 0
    assert (tmp_path / f"packed.{fmt}").read_bytes() == (tmp_path / f"plain.{fmt}").read_bytes()
    capsys.readouterr()


@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zst"])
def test_damaged_compressed_input_stops_with_one_line(tmp_path, capsys, suffix, damage):
    data = b"".join(b"a red car number %d on a street\n" % index for index in range(5_000))
    packed = _compress(data, tmp_path / f"bad.txt{suffix}").read_bytes()
    middle = len(packed) // 2
    if damage == "truncated":
        packed = packed[:middle]
    else:
        packed = packed[:middle] + bytes(byte ^ 0x5A for byte in packed[middle : middle + 64]) + packed[middle + 64 :]
    source = tmp_path / f"bad.txt{suffix}"
    source.write_bytes(packed)
    out = tmp_path / "out.jsonl"
    assert icc("score", "--model", "lite", "--input", source, "--output", out) == 2
    err = capsys.readouterr().err
    one_line_error(err, f"icc: error: {source}: ")
    assert "data is corrupt or cut short at compressed byte " in err
    assert not out.exists()


def test_compression_is_also_known_by_its_first_bytes(tmp_path):
    data = TABLES["jsonl"]
    packed = _compress(data, tmp_path / "pool.jsonl.gz").rename(tmp_path / "pool.data")
    result = icc_process("score", "--model", "lite", "-i", packed, "--format", "jsonl")
    assert result.returncode == 0, result.stderr
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == [1, 2]
    stdin = _compress(data, tmp_path / "stdin.zst").read_bytes()
    result = subprocess.run(
        [sys.executable, "-m", "modeling_icc", *"filter --model lite -i - --format jsonl --top-k 1".split()],
        input=stdin,
        capture_output=True,
    )
    assert result.returncode == 0, result.stderr
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == [1]


def test_sharded_jobs_read_compressed_shards(tmp_path, capsys):
    pool = tmp_path / "pool"
    pool.mkdir()
    _compress(TABLES["jsonl"], pool / "a.jsonl.gz")
    _compress(TABLES["jsonl"], pool / "b.jsonl.zst")
    _compress(TABLES["csv"], pool / "c.csv.xz")
    out = tmp_path / "kept"
    assert icc("filter", "--model", "lite", "-i", pool / "*", "--output-dir", out, "--top-k", "3") == 0, (
        capsys.readouterr().err
    )
    outputs = [path.name for path in out.iterdir() if not path.name.startswith((".", "_"))]
    assert sorted(name for name in outputs if ".stats." not in name) == ["a.jsonl", "b.jsonl", "c.csv"]
    kept = [json.loads(line)["id"] for name in ("a.jsonl", "b.jsonl") for line in (out / name).read_text().splitlines()]
    assert kept == [1, 1] and (out / "c.csv").read_text().splitlines()[1].startswith("1,a red car on a street,")


def test_compressed_parquet_and_tar_are_refused_with_the_command_that_decompresses_them(tmp_path, capsys):
    import io
    import tarfile

    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(pa.table({"caption": ["a red car"]}), buffer)
    packed = _compress(buffer.getvalue(), tmp_path / "pool.parquet.gz")
    assert icc("score", "--model", "lite", "-i", packed) == 2
    one_line_error(
        capsys.readouterr().err,
        f"{packed} is gzip-compressed parquet, which is read by seeking: decompress it first (gunzip -k {packed}, "
        f"then pass {tmp_path / 'pool.parquet'})",
    )
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("0.txt")
        info.size = 5
        tar.addfile(info, io.BytesIO(b"a dog"))
    packed = _compress(buffer.getvalue(), tmp_path / "shard.tar.xz")
    assert icc("score", "--model", "lite", "-i", packed) == 2
    one_line_error(
        capsys.readouterr().err, "is xz-compressed tar, which is read by seeking: decompress it first (unxz -k"
    )


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zst"])
def test_a_compressed_output_name_writes_compressed_text(tmp_path, capsys, suffix):
    import bz2
    import gzip
    import lzma

    import pyarrow as pa

    source = tmp_path / "in.jsonl"
    source.write_bytes(TABLES["jsonl"])
    plain, packed = tmp_path / "kept.jsonl", tmp_path / f"kept.jsonl{suffix}"
    for out in (plain, packed):
        assert icc("filter", "--model", "lite", "-i", source, "-o", out, "--top-k", "1") == 0
    capsys.readouterr()
    readers = {".gz": gzip.decompress, ".bz2": bz2.decompress, ".xz": lzma.decompress}
    if suffix == ".zst":
        with pa.input_stream(str(packed), compression="zstd") as stream:
            data = stream.read()
    else:
        data = readers[suffix](packed.read_bytes())
    assert data == plain.read_bytes() and json.loads(data)["id"] == 1
    _no_temp_files(tmp_path)
    assert icc("score", "--model", "lite", "-i", source, "-o", tmp_path / f"out.parquet{suffix}") == 2
    one_line_error(capsys.readouterr().err, "parquet output is not compressed as a whole")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["score", "a dog", "--format", "csv"], "--format and --column describe an --input file"),
        (["score", "a dog", "--column", "text"], "--format and --column describe an --input file"),
        (["score", "a dog", "--device", "cuda"], "--device does not apply to lite (pure Python, on the CPU"),
        (["score", "a dog", "--dtype", "bf16", "--batch-size", "8"], "--dtype, --batch-size do not apply to lite"),
        (["score", "a dog", "--compile"], "--compile does not apply to lite"),
        (["filter", "-i", "{captions}", "--threshold", "0.5", "--uid-column", "id"], "--uid-column names the uids"),
        (
            ["filter", "-i", "{captions}", "--threshold", "0.5", "--and-column", "clip"],
            "--and-column clip needs a rule",
        ),
        (["filter", "-i", "{captions}", "--threshold", "0.5", "--aggregate", "min"], "--aggregate applies to lists"),
        (["filter", "-i", "{captions}", "--output-dir", "{tmp}/kept", "--top-k", "1", "--show", "2"], "--show prints"),
    ],
)
def test_options_that_would_be_ignored_are_refused(captions, tmp_path, capsys, args, message):
    args = [arg.format(captions=captions, tmp=tmp_path) for arg in args]
    assert icc(*args, "--model", "lite") == 2
    one_line_error(capsys.readouterr().err, message)
    assert not (tmp_path / "kept").exists()


def test_the_options_still_work_where_they_apply(tmp_path, capsys):
    source = tmp_path / "pool.jsonl"
    source.write_text('{"caption": "a red car on a street", "id": "%s", "clip": 0.3}\n' % ("0" * 32))
    args = ["-i", source, "-o", tmp_path / "kept.jsonl", "--threshold", "0.5", "--and-column", "clip"]
    args += ["--and-threshold", "0.2", "--uid-column", "id", "--datacomp-subset", tmp_path / "subset.npy"]
    assert icc("filter", "--model", "lite", "--device", "cpu", *args) == 0, capsys.readouterr().err
    assert len(np.load(tmp_path / "subset.npy")) == 1


def test_an_all_zero_tar_is_read_as_an_empty_archive_without_trying_decompressors(tmp_path, monkeypatch, capsys):
    """A sparse file of zeros named .tar is a plain tar's end-of-archive marker: nothing to score, told at
    once; no decompressor reads it to its end (``tarfile``'s "r:*" let LZMA read gigabytes of zeros)."""
    import bz2
    import lzma

    path = tmp_path / "zeros.tar"
    with open(path, "wb") as stream:
        stream.truncate(64 << 20)

    def refuse(*args, **kwargs):
        raise AssertionError("a decompressor was tried on a plain tar")

    for module, name in ((lzma, "LZMAFile"), (bz2, "BZ2File")):
        monkeypatch.setattr(module, name, refuse)
    assert icc("filter", "--model", "lite", "-i", path, "-o", tmp_path / "kept.jsonl", "--threshold", "0.5") == 0
    assert "no scored rows" in capsys.readouterr().err
