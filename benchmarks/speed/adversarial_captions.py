"""How long one adversarial caption takes on the text path: ``normalize_caption``, lite's and mini's ``score()``.

Each shape of :mod:`modeling_icc.testing.captions` (a long word beside ``...``, ``!!``, ``#``, ``@``, emoji or an
upper-case triple; long runs of one character; a long URL, hashtags, handles; hyphen-joined letters and digits;
invisible characters) is built at ``--length`` characters (1 MB by default) and timed through
``normalize_caption`` and lite's ``score()`` (the best of ``--repeats`` runs). The goal is under 1 s each: every step is
linear in the caption's length (a regex that backtracks from every position of a long word would take
hours on 1 MB).

mini reads a long caption in overlapping 128-token windows, at most ``MAX_WINDOWS`` of them, and tokenizes
only the start it reads; it is timed once per shape at ``--length`` too. The 1-minute load average before
and after is recorded (the machine may be shared).

    python benchmarks/speed/adversarial_captions.py --length 1000000 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

from result_file import write_result

from modeling_icc import load_scorer
from modeling_icc.scoring.inputs import has_content
from modeling_icc.testing.captions import SHAPES
from modeling_icc.utils.caption_text import normalize_caption
from modeling_icc.utils.windows import split_windows

RESULTS = Path(__file__).resolve().parent / "results"
#: Seconds the text path should take on a 1 MB caption (normalize_caption and lite).
GOAL_S = 1.0


def best_seconds(run: Callable[[], object], repeats: int) -> float:
    """The fastest of ``repeats`` runs of ``run``, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def mini_windows(mini, text: str) -> int:
    """The windows mini reads for ``text`` (0: nothing visible, scored NaN without reading)."""
    if not has_content(text):
        return 0
    return len(split_windows(mini._read_pieces(mini._prepare(text))[1].ids, mini.max_length))


def measure_shape(name: str, args: argparse.Namespace, lite, mini) -> dict:
    """One shape's timings at ``--length`` characters: normalize_caption, lite and mini."""
    text = SHAPES[name](args.length)
    row = {
        "chars": len(text),
        "normalized_chars": len(normalize_caption(text)),
        "normalize_caption_s": best_seconds(lambda: normalize_caption(text), args.repeats),
        "lite_score_s": best_seconds(lambda: lite.score([text]), args.repeats),
        "mini_windows": mini_windows(mini, text),
        "mini_score_s": best_seconds(lambda: mini.score([text]), args.repeats),
    }
    print(
        f"{name:28s} normalize {row['normalize_caption_s']:6.3f} s  lite {row['lite_score_s']:6.3f} s  "
        f"mini {row['mini_score_s']:6.3f} s ({row['mini_windows']:,} windows)",
        flush=True,
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--length", type=int, default=1_000_000, help="characters per caption")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "adversarial_captions.json")
    args = parser.parse_args()
    lite, mini = load_scorer("lite"), load_scorer("mini")
    lite.score(["a warm-up caption #warmup"])  # the lexicon and word list load before any timing
    mini.score(["a warm-up caption #warmup"])
    load_before = os.getloadavg()[0]
    shapes = {name: measure_shape(name, args, lite, mini) for name in SHAPES}
    keys = ("normalize_caption_s", "lite_score_s", "mini_score_s")
    slowest = {key: max(shapes, key=lambda name, key=key: shapes[name][key]) for key in keys}
    summary = {f"max_{key}": {"shape": name, "seconds": shapes[name][key]} for key, name in slowest.items()}
    summary["all_under_goal"] = all(row[key] < GOAL_S for row in shapes.values() for key in keys)
    write_result(
        "adversarial_captions",
        args.out,
        {"summary": summary, "shapes": shapes},
        length=args.length,
        repeats=args.repeats,
        goal_s=GOAL_S,
        mini_dtype=str(mini.dtype).removeprefix("torch."),
        load_average_1min={"before": load_before, "after": os.getloadavg()[0]},
    )


if __name__ == "__main__":
    main()
