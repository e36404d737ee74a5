"""What the web-junk check costs the scoring process per caption, against another checkout's, in one run.

Every ICC scorer decides, in the scoring process and before its model, which captions are web junk
(``modeling_icc.utils.web_junk.is_web_junk``). On a GPU that work is paid per caption by the one process
that feeds the device, so microseconds matter. This times the check on ``--n`` CC3M captions copied with
one word swapped per copy (``cc3m_copies``, as the GPU benchmark uses), this tree's against
``--compare-with DIR``'s (another checkout's source tree, e.g. ``git archive BASE modeling_icc | tar -x -C
DIR``), alternating, in one process; medians of ``--repeats``. It also counts the strings on which the two
give different verdicts: the CC3M, dev, synthetic and shipped LAION captions, the generated junk of
``modeling_icc/evaluation/web_junk_cases.py`` and ``--random`` random strings of words, codes, quotes and
punctuation. Where this tree has it, it also times ``unwrap_caption`` (what ICC's scorers do to every caption
that is no junk).

    python benchmarks/speed/web_junk_check.py --n 300000 --repeats 5 --compare-with DIR
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from cc3m_copies import cc3m_copies
from result_file import write_result

from modeling_icc.evaluation.web_junk_cases import generated_junk
from modeling_icc.utils import web_junk
from modeling_icc.utils.provenance import synthetic_captions
from modeling_icc.utils.shipped_data import LAION_JUNK_FILE, cc3m_captions, data_path, dev_split

RESULTS = Path(__file__).resolve().parent / "results"
#: What the random strings are made of: letters with and without vowels, digits, quotes, brackets, markup.
PIECES = [*"bcdfgBCDFGkvjqxzaeiouyAEY0123456789 \t\"'()[].,;:!?*<>&_-/#éßжЖ中", "www.", "http://", ".jpg", "IMG_"]


def other_check(tree: Path) -> Callable[[str], bool]:
    """``is_web_junk`` of the checkout at ``tree`` (its ``web_junk`` module, with this tree's helpers)."""
    spec = importlib.util.spec_from_file_location(
        "modeling_icc.utils.web_junk_compared", tree / "modeling_icc" / "utils" / "web_junk.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.is_web_junk


def verdict_strings(random_count: int) -> list[str]:
    texts = [*cc3m_captions(), *synthetic_captions(50_000, seed=1), *(row["caption"] for row in dev_split("all"))]
    texts += data_path(LAION_JUNK_FILE).read_text(encoding="utf-8").splitlines()
    for texts_of_kind in generated_junk().values():
        texts += texts_of_kind
    rng = random.Random(0)
    texts += ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 25))) for _ in range(random_count)]
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=300_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--random", type=int, default=300_000, help="random strings compared for verdicts")
    parser.add_argument("--compare-with", type=Path, default=None, help="another checkout's source tree")
    parser.add_argument("--out", type=Path, default=RESULTS / "web_junk_check.json")
    args = parser.parse_args()
    checks = {"this tree": web_junk.is_web_junk}
    if args.compare_with is not None:
        checks["compared tree"] = other_check(args.compare_with)
    captions = cc3m_copies(args.n, seed=0)
    times: dict[str, list[float]] = {name: [] for name in checks}
    for _ in range(args.repeats):
        for name, check in checks.items():
            start = time.perf_counter()
            for caption in captions:
                check(caption)
            times[name].append(time.perf_counter() - start)
    results = {
        name: {"us_per_caption": 1e6 * statistics.median(seconds) / len(captions), "runs_s": seconds}
        for name, seconds in times.items()
    }
    unwrap = getattr(importlib.import_module("modeling_icc.utils.caption_wrappers"), "unwrap_caption", None)
    if unwrap is not None:  # what ICC's scorers also do per caption that is no junk: take its wrappers off
        seconds = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            for caption in captions:
                unwrap(caption)
            seconds.append(time.perf_counter() - start)
        results["this tree: unwrap_caption"] = {
            "us_per_caption": 1e6 * statistics.median(seconds) / len(captions),
            "runs_s": seconds,
        }
    if args.compare_with is not None:
        strings = verdict_strings(args.random)
        differ = [text for text in strings if checks["this tree"](text) != checks["compared tree"](text)]
        results["verdicts"] = {"strings": len(strings), "different": len(differ), "examples": differ[:10]}
        results["speedup"] = results["compared tree"]["us_per_caption"] / results["this tree"]["us_per_caption"]
        print(f"{results['speedup']:.2f}x faster; {len(differ)} of {len(strings)} verdicts differ", file=sys.stderr)
    write_result(
        "web_junk_check",
        args.out,
        results,
        captions={"n": args.n, "source": "CC3M validation captions, one word swapped per copy (cc3m_copies.py)"},
        compared_tree=str(args.compare_with) if args.compare_with else None,
        repeats=args.repeats,
    )


if __name__ == "__main__":
    main()
