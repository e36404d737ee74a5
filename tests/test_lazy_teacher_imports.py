"""`import modeling_icc` must not pull in the [teachers] extra or `datasets`; those names still resolve."""

import subprocess
import sys

HEAVY = ("diffusers", "peft", "bert_score", "rapidfuzz", "datasets")


def test_core_import_stays_light_and_teacher_names_resolve_lazily():
    code = (
        "import sys, modeling_icc\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
        "print(modeling_icc.SBAForCaptionReconstruction.__name__, modeling_icc.VBAPipeline.__name__,"
        " modeling_icc.LengthStandardizer.__name__, modeling_icc.add_icc_scores.__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]"
    assert out[1] == "SBAForCaptionReconstruction VBAPipeline LengthStandardizer add_icc_scores"
