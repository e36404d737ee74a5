"""What the web-caption normalization and the long-text windows cost mini and lite, as a ratio.

In one process, on the same captions, alternating run by run: each scorer as shipped ("after"), and the
same scorer with the plain text path ("before": mini lower-cases and reads the first
128 tokens, lite reads the raw text). The ratio after/before of captions per second is the figure; the
goal is >= 0.90 for mini. Two caption sets: the first ``--n`` CC3M validation captions (plain text, almost
all on the fast path) and the same captions with the benchmark's ``social`` noise (hashtags, handles,
emoji, repeated punctuation: every caption on the slow path). Wall-clock medians of ``--repeats``; the
1-minute load average before and after is recorded (the machine may be shared).

    python benchmarks/speed/normalization_overhead.py --n 2000 --repeats 5
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
from arguments import timing_parser
from result_file import write_result

from modeling_icc import load_scorer
from modeling_icc.models.lite.features import analyze
from modeling_icc.scoring.lite import LiteScorer
from modeling_icc.scoring.mini import MiniScorer
from modeling_icc.utils.caption_noise import BENCHMARK_NOISE, add_noise
from modeling_icc.utils.shipped_data import cc3m_captions

RESULTS = Path(__file__).resolve().parent / "results"


class MiniBefore(MiniScorer):
    """mini's plain text path: lower-case, first 128 tokens, no normalization, no windows."""

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        return self._run([text.lower().replace("\u2019", "'") for text in texts], self._token_spec, "scores")


class LiteBefore(LiteScorer):
    """lite's plain text path: the raw caption."""

    def features(self, texts: list[str]) -> np.ndarray:
        return np.array([analyze(text, self.lexicon)[0] for text in texts], dtype=np.float64)


def alternate(runs: dict[str, callable], repeats: int) -> dict[str, list[float]]:
    """Seconds of each run, ``repeats`` times, alternating (after one untimed warm-up of each)."""
    for run in runs.values():
        run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return times


def main() -> None:
    args = timing_parser(__doc__, RESULTS / "normalization_overhead.json", n=2000, repeats=5).parse_args()
    mini = load_scorer("mini")
    scorers = {
        "mini": (mini, MiniBefore(mini.model, mini.tokenizer, dtype=mini.dtype)),
        "lite": (load_scorer("lite"), LiteBefore()),
    }
    plain = cc3m_captions()[: args.n]
    sets = {"cc3m": plain, "cc3m_social_noise": [add_noise(text, "social", BENCHMARK_NOISE) for text in plain]}
    load_before = os.getloadavg()[0]
    results = {}
    for source, captions in sets.items():
        row = {}
        for name, (after, before) in scorers.items():
            times = alternate(
                {"after": lambda s=after, c=captions: s.score(c), "before": lambda s=before, c=captions: s.score(c)},
                args.repeats,
            )
            rates = {key: len(captions) / float(np.median(value)) for key, value in times.items()}
            row[name] = {
                "captions_per_s_after": rates["after"],
                "captions_per_s_before": rates["before"],
                "ratio_after_over_before": rates["after"] / rates["before"],
                "runs_s": times,
            }
            print(
                f"{source} {name}: after {rates['after']:,.0f}/s, before {rates['before']:,.0f}/s, "
                f"ratio {rates['after'] / rates['before']:.3f}"
            )
        results[source] = row
    write_result(
        "normalization_overhead",
        args.out,
        results,
        n=args.n,
        repeats=args.repeats,
        mini_dtype=str(mini.dtype).removeprefix("torch."),
        load_average_1min={"before": load_before, "after": os.getloadavg()[0]},
    )


if __name__ == "__main__":
    main()
