"""The one resume protocol (modeling_icc.utils.resumable) that sharded jobs and teacher scoring share."""

import json
import os
from pathlib import Path

import pytest

from modeling_icc.utils import resumable
from modeling_icc.utils.errors import UserInputError
from modeling_icc.utils.resumable import LOCK_FILE, RUN_FILE, bind_settings, locked, recorded_settings

ADVICE = "use a new output directory"


def test_settings_are_recorded_with_what_is_kept_but_not_compared(tmp_path):
    bind_settings(tmp_path, {"seed": 0}, holds_work=False, advice=ADVICE, record={"provenance": {"v": 1}})
    assert recorded_settings(tmp_path) == {"seed": 0, "provenance": {"v": 1}}
    bind_settings(tmp_path, {"seed": 0}, holds_work=True, advice=ADVICE, record={"provenance": {"v": 2}})
    assert json.loads((tmp_path / RUN_FILE).read_text())["provenance"] == {"v": 1}  # a matching resume rewrites nothing


def test_a_resume_with_other_settings_is_a_one_line_error_naming_them(tmp_path):
    bind_settings(tmp_path, {"model": "a", "seed": 0, "rule": 1}, holds_work=False, advice=ADVICE)
    with pytest.raises(UserInputError) as error:
        bind_settings(tmp_path, {"model": "a", "seed": 1, "rule": 2}, holds_work=True, advice=ADVICE)
    assert str(error.value) == f"{tmp_path} holds a run with different seed, rule; {ADVICE}"


@pytest.mark.dtype
def test_a_job_can_say_more_about_a_difference(tmp_path):
    bind_settings(tmp_path, {"dtype": "bf16"}, holds_work=False, advice=ADVICE)

    def explain(previous, changed):
        return f"was {previous['dtype']}, changed {changed}"

    with pytest.raises(UserInputError, match=r"was bf16, changed \['dtype'\]"):
        bind_settings(tmp_path, {"dtype": "fp32"}, holds_work=True, advice=ADVICE, explain=explain)


def test_settings_of_a_run_that_saved_nothing_are_replaced(tmp_path):
    bind_settings(tmp_path, {"column": "captoin"}, holds_work=False, advice=ADVICE)
    bind_settings(tmp_path, {"column": "caption"}, holds_work=False, advice=ADVICE)
    assert recorded_settings(tmp_path) == {"column": "caption"}


def test_saved_work_without_recorded_settings_is_refused(tmp_path):
    with pytest.raises(UserInputError, match=f"holds saved work but no {RUN_FILE}"):
        bind_settings(tmp_path, {"seed": 0}, holds_work=True, advice=ADVICE)
    assert recorded_settings(tmp_path) is None


def test_one_job_per_directory(tmp_path):
    with locked(tmp_path / "out"):
        assert (tmp_path / "out" / LOCK_FILE).exists()
        with pytest.raises(UserInputError, match="another icc job is writing to"), locked(tmp_path / "out"):
            pass
    assert not (tmp_path / "out" / LOCK_FILE).exists()


def test_a_lock_that_cannot_be_removed_never_hides_the_jobs_error(tmp_path, monkeypatch):
    import pathlib

    def refuse(path, missing_ok=False):
        raise PermissionError(1, "Operation not permitted", str(path))

    monkeypatch.setattr(pathlib.Path, "unlink", refuse)
    with pytest.raises(OSError, match="No space left") as info, locked(tmp_path / "out"):
        raise OSError(28, "No space left on device", str(tmp_path / "out" / "part.jsonl"))
    assert info.value.filename == str(tmp_path / "out" / "part.jsonl")
    with locked(tmp_path / "out"):  # a lock file left behind locks nothing
        pass


def test_partial_files_of_a_running_writer_are_left_alone(tmp_path):
    """A sharded job starting in a folder removes a killed run's temporary files, never another job's."""
    from modeling_icc.utils.atomic_files import atomic_file, new_temp_file

    descriptor, dead = new_temp_file(tmp_path / "killed.jsonl")  # its writer is gone: nothing holds its lock
    os.close(descriptor)
    with atomic_file(tmp_path / "running.jsonl") as stream:
        stream.write(b"rows so far\n")
        (running,) = [path for path in tmp_path.glob("*.tmp") if "running" in path.name]
        resumable.remove_partial_files([tmp_path])
        assert running.exists() and not Path(dead).exists()
    assert (tmp_path / "running.jsonl").read_bytes() == b"rows so far\n"
