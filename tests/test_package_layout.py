"""The package's layering, checked on its source: production code never imports the test helpers,
``models/`` imports nothing of the package but ``utils/``, and ``utils/`` needs no model library."""

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "modeling_icc"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth of its code, relative imports resolved."""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def _package_imports(subpackage: str) -> dict[str, set[str]]:
    return {
        _module_name(path): {name for name in _imported_modules(path) if name.startswith("modeling_icc.")}
        for path in sorted((PACKAGE / subpackage).rglob("*.py"))
    }


def test_no_production_module_imports_the_testing_helpers():
    offenders = {
        module: sorted(name for name in imports if name.startswith("modeling_icc.testing"))
        for module, imports in _package_imports(".").items()
        if not module.startswith("modeling_icc.testing")
    }
    assert {module: names for module, names in offenders.items() if names} == {}


def test_models_import_nothing_of_the_package_but_utils():
    offenders = {
        module: sorted(n for n in imports if not n.startswith(("modeling_icc.models", "modeling_icc.utils")))
        for module, imports in _package_imports("models").items()
    }
    assert {module: names for module, names in offenders.items() if names} == {}


def test_the_scan_resolves_relative_imports():
    imports = _imported_modules(PACKAGE / "training" / "sba_projector.py")
    assert {
        "modeling_icc.teachers.sba.SBAPipeline",
        "modeling_icc.training.arguments.PaperTrainingArguments",
    } <= imports


def test_utils_imports_no_model_library():
    modules = sorted(_module_name(path) for path in (PACKAGE / "utils").glob("*.py"))
    code = f"import sys\nfor name in {modules!r}:\n    __import__(name)\n"
    code += "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
