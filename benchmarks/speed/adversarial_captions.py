"""How long one adversarial caption takes on the text path: ``normalize_caption``, lite's and mini's ``score()``.

Each shape of :mod:`modeling_icc.testing.captions` (a long word beside ``...``, ``!!``, ``#``, ``@``, emoji or an
upper-case triple; long runs of one character; a long URL, hashtags, handles; hyphen-joined letters and digits;
invisible characters) is built at ``--length`` characters (1 MB by default) and timed through
``normalize_caption`` and lite's ``score()`` (the best of ``--repeats`` runs). The goal is under 1 s each: every step is
linear in the caption's length (a regex that backtracks from every position of a long word would take
hours on 1 MB).

mini reads a long caption in overlapping 128-token windows, every one of them, so its time grows with the
number of windows (one per 63 word pieces; its windows are not bounded). A caption it reads in at most
``--mini-windows`` windows is timed once at ``--length``; for one with more, the same shape is timed at
``--mini-length`` characters and the full length's time estimated from the seconds per window. The
1-minute load average before and after is recorded (the machine may be shared).

    python benchmarks/speed/adversarial_captions.py --length 1000000 --mini-windows 64 --mini-length 50000 --repeats 3
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
    return len(split_windows(mini._full_tokenizer.encode(mini._prepare(text)).ids, mini.max_length))


def measure_mini(name: str, text: str, args: argparse.Namespace, mini) -> dict:
    """mini's time on ``text`` itself if it reads at most ``--mini-windows`` windows; otherwise on the same shape
    at ``--mini-length`` characters, with the time at full length estimated from its seconds per window."""
    windows = mini_windows(mini, text)
    row = {"mini_windows": windows}
    if windows <= args.mini_windows:
        row["mini_score_s"] = best_seconds(lambda: mini.score([text]), 1)
        return row
    small = SHAPES[name](args.mini_length)
    small_windows = mini_windows(mini, small)
    seconds = best_seconds(lambda: mini.score([small]), 1)
    row |= {"mini_measured_chars": len(small), "mini_measured_windows": small_windows, "mini_measured_s": seconds}
    row["mini_s_per_window"] = seconds / small_windows
    row["mini_score_s_estimated"] = row["mini_s_per_window"] * windows
    return row


def measure_shape(name: str, args: argparse.Namespace, lite, mini) -> dict:
    """One shape's timings at ``--length`` characters: normalize_caption, lite and mini."""
    text = SHAPES[name](args.length)
    row = {
        "chars": len(text),
        "normalized_chars": len(normalize_caption(text)),
        "normalize_caption_s": best_seconds(lambda: normalize_caption(text), args.repeats),
        "lite_score_s": best_seconds(lambda: lite.score([text]), args.repeats),
        **measure_mini(name, text, args, mini),
    }
    mini_s = row.get("mini_score_s", row.get("mini_score_s_estimated"))
    estimated = " (estimated)" if "mini_score_s_estimated" in row else ""
    print(
        f"{name:28s} normalize {row['normalize_caption_s']:6.3f} s  lite {row['lite_score_s']:6.3f} s  "
        f"mini {mini_s:8.2f} s{estimated} ({row['mini_windows']:,} windows)",
        flush=True,
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--length", type=int, default=1_000_000, help="characters per caption (normalize, lite)")
    parser.add_argument(
        "--mini-windows", type=int, default=64, help="mini is timed at --length up to this many windows"
    )
    parser.add_argument(
        "--mini-length", type=int, default=50_000, help="characters mini is timed at for captions with more windows"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "adversarial_captions.json")
    args = parser.parse_args()
    lite, mini = load_scorer("lite"), load_scorer("mini")
    lite.score(["a warm-up caption #warmup"])  # the lexicon and word list load before any timing
    mini.score(["a warm-up caption #warmup"])
    load_before = os.getloadavg()[0]
    shapes = {name: measure_shape(name, args, lite, mini) for name in SHAPES}
    slowest = {
        key: max(shapes, key=lambda name, key=key: shapes[name][key]) for key in ("normalize_caption_s", "lite_score_s")
    }
    summary = {f"max_{key}": {"shape": name, "seconds": shapes[name][key]} for key, name in slowest.items()}
    summary["all_under_goal"] = all(row[key] < GOAL_S for row in shapes.values() for key in slowest)
    mini_s = {name: row.get("mini_score_s", row.get("mini_score_s_estimated")) for name, row in shapes.items()}
    summary["max_mini_score_s"] = {"shape": max(mini_s, key=mini_s.get), "seconds": max(mini_s.values())}
    write_result(
        "adversarial_captions",
        args.out,
        {"summary": summary, "shapes": shapes},
        length=args.length,
        mini_windows=args.mini_windows,
        mini_length=args.mini_length,
        repeats=args.repeats,
        goal_s=GOAL_S,
        mini_dtype=str(mini.dtype).removeprefix("torch."),
        load_average_1min={"before": load_before, "after": os.getloadavg()[0]},
    )


if __name__ == "__main__":
    main()
