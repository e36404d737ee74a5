"""The core install in a fresh virtual environment (issue 50): no torch, no CUDA libraries, and the README's demo
command and core quickstart run offline, with an empty cache.

Slow (it installs from PyPI: about a minute), so opt-in: ``pytest -m slow tests/test_core_install.py``; CI runs
it as a step of its own (``.ci/run``).
"""

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from modeling_icc.models.mini.files import BASE_INSTALL

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: The README's demo command (what `make demo` runs), as the README gives it.
DEMO = re.search(r"^icc filter --model mini --threshold 0\.5 --input modeling_icc/data/demo_\S+ .*$", README, re.M)
#: The quickstart's first block: what the core install runs (later blocks name their extras).
QUICKSTART = re.search(r"## Quickstart\n.*?```python\n(.*?)```", README, re.S)
#: Printed lines a block promises (``# -> TEXT``).
PRINTS = re.compile(r"#\s*->\s?(.*)$", re.M)
#: Issue 50's goal for the core's site-packages, the venv's own pip and setuptools included (measured: docs/usage.md).
MAX_SITE_PACKAGES_MB = 400


def site_packages_mb(python: Path) -> float:
    folder = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True
    ).stdout.strip()
    return sum(path.stat().st_size for path in Path(folder).rglob("*") if path.is_file()) / 2**20


@pytest.mark.slow
def test_the_core_installs_without_torch_and_runs_the_readme_offline(tmp_path):
    assert DEMO and QUICKSTART, "the README lost its demo command or quickstart"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    python, pip = venv / "bin" / "python", [venv / "bin" / "python", "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "install", ROOT], check=True, timeout=900)
    subprocess.run([*pip, *BASE_INSTALL.split()[1:]], check=True, timeout=600)
    installed = subprocess.run([*pip, "list", "--format=freeze"], capture_output=True, text=True, check=True).stdout
    names = {line.partition("==")[0].lower() for line in installed.splitlines()}
    assert not {"torch", "transformers", "datasets", "evaluate", "pyarrow"} & names
    assert not [name for name in names if name.startswith("nvidia")]
    assert site_packages_mb(python) < MAX_SITE_PACKAGES_MB

    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "ICC_CACHE_DIR": str(tmp_path / "cache")}
    output = tmp_path / "outputs" / "demo_kept.jsonl"
    command = DEMO.group(0).replace("outputs/demo_kept.jsonl", str(output)).split()
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    seconds = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    assert output.is_file() and "kept" in done.stderr
    assert not (tmp_path / "cache").exists()  # nothing built: the graph ships with the package
    print(f"demo command with an empty cache: {seconds:.2f} s")

    block = QUICKSTART.group(1)
    done = subprocess.run(
        [python, "-c", block + "\nimport sys\nassert 'torch' not in sys.modules, 'torch was imported'\n"],
        cwd=tmp_path,
        env={**env, "ICC_FORCE_FP32": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [text.rstrip() for text in PRINTS.findall(block)]
