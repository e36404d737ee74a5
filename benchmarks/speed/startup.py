"""Start-up time of the ``icc`` command and of ``import modeling_icc`` (wall seconds, fresh processes).

Three commands, each run in a new process, medians of ``--repeats`` runs after one
untimed warm-up run (which fills the OS file cache):

- ``python -c "import modeling_icc"``
- ``icc --help``
- ``icc score --model lite "a dog"`` (one caption with the embedded model, to stdout)

    python benchmarks/speed/startup.py --repeats 10
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
from pathlib import Path

from child_process import run_child
from result_file import write_result

RESULTS = Path(__file__).resolve().parent / "results"
GOALS_S = {"icc --help": 0.5, 'icc score --model lite "a dog"': 1.5}


def icc_command() -> list[str]:
    """The installed console script next to this interpreter, else ``python -m modeling_icc``."""
    script = shutil.which("icc", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "modeling_icc"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--out", type=Path, default=RESULTS / "startup.json")
    args = parser.parse_args()
    icc = icc_command()
    commands = {
        "import modeling_icc": [sys.executable, "-c", "import modeling_icc"],
        "icc --help": [*icc, "--help"],
        'icc score --model lite "a dog"': [*icc, "score", "--model", "lite", "a dog"],
    }
    results = {}
    for name, argv in commands.items():
        run_child(argv)  # warm-up
        runs = [run_child(argv).wall_s for _ in range(args.repeats)]
        results[name] = {
            "median_s": round(statistics.median(runs), 3),
            "min_s": round(min(runs), 3),
            "max_s": round(max(runs), 3),
            "runs_s": [round(run, 3) for run in runs],
            "goal_s": GOALS_S.get(name),
        }
        print(f"{name}: median {results[name]['median_s']:.3f} s (min {min(runs):.3f}, max {max(runs):.3f})")
    write_result("startup", args.out, results, icc=" ".join(icc), repeats=args.repeats)


if __name__ == "__main__":
    main()
