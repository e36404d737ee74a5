"""The one decision of where a model runs: device, dtype and runtime, from what the caller asked and the machine.

Every caller that needs it asks :func:`resolve_execution`: the loader (which scorer to build), and through
``load.planned_execution`` the process cache (which requests share a model), sharded jobs (the device and
dtype they record) and the ``evaluate`` module (fp32 where the model runs on a CPU).

mini runs on ONNX Runtime (``mini_onnx.py``) on CPUs without native bf16 (AVX2-only, AVX-512 without BF16),
on any CPU under ``ICC_FORCE_FP32=1``, and on any CPU where torch is not installed (the core install), where it
runs in fp32. There, start-up skips torch (seconds on
small CPUs) and long jobs peak lower (``benchmarks/speed/mini_runtimes.py``). Elsewhere torch runs it
(``mini.py``): on CPUs with AMX or AVX512-BF16 (bf16 by default, fp32 when asked) and on GPUs.
``ICC_MINI_RUNTIME=torch`` (or ``onnxruntime``) overrides the choice. Whether a GPU may be here is read from
the device files its driver creates, so a machine without any never imports torch to ask. A request only torch
can run (a GPU, bf16, a student) without torch installed is one line naming the extra that installs it.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..models.mini.onnx_graph import RUNTIME_ENV
from ..utils import extras
from ..utils.errors import UserInputError
from . import hardware
from .hardware import AUTO, FLOAT32

if TYPE_CHECKING:
    import torch

PYTHON, TORCH, ONNXRUNTIME = "python", "torch", "onnxruntime"
#: What ``RUNTIME_ENV`` may name (``auto``: the default).
RUNTIME_CHOICES = (AUTO, TORCH, ONNXRUNTIME)
#: The runtimes of each kind of model, the first preferred where it fits: lite is pure Python; mini runs
#: on ONNX Runtime or torch; a student on torch.
LITE_RUNTIMES: tuple[str, ...] = (PYTHON,)
MINI_RUNTIMES: tuple[str, ...] = (ONNXRUNTIME, TORCH)
STUDENT_RUNTIMES: tuple[str, ...] = (TORCH,)


@dataclass(frozen=True)
class Execution:
    """Where a model runs: ``device`` and ``dtype`` as torch names them (``"cpu"``, ``"bfloat16"``; ``None``
    for a pure-Python model) and the ``runtime`` that runs it."""

    device: str | None
    dtype: str | None
    runtime: str


def resolve_execution(
    runtimes: tuple[str, ...], device: str | torch.device | None = None, dtype: str | torch.dtype | None = None
) -> Execution:
    """Where a model with these ``runtimes`` runs for ``device`` and ``dtype`` (``None`` or ``"auto"``: the
    default; see :func:`~.hardware.default_dtype`). Deterministic for one machine and environment, so the
    resolved values asked again give the same answer. An unknown dtype, a device that is not here, or an
    ``ICC_MINI_RUNTIME`` that cannot run the request is a ``UserInputError``."""
    if runtimes == LITE_RUNTIMES:  # device and dtype do not apply (and torch stays unimported)
        return Execution(None, None, PYTHON)
    if isinstance(dtype, str) and dtype != AUTO:
        hardware.dtype_name(dtype)  # an unknown name is refused before any runtime is chosen
    if ONNXRUNTIME in runtimes and _onnx_runtime_runs(device, dtype):
        return Execution("cpu", FLOAT32, ONNXRUNTIME)
    extras.require([(_torch_part(runtimes, device, dtype), extras.TORCH)])
    from .devices import resolve_device, resolve_dtype  # imports torch

    resolved = resolve_device(device)
    return Execution(str(resolved), str(resolve_dtype(dtype, resolved)).removeprefix("torch."), TORCH)


def _torch_part(runtimes: tuple[str, ...], device: object, dtype: object) -> str:
    """What a request that only torch can run asks for, as the missing-extra line names it."""
    if ONNXRUNTIME not in runtimes:
        return "a student model (transformers)"
    asked = f"device {device or AUTO!r} in dtype {dtype or AUTO!r}"
    return f"mini on {asked} (ONNX Runtime runs it on a CPU in float32)"


def torch_installed() -> bool:
    """Whether torch can be imported here (without importing it)."""
    return extras.module_available("torch")


def _onnx_runtime_runs(device: object, dtype: object) -> bool:
    """Whether ONNX Runtime runs mini for this request (see the module's docstring), ``ICC_MINI_RUNTIME`` first."""
    asked = os.environ.get(RUNTIME_ENV, AUTO).strip().lower() or AUTO
    if asked not in RUNTIME_CHOICES:
        raise UserInputError(f"{RUNTIME_ENV}={asked!r} is not a runtime; use one of {', '.join(RUNTIME_CHOICES)}")
    if asked == TORCH:
        return False
    on_cpu = device is None or str(device) == "cpu"
    fits = on_cpu and (dtype is None or dtype == AUTO or hardware.known_dtype_name(dtype) == FLOAT32)
    installed = importlib.util.find_spec("onnxruntime") is not None
    if asked == ONNXRUNTIME:
        if not (fits and installed):
            raise UserInputError(
                f"{RUNTIME_ENV}=onnxruntime runs mini on a CPU in float32 only, with onnxruntime installed; "
                f"asked for device {device!r}, dtype {dtype!r}"
            )
        return True
    if not (fits and installed):
        return False
    if not torch_installed():  # the core install: ONNX Runtime is mini's only runtime (fp32, on any CPU)
        return True
    if device is None and hardware.gpu_may_be_present() and hardware.default_device_type() != "cpu":
        return False
    # On CPUs with native bf16 torch runs mini in bf16 by default, and in fp32 through oneDNN's packed
    # products: ONNX Runtime was not measured against them there, so they keep torch.
    return not hardware.cpu_has_native_bf16()
