"""Quality benchmarks: how well a scorer's ranking agrees with human concreteness ratings.

``icc bench`` on the command line; :func:`load_benchmarks` and :func:`run_suite` from Python.
Names are imported on first use, so that the ``icc`` command starts fast.
"""

from ..utils.lazy_exports import lazy_getattr

_EXPORTS = {
    "Bootstrap": "bootstrap",
    "BENCHMARK_NAMES": "data",
    "BenchmarkSet": "data",
    "caption_benchmark": "data",
    "frozen_caption_benchmark": "data",
    "noun_benchmark": "data",
    "norm_partition": "data",
    "phrase_benchmark": "data",
    "word_benchmark": "data",
    "PUBLISHED_LABEL": "harness",
    "BenchResult": "harness",
    "BenchScorer": "harness",
    "run_benchmarks": "harness",
    "CorrelationReport": "metrics",
    "Estimate": "metrics",
    "correlate": "metrics",
    "kendall": "metrics",
    "pearson": "metrics",
    "spearman": "metrics",
    "SuiteOutcome": "suite",
    "load_benchmarks": "suite",
    "run_suite": "suite",
}
__all__ = sorted(_EXPORTS)

__getattr__ = lazy_getattr(__name__, _EXPORTS)
