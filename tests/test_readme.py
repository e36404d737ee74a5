"""The README's Python examples run as written (offline, on the embedded model) and print what they say.

A comment ``# -> TEXT`` (on the line of a ``print`` or on a comment line of its own) is a line the
block prints; a block with such comments must print exactly those lines, in order. The README quotes
the fp32 path's output, so that check runs with ``ICC_FORCE_FP32=1`` on every machine.
"""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
PRINTS = re.compile(r"#\s*->\s?(.*)$", re.M)


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_python_example_runs(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(BLOCKS[index], f"README.md python block {index}", "exec"), {})


@pytest.mark.parametrize("index", [index for index, block in enumerate(BLOCKS) if PRINTS.search(block)])
def test_readme_python_example_prints_what_it_says(index, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ICC_FORCE_FP32", "1")
    capsys.readouterr()
    exec(compile(BLOCKS[index], f"README.md python block {index}", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed == [text.rstrip() for text in PRINTS.findall(BLOCKS[index])]
