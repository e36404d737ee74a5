"""``icc score|filter`` failures that must read as one line (``icc: error: ...``, exit 2), never a traceback.

Each test reproduces a case of the third trust audit (issue 25, items 8-17): write errors,
closed standard streams, interrupts, missing devices, advice naming a flag that does not
exist, empty inputs and rules outside the score's range.
"""

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from modeling_icc.cli.main import COMMANDS, build_parser, main

PACKAGE = Path(__file__).resolve().parents[1] / "modeling_icc"


def icc(*args: object) -> int:
    return main([str(arg) for arg in args])


def icc_process(*args: object, **options) -> subprocess.CompletedProcess:
    """The command in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "modeling_icc", *map(str, args)], capture_output=True, text=True, **options
    )


def one_line_error(err: str, message: str) -> None:
    assert message in err, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


@pytest.fixture
def captions(tmp_path) -> Path:
    path = tmp_path / "in.txt"
    path.write_text("a dog on a beach\nthe meaning of life\n")
    return path


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
