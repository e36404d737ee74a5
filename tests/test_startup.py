"""Start-up: ``import modeling_icc`` and ``icc`` import torch and transformers only when a neural model needs them,
and the student still registers with transformers' Auto classes, whichever is imported first."""

import subprocess
import sys

import pytest

HEAVY = ("torch", "transformers", "pyarrow", "datasets")


def run_python(code: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return result.stdout.strip().splitlines()


def heavy_modules_after(statement: str) -> str:
    return run_python(f"import sys\n{statement}\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))")[-1]


def test_import_modeling_icc_stays_light():
    assert heavy_modules_after("import modeling_icc") == "[]"


def test_icc_help_imports_no_model_library():
    statement = "from modeling_icc.cli.main import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass"
    assert heavy_modules_after(statement) == "[]"


def test_scoring_with_lite_imports_no_model_library():
    statement = "from modeling_icc.cli.main import main\nmain(['score', '--model', 'lite', 'a dog on a beach'])"
    assert heavy_modules_after(statement) == "[]"


def test_the_cached_lite_scorer_imports_no_model_library():
    statement = "from modeling_icc import load_scorer\nload_scorer('lite', cache=True).score(['a dog on a beach'])"
    assert heavy_modules_after(statement) == "[]"


@pytest.mark.parametrize(
    "imports",
    [
        "import modeling_icc\nfrom transformers import AutoConfig, AutoModel",
        "from transformers import AutoConfig, AutoModel\nimport modeling_icc",
        "import transformers\nimport modeling_icc\nfrom transformers import AutoConfig, AutoModel",
    ],
    ids=["package-first", "transformers-first", "bare-transformers-first"],
)
def test_auto_classes_load_the_student_whatever_the_import_order(tiny_student_dir, imports):
    lines = run_python(
        f"{imports}\n"
        f"print(type(AutoConfig.from_pretrained({str(tiny_student_dir)!r})).__name__)\n"
        f"print(type(AutoModel.from_pretrained({str(tiny_student_dir)!r})).__name__)\n"
    )
    assert lines[-2:] == ["ICCConfig", "ICCForConcreteness"]


def test_every_public_name_resolves():
    lines = run_python(
        "import modeling_icc\n"
        "missing = [name for name in modeling_icc.__all__ if getattr(modeling_icc, name, None) is None]\n"
        "print(missing)\n"
        "from modeling_icc import *\n"
        "print(load_scorer('lite').model_id, ICCForConcreteness.__name__, DEFAULT_MODEL_ID, PUBLISHED_MODEL_ID)\n"
    )
    assert lines[-2:] == ["[]", "lite ICCForConcreteness mini moranyanuka/icc"]
