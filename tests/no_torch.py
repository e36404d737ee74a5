"""Code that makes a Python process unable to import torch and the other extras, as the core install is."""

#: The extras' modules a core install lacks (pyarrow: the ``parquet`` extra).
EXTRA_MODULES = ("torch", "transformers", "datasets", "evaluate", "onnx", "sklearn", "pyarrow")


def blocker(modules: tuple[str, ...] = EXTRA_MODULES) -> str:
    """Code to put first (``python -c``, or a ``sitecustomize``): ``modules`` then look uninstalled, as they do
    without their package (the path finder does not find them: ``import`` raises ``ModuleNotFoundError``,
    ``importlib.util.find_spec`` gives None, and ``sys.modules`` never holds them)."""
    return (
        "import importlib.machinery\n"
        "_find = importlib.machinery.PathFinder.find_spec\n"
        "def _hidden(cls, fullname, path=None, target=None):\n"
        f"    if fullname.partition('.')[0] in {set(modules)!r}:\n"
        "        return None\n"
        "    return _find(fullname, path, target)\n"
        "importlib.machinery.PathFinder.find_spec = classmethod(_hidden)\n"
    )


NO_TORCH = blocker()
