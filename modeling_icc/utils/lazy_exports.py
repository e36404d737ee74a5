"""Module-level ``__getattr__`` that imports a package's public names on first use (PEP 562).

Lets ``icc --help`` and ``icc score`` start without importing scipy, scikit-learn,
spaCy or diffusers, which only the benchmarks and baselines need.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module


def lazy_getattr(package: str, exports: dict[str, str]) -> Callable[[str], object]:
    """``__getattr__`` for ``package``: ``exports`` maps a public name to its submodule."""

    def __getattr__(name: str) -> object:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f".{exports[name]}", package), name)

    return __getattr__
