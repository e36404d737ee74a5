"""What naming each caption's language costs lite and mini (issue 51: at most 10% of lite's throughput, 3% of mini's).

Each repeat times ``scorer.score`` twice on the same captions, in turn: as shipped (each caption named, those
in another language declined) and with the language step off (``languages = None``, the scorer as it was
before). The language cache is emptied before every run, so each run names every caption afresh; a file job
then names them once more for its ``icc_language`` column, from that cache (timed apart as ``column``).
lite is timed in CPU seconds of this process (one core, as its throughput figure); mini in wall seconds (its
runtime uses every core). The cost is ``(with + column - without) / without``, from the medians. On a machine
shared with other jobs mini's wall times are noisy; the step itself runs on one thread, before and after
mini's batches, so its cost to mini is also given as the step's CPU seconds a caption (measured with lite, on
the same captions) times mini's captions a second (``mini.POOL.cost_share_from_step_cpu_time``).

    python benchmarks/speed/language_step.py --n 20000 --repeats 7 --mini-n 2000

Run to run, this shared machine's speed moves the cost by a few points; ``--before DIR`` (a folder holding an
earlier ``modeling_icc``, e.g. ``git worktree add /tmp/before ea2bb69``) also times that version's
``name_language`` against this one's on the same captions, in turn, in this process (CPU time a caption, each
given the text the scorer read), so that a change is a ratio measured in one run:

    python benchmarks/speed/language_step.py --n 20000 --repeats 7 --mini-n 2000 --before /tmp/before
"""

from __future__ import annotations

import copy
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from arguments import timing_parser
from result_file import write_result

from modeling_icc import load_scorer
from modeling_icc.scoring.base import ConcretenessScorer
from modeling_icc.scoring.languages import caption_languages, forget_languages, name_language
from modeling_icc.utils.caption_wrappers import unwrap_caption
from modeling_icc.utils.provenance import synthetic_captions
from modeling_icc.utils.shipped_data import laion_sample_texts

RESULTS = Path(__file__).resolve().parent / "results"
GOALS = {"lite": 0.10, "mini": 0.03}


def timed(run: Callable[[], object], clock: Callable[[], float]) -> float:
    forget_languages()
    start = clock()
    run()
    return clock() - start


def cost(scorer: ConcretenessScorer, captions: list[str], repeats: int, clock: Callable[[], float]) -> dict:
    """Median seconds with and without the language step, and the cost as a share of the time without it."""
    without = copy.copy(scorer)
    without.languages = None
    scorer.score(captions[:64]), without.score(captions[:64])  # warm: the model, the identifier
    runs: dict[str, list[float]] = {"with": [], "without": [], "column": []}
    for _ in range(repeats):
        runs["without"].append(timed(lambda: without.score(captions), clock))
        runs["with"].append(timed(lambda: scorer.score(captions), clock))
        start = clock()
        caption_languages(captions)  # the file job's column: every caption named already
        runs["column"].append(clock() - start)
    medians = {name: statistics.median(values) for name, values in runs.items()}
    share = (medians["with"] + medians["column"] - medians["without"]) / medians["without"]
    return {
        "captions": len(captions),
        "median_s": medians,
        "runs_s": runs,
        "captions_per_s_without": len(captions) / medians["without"],
        "captions_per_s_with": len(captions) / (medians["with"] + medians["column"]),
        "cost_share": share,
    }


def earlier_namer(folder: Path) -> Callable[[str, str | None], str]:
    """``name_language`` of the ``modeling_icc/scoring/languages.py`` in ``folder``, run inside this package (its
    relative imports resolve here: only that module is the earlier one)."""
    path = folder / "modeling_icc" / "scoring" / "languages.py"
    spec = importlib.util.spec_from_file_location("modeling_icc.scoring._languages_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module.name_language


def naming_before_after(before: Callable[[str, str | None], str], captions: list[str], repeats: int) -> dict:
    """CPU seconds a caption of the earlier and the current ``name_language``, in turn, medians of ``repeats``."""
    read = [unwrap_caption(caption) for caption in captions]
    namers = {"before": before, "after": name_language}
    for namer in namers.values():
        namer("warm the identifier up", None)
    runs: dict[str, list[float]] = {name: [] for name in namers}
    for _ in range(repeats):
        for name, namer in namers.items():
            start = time.process_time()
            for caption, seen in zip(captions, read, strict=True):
                namer(caption, seen)
            runs[name].append((time.process_time() - start) / len(captions))
    medians = {name: statistics.median(values) for name, values in runs.items()}
    return {"seconds_a_caption": medians, "runs": runs, "after_over_before": medians["after"] / medians["before"]}


def main() -> None:
    parser = timing_parser(__doc__, RESULTS / "language_step.json", n=20_000, repeats=7, n_help="captions for lite")
    parser.add_argument("--mini-n", type=int, default=2_000, help="captions for mini")
    parser.add_argument("--before", type=Path, help="a folder holding an earlier modeling_icc (see above)")
    args = parser.parse_args()
    pools = {"synthetic": synthetic_captions(args.n, seed=0), "laion_sample": laion_sample_texts()}
    results: dict = {}
    if args.before is not None:
        before = earlier_namer(args.before)
        results["naming_before_after"] = {"before": str(args.before)}
        for pool, captions in pools.items():
            found = naming_before_after(before, captions[: args.n], args.repeats)
            results["naming_before_after"][pool] = found
            print(f"naming on {pool}: after/before {found['after_over_before']:.3f}")
    for model, n, clock in (("lite", args.n, time.process_time), ("mini", args.mini_n, time.perf_counter)):
        scorer = load_scorer(model)
        results[model] = {
            "clock": "process CPU time" if clock is time.process_time else "wall time",
            "goal_cost_share": GOALS[model],
            **{pool: cost(scorer, captions[:n], args.repeats, clock) for pool, captions in pools.items()},
        }
        for pool in pools:
            print(f"{model} on {pool}: the language step costs {results[model][pool]['cost_share']:.1%}")
    for pool in pools:
        lite, mini = results["lite"][pool], results["mini"][pool]
        medians = lite["median_s"]
        step = (medians["with"] + medians["column"] - medians["without"]) / lite["captions"]
        mini["step_cpu_seconds_per_caption"] = step
        mini["cost_share_from_step_cpu_time"] = step * mini["captions_per_s_without"]
        print(
            f"mini on {pool}: {step * 1e6:.1f} us a caption x {mini['captions_per_s_without']:,.0f}/s = "
            f"{mini['cost_share_from_step_cpu_time']:.1%}"
        )
    write_result(
        "language_step",
        args.out,
        results,
        captions={
            "synthetic": "synthetic LAION-like (modeling_icc.utils.provenance.synthetic_captions, seed 0)",
            "laion_sample": "the shipped LAION-400M alt-text sample (multilingual web text), first --n / --mini-n",
        },
        repeats=args.repeats,
    )


if __name__ == "__main__":
    main()
