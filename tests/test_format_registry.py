"""Formats are one registry (curation/io/formats.py): each format's detection, reader and writer in one entry."""

import ast
import io
from pathlib import Path

import pytest

from modeling_icc.curation.io import formats, readers
from modeling_icc.curation.io.formats import (
    FORMATS,
    INPUT_FORMATS,
    REGISTRY,
    Format,
    default_output_format,
    detect_format,
    format_named,
    infer_format,
    open_writer,
    output_suffix,
)
from modeling_icc.curation.io.table import CaptionTable
from modeling_icc.curation.io.tables import iter_tables, read_table, write_table
from modeling_icc.utils.errors import UserInputError

IO_PACKAGE = Path(formats.__file__).parent


def test_every_format_has_one_entry_with_a_reader():
    assert [entry.name for entry in REGISTRY] == list(INPUT_FORMATS)
    assert len(set(INPUT_FORMATS)) == len(INPUT_FORMATS)
    assert all(callable(entry.read) for entry in REGISTRY)
    assert FORMATS == ("txt", "jsonl", "csv", "tsv", "parquet", "tar")
    assert (*FORMATS, "cc3m", "coco", "gbc") == INPUT_FORMATS


def test_written_formats_have_a_writer_and_an_extension_and_inputs_default_to_one():
    for entry in REGISTRY:
        assert (entry.write is not None) == (entry.name in FORMATS)
        if entry.write is not None:
            assert entry.extensions and output_suffix(entry.name) == entry.extensions[0]
        assert default_output_format(entry.name) in FORMATS
    assert [default_output_format(name) for name in ("txt", "cc3m", "coco", "gbc")] == ["tsv", "tsv", "jsonl", "jsonl"]


def test_formats_read_only_by_content_refine_a_format_named_by_extension():
    names = set(INPUT_FORMATS)
    for entry in REGISTRY:
        assert set(entry.refines) <= names - {entry.name}
        assert bool(entry.refines) != bool(entry.extensions), entry.name


@pytest.mark.parametrize("fmt", ["txt", "jsonl", "csv", "tsv", "parquet"])
def test_each_written_format_reads_back_what_it_wrote(tmp_path, fmt):
    table = CaptionTable("jsonl", "caption", ["a dog", "a cat"], records=[{"caption": "a dog"}, {"caption": "a cat"}])
    table.fieldnames = ["caption"]
    path = tmp_path / f"out{output_suffix(fmt)}"
    write_table(table, path, fmt, {"icc_score": [0.5, 0.25]})
    assert infer_format(path) == fmt == detect_format(path)
    expected = ["0.500000\ta dog", "0.250000\ta cat"] if fmt == "txt" else ["a dog", "a cat"]  # txt: score<TAB>caption
    assert read_table(path, fmt, "caption").captions == expected


def test_unknown_formats_are_one_line_errors(tmp_path):
    with pytest.raises(UserInputError, match="unknown format 'xml'"):
        format_named("xml")
    with pytest.raises(UserInputError, match="unknown output format 'coco'"):
        open_writer(io.BytesIO(), "coco")
    with pytest.raises(UserInputError, match=r"use one of \.csv, \.json, \.jsonl, \.parquet, \.tar, \.tsv, \.txt"):
        infer_format(tmp_path / "a.xml")


def _upper_lines(stream, column, rows, name):
    captions = [line.decode().rstrip("\n").upper() for line in stream]
    yield CaptionTable("upper", column, captions, records=[{column: c} for c in captions], fieldnames=[column])


def test_a_new_format_is_one_entry(tmp_path, monkeypatch):
    """Detection, reading and writing find a format through its entry alone."""
    from modeling_icc.curation.io import writers

    shout = Format("shout", readers.text_reader(_upper_lines), writers.JsonlWriter, (".shout",))
    monkeypatch.setattr(formats, "REGISTRY", (*REGISTRY, shout))
    path = tmp_path / "in.shout"
    path.write_text("a dog\na cat\n")
    assert detect_format(path) == "shout" and default_output_format("shout") == "shout"
    (table,) = iter_tables(path, "shout")
    assert table.captions == ["A DOG", "A CAT"]
    out = io.BytesIO()
    with open_writer(out, "shout") as writer:
        writer.write(table, {}, [0])
    assert out.getvalue() == b'{"caption": "A DOG"}\n'


def test_curation_io_modules_import_each_other_without_a_cycle():
    graph = {path.stem: _local_imports(path) for path in IO_PACKAGE.glob("*.py") if path.stem != "__init__"}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, f"import cycle: {' -> '.join((*path, module))}"
        if module in done:
            return
        for target in graph.get(module, ()):
            visit(target, (*path, module))
        done.add(module)

    for module in graph:
        visit(module, ())
    assert "formats" not in graph["gbc"] | graph["readers"] | graph["writers"]  # the registry sits on top


def _local_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module} if node.module else {alias.name for alias in node.names}
    return found
