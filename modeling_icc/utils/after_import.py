"""Run a function once a module is imported: at once if it already is, else right after its import.

``import modeling_icc`` stays free of ``transformers`` (seconds of start-up), yet the
student must be registered with transformers' Auto classes whenever transformers is
used, whichever of the two a program imports first.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable
from types import ModuleType


def when_imported(name: str, callback: Callable[[], object]) -> None:
    """Call ``callback()`` now if module ``name`` is imported, else just after its first import (a ``None`` in
    ``sys.modules``, which blocks the module's import, is not an import)."""
    if sys.modules.get(name) is not None:
        callback()
    else:
        sys.meta_path.insert(0, _AfterImportFinder(name, callback))


class _AfterImportFinder(importlib.abc.MetaPathFinder):
    """Finds ``name`` with the other finders and wraps its loader; removes itself on first use."""

    def __init__(self, name: str, callback: Callable[[], object]) -> None:
        self.name, self.callback = name, callback

    def find_spec(
        self, fullname: str, path: object = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _CallbackLoader(spec, self.callback)
        return spec


class _CallbackLoader(importlib.abc.Loader):
    """The module's own loader, followed by the callback; the module keeps its own loader."""

    def __init__(self, spec: importlib.machinery.ModuleSpec, callback: Callable[[], object]) -> None:
        self.spec, self.loader, self.callback = spec, spec.loader, callback

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.spec.loader = module.__loader__ = self.loader
        self.loader.exec_module(module)
        try:
            self.callback()
        except Exception as error:  # never break the user's own import of the module
            warnings.warn(f"after importing {self.spec.name}: {error!r}", RuntimeWarning, stacklevel=2)
