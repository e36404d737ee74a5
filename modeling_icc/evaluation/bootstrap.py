"""How correlations get their intervals: the settings and their defaults, defined once for
``correlate``, ``run_benchmarks``, ``run_suite`` and ``icc bench``.

Kept free of scipy so that ``icc bench --help`` reads the defaults without loading it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bootstrap:
    """``n_bootstrap`` paired resamples drawn with ``seed``; percentile intervals at ``confidence``."""

    n_bootstrap: int = 1000
    seed: int = 0
    confidence: float = 0.95


#: The settings a run gets unless told others.
DEFAULT_BOOTSTRAP = Bootstrap()
