"""The one atomic writer (modeling_icc.utils.atomic_files): what every file the package writes can count on."""

import ast
import os
import stat
from pathlib import Path

import pytest

import modeling_icc
from modeling_icc.utils import atomic_files
from modeling_icc.utils.atomic_files import atomic_file, remove_stale_temp_files, write_bytes, write_text
from modeling_icc.utils.provenance import write_json

PACKAGE = Path(modeling_icc.__file__).parent


def test_the_target_changes_only_when_the_block_succeeds(tmp_path):
    out = tmp_path / "out.bin"
    out.write_bytes(b"old")
    with atomic_file(out) as stream:
        stream.write(b"new")
        stream.flush()
        assert out.read_bytes() == b"old"  # readers still see the old file
    assert out.read_bytes() == b"new"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out.bin"]


@pytest.mark.parametrize("error", [ValueError, KeyboardInterrupt, SystemExit])
def test_an_error_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path, error):
    out = tmp_path / "out.bin"
    out.write_bytes(b"old")
    with pytest.raises(error), atomic_file(out) as stream:
        stream.write(b"half")
        raise error
    assert out.read_bytes() == b"old"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out.bin"]


def test_a_failed_rename_leaves_no_temporary_file(tmp_path, monkeypatch):
    def refuse(source, target):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(atomic_files.os, "replace", refuse)
    with pytest.raises(OSError):
        write_text(tmp_path / "a.txt", "text")
    assert list(tmp_path.iterdir()) == []


def test_new_files_get_the_umask_permissions_and_folders_are_made(tmp_path):
    mask = os.umask(0o022)
    try:
        path = write_bytes(tmp_path / "deep" / "er" / "file.bin", b"x")
    finally:
        os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_dead_writers_temporary_file_is_removed_by_the_next_write(tmp_path):
    out = tmp_path / "out.json"
    handle, stale = atomic_files.new_temp_file(out)  # unlocked: its writer is gone
    os.close(handle)
    user_file = tmp_path / ".out.json.notes.tmp"  # not named as ours: never touched
    user_file.write_text("a user's file")
    write_json(out, {"a": 1})
    assert not Path(stale).exists() and user_file.exists()
    assert out.read_text(encoding="utf-8") == '{\n  "a": 1\n}\n'


def test_a_live_writers_temporary_file_is_left_alone(tmp_path):
    out = tmp_path / "out.txt"
    with atomic_file(out) as stream:
        stream.write(b"being written")
        (live,) = tmp_path.glob(".out.txt.icc-*.tmp")
        remove_stale_temp_files(out)
        assert live.exists()
    assert out.read_bytes() == b"being written"


def test_a_symlink_is_replaced_not_written_through(tmp_path):
    target = tmp_path / "package_file.txt"
    target.write_text("shipped")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_text(link, "changed")
    assert target.read_text() == "shipped" and not link.is_symlink() and link.read_text() == "changed"


def test_no_module_renames_files_into_place_itself():
    """Every atomic write goes through atomic_files: no other module calls os.replace or os.rename."""
    callers = []
    for path in PACKAGE.rglob("*.py"):
        if path == Path(atomic_files.__file__):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("replace", "rename") and _is_os(node.value):
                callers.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert callers == []


def _is_os(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "os"
