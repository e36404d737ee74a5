"""The package's layering, checked on its source: its rooms, and its files, import each other without a
cycle, production code never imports the test helpers, ``models/`` imports nothing of the package but
``utils/``, and ``utils/`` needs no model library."""

import subprocess
import sys

from package_graph import PACKAGE, PACKAGE_DIR, arrows, cycles, floors, imported_modules, module_arrows, module_name


def _package_imports(subpackage: str) -> dict[str, set[str]]:
    return {
        module_name(path): {name for name in imported_modules(path) if name.startswith(f"{PACKAGE}.")}
        for path in sorted((PACKAGE_DIR / subpackage).rglob("*.py"))
    }


def test_rooms_import_each_other_without_a_cycle():
    assert cycles(arrows()) == []


def test_modules_import_each_other_without_a_cycle():
    """Files too, not only rooms: a loop between two modules is one module split in two (or a function in the
    wrong one), and an import moved inside a function to dodge it still closes the loop."""
    assert [" -> ".join(loop) for loop in cycles(module_arrows())] == []


def test_the_module_scan_counts_imports_in_functions_but_not_type_checking_blocks(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from .low import VALUE\n")
    (package / "sub" / "low.py").write_text("VALUE = 1\n\ndef later():\n    from ..high import run\n")
    (package / "high.py").write_text(
        "from typing import TYPE_CHECKING\nfrom .sub import low\nif TYPE_CHECKING:\n    from .sub import VALUE\n"
    )
    assert module_arrows(package) == {
        "pkg": set(),
        "pkg.sub": {"pkg.sub.low"},
        "pkg.sub.low": {"pkg.high"},
        "pkg.high": {"pkg.sub.low"},
    }
    assert cycles(module_arrows(package)) == [["pkg.high", "pkg.sub.low", "pkg.high"]]


def test_no_production_module_imports_the_testing_helpers():
    offenders = {
        module: sorted(name for name in imports if name.startswith(f"{PACKAGE}.testing"))
        for module, imports in _package_imports(".").items()
        if not module.startswith(f"{PACKAGE}.testing")
    }
    assert {module: names for module, names in offenders.items() if names} == {}


def test_models_import_nothing_of_the_package_but_utils():
    offenders = {
        module: sorted(n for n in imports if not n.startswith((f"{PACKAGE}.models", f"{PACKAGE}.utils")))
        for module, imports in _package_imports("models").items()
    }
    assert {module: names for module, names in offenders.items() if names} == {}


def test_the_scan_resolves_relative_imports():
    imports = set(imported_modules(PACKAGE_DIR / "training" / "sba_projector.py"))
    assert {
        f"{PACKAGE}.teachers.sba.SBAPipeline",
        f"{PACKAGE}.training.arguments.PaperTrainingArguments",
    } <= imports
    assert f"{PACKAGE}.testing.student.save_tiny_student" in imported_modules(PACKAGE_DIR / "testing" / "pipeline.py")


def test_utils_imports_no_other_room_and_no_model_library():
    assert arrows()[f"{PACKAGE}.utils"] == set()
    modules = sorted(module_name(path) for path in (PACKAGE_DIR / "utils").glob("*.py"))
    code = f"import sys\nfor name in {modules!r}:\n    __import__(name)\n"
    code += "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_the_architecture_map_quotes_the_current_counts():
    """docs/architecture.md quotes the drawing's counts; a move that changes them updates the map too."""
    graph = arrows()
    counts = f"{len(graph)} rooms on {max(floors(graph).values())} floors, {sum(map(len, graph.values()))} arrows"
    assert counts in (PACKAGE_DIR.parent / "docs" / "architecture.md").read_text(encoding="utf-8").replace("**", "")
