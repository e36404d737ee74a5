"""Single-file ``icc score`` / ``icc filter`` with reading and writing beside scoring, against an earlier checkout.

A file job reads its next table and writes its last one in background threads while it scores
(``modeling_icc/curation/engines/background.py``). This times, each run a fresh process, on ``--n`` synthetic
LAION-like captions in a ``.txt`` file (``--mini-n`` for mini, about 2,000 captions a second on 2 CPU cores), with
lite, mini and ``tiny-student`` (a tiny random student saved for the run: the neural path's tokenizing thread
and torch, which release the GIL, with little model work, so reading and writing weigh more):

- ``score parquet``: ``icc score --model M --input N.txt --output scored.parquet``
- ``filter jsonl``: ``icc filter --model M --input N.txt --output kept.jsonl --threshold 0.5``

``--before DIR``: a folder holding the earlier ``modeling_icc`` (``git archive COMMIT modeling_icc | tar -x -C
DIR``), put first on ``PYTHONPATH`` for its runs; before and after alternate, so both see the same load on a
shared machine. Reported: medians of ``--repeats`` runs (wall seconds, rows per second, CPU seconds), the ratio
after / before of each repeat's rows per second (median), and whether both wrote the same bytes.

    python benchmarks/speed/cli_overlap.py --before DIR --n 200000 --mini-n 20000 --repeats 5
    python benchmarks/speed/cli_overlap.py --before DIR --n 100000 --repeats 5 --models tiny-student \
        --out benchmarks/speed/results/cli_overlap_tiny_student.json
"""

from __future__ import annotations

import hashlib
import os
import statistics
import sys
import tempfile
from pathlib import Path

from arguments import timing_parser
from child_process import run_child
from result_file import write_result

from modeling_icc.testing import save_tiny_student
from modeling_icc.utils.provenance import synthetic_captions

RESULTS = Path(__file__).resolve().parent / "results"
MODELS = ("lite", "mini", "tiny-student")
CASES = {
    "score parquet": (["score"], "scored.parquet"),
    "filter jsonl": (["filter", "--threshold", "0.5"], "kept.jsonl"),
}


def environment_for(tree: Path | None) -> dict[str, str]:
    """This environment, with ``tree`` first on ``PYTHONPATH`` (its ``modeling_icc`` is the one imported)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [env.get("PYTHONPATH")])])
    return env


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    parser = timing_parser(
        __doc__, RESULTS / "cli_overlap.json", n=200_000, repeats=5, n_help="captions for lite and tiny-student"
    )
    parser.add_argument("--mini-n", type=int, default=20_000, help="captions for mini")
    parser.add_argument("--models", nargs="+", choices=MODELS, default=["lite", "mini"])
    parser.add_argument("--before", type=Path, required=True, help="a folder holding the earlier modeling_icc")
    args = parser.parse_args()
    trees = {"after": environment_for(None), "before": environment_for(args.before.resolve())}
    results = {}
    with tempfile.TemporaryDirectory(prefix="icc-bench-") as directory:
        work = Path(directory)
        for model in args.models:
            n = args.mini_n if model == "mini" else args.n
            model_arg = str(save_tiny_student(work / model)) if model == "tiny-student" else model
            source = work / f"{model}.txt"
            source.write_text("\n".join(synthetic_captions(n, seed=0)) + "\n", encoding="utf-8")
            for name, (cli_args, output_name) in CASES.items():
                runs: dict[str, list] = {tree: [] for tree in trees}
                digests: dict[str, set[str]] = {tree: set() for tree in trees}
                for _ in range(args.repeats):  # alternating, so both trees see the same load
                    for tree, env in trees.items():
                        output = work / tree / output_name
                        output.parent.mkdir(exist_ok=True)
                        argv = [
                            sys.executable,
                            "-m",
                            "modeling_icc",
                            cli_args[0],
                            "--model",
                            model_arg,
                            "--no-progress",
                        ]
                        argv += ["--input", str(source), "--output", str(output), *cli_args[1:]]
                        runs[tree].append(run_child(argv, env=env))
                        digests[tree].add(digest(output))
                rates = {tree: [n / run.wall_s for run in tree_runs] for tree, tree_runs in runs.items()}
                ratios = [after / before for after, before in zip(rates["after"], rates["before"], strict=True)]
                results[f"{model}: {name}"] = {
                    "command": f"icc {cli_args[0]} --model {model} --input N.txt --output {output_name} "
                    + " ".join(cli_args[1:]),
                    "n": n,
                    **{
                        tree: {
                            "wall_s": round(statistics.median(run.wall_s for run in tree_runs), 2),
                            "rows_per_s": round(statistics.median(rates[tree])),
                            "cpu_s": round(statistics.median(run.cpu_s for run in tree_runs), 2),
                            "runs_wall_s": [round(run.wall_s, 2) for run in tree_runs],
                        }
                        for tree, tree_runs in runs.items()
                    },
                    "after_over_before_rows_per_s": {
                        "median": round(statistics.median(ratios), 3),
                        "runs": [round(ratio, 3) for ratio in ratios],
                    },
                    "same_bytes": len(digests["after"] | digests["before"]) == 1,
                }
                row = results[f"{model}: {name}"]
                print(
                    f"{model}: {name}: after/before {row['after_over_before_rows_per_s']['median']:.3f} "
                    f"({row['after']['rows_per_s']:,} vs {row['before']['rows_per_s']:,} rows/s), "
                    f"same bytes: {row['same_bytes']}"
                )
    write_result(
        "cli_overlap",
        args.out,
        results,
        captions="synthetic LAION-like (modeling_icc.utils.provenance.synthetic_captions, seed 0), one per line",
        before=str(args.before),
        repeats=args.repeats,
        start_up="included: each run is a fresh process (imports and the model load)",
        models={"tiny-student": "a tiny random student (modeling_icc.testing.save_tiny_student)"},
    )


if __name__ == "__main__":
    main()
