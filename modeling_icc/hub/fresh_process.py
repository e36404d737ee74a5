"""Checks run in a fresh, offline interpreter: what a Hub user gets from a folder, not what
this process has imported or cached."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ..utils.errors import UserInputError
from .student_format import write_student_skeleton


def remote_code_scores(folder: Path, texts: list[str]) -> list[float]:
    """Raw scores from the folder's own code, as a Hub user without our package gets them
    (``trust_remote_code=True``; the check fails if ``modeling_icc`` gets imported). The code runs only
    if it is the code ``icc convert`` writes (:func:`refuse_foreign_code`)."""
    refuse_foreign_code(folder)
    program = (
        "import json, sys, torch\n"
        "from transformers import AutoModel, AutoTokenizer\n"
        "folder, texts = sys.argv[1], json.loads(sys.argv[2])\n"
        "tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=True)\n"
        "model = AutoModel.from_pretrained(folder, trust_remote_code=True).eval()\n"
        "assert 'modeling_icc' not in sys.modules, 'the check must not use the installed package'\n"
        "with torch.inference_mode():\n"
        "    out = model(**tokenizer(texts, return_tensors='pt', padding=True)).raw_scores\n"
        "print(json.dumps(out.tolist()))\n"
    )
    with tempfile.TemporaryDirectory() as scratch:
        output = run_python(
            program, [str(folder.resolve()), json.dumps(texts)], cwd=Path(scratch), what="trust_remote_code load"
        )
    return json.loads(output)


def refuse_foreign_code(folder: Path) -> None:
    """Refuse, in one line, a folder whose Python files or ``auto_map`` entries are not exactly the code this
    package writes for a student: checking a folder must never run code that is not ours."""
    with tempfile.TemporaryDirectory() as scratch:
        ours = {path.name: path.read_bytes() for path in write_student_skeleton(Path(scratch)) if path.suffix == ".py"}
    for path in sorted(folder.glob("*.py")):
        if ours.get(path.name) != path.read_bytes():
            raise UserInputError(
                f"{path} is not the code icc writes for a student: refusing to run it (icc convert writes it again)"
            )
    for name in ("config.json", "tokenizer_config.json"):
        path = folder / name
        auto_map = json.loads(path.read_text(encoding="utf-8")).get("auto_map", {}) if path.is_file() else {}
        references = [ref for value in auto_map.values() for ref in (value if isinstance(value, list) else [value])]
        for reference in filter(None, references):
            if "--" in reference or f"{reference.split('.')[0]}.py" not in ours:
                raise UserInputError(
                    f"{path}: auto_map entry {reference!r} names code icc does not write: refusing to run it"
                )


def run_python(program: str, args: list[str], *, cwd: Path, what: str) -> str:
    """Last stdout line of ``program`` in a fresh, offline interpreter (fresh module caches too)."""
    with tempfile.TemporaryDirectory() as modules_cache:
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "HF_MODULES_CACHE": modules_cache,
            "GRADIO_ANALYTICS_ENABLED": "False",
        }
        done = subprocess.run(
            [sys.executable, "-c", program, *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit code {done.returncode}"
        raise UserInputError(f"{what} in {cwd} failed: {last}")
    return done.stdout.strip().splitlines()[-1]
