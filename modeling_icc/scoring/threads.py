"""The CPU threads this process scores with, set by the data engines to each worker's share of the cores.

torch's thread count where torch is installed (as the torch runner reads it); where it is not (the core
install), the share is kept here for ONNX Runtime, which runs that many batches side by side.
"""

from __future__ import annotations

import sys

from ..utils.extras import module_available
from .tokenize_workers import usable_cores

_share: int | None = None


def set_cpu_threads(threads: int) -> None:
    """Score with ``threads`` CPU threads in this process (a data engine's worker share)."""
    global _share
    _share = max(1, int(threads))
    if module_available("torch"):
        import torch

        torch.set_num_threads(_share)


def cpu_threads() -> int:
    """Threads to score with: torch's where torch is imported, else the share set here, else every usable core."""
    torch = sys.modules.get("torch")
    if torch is not None:
        return max(1, torch.get_num_threads())
    return _share or usable_cores()
