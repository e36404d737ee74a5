"""Which runtime runs mini, decided without importing torch where the machine tells enough.

mini runs on ONNX Runtime (``mini_onnx.py``) on CPUs without native bf16 (AVX2-only, AVX-512 without BF16),
and on any CPU under ``ICC_FORCE_FP32=1``, where it runs in fp32. There, start-up skips torch (seconds on
small CPUs) and long jobs peak lower (``benchmarks/speed/mini_runtimes.py``). Elsewhere torch runs it
(``mini.py``): on CPUs with AMX or AVX512-BF16 (bf16 by default, fp32 when asked) and on GPUs.
``ICC_MINI_RUNTIME=torch`` (or ``onnxruntime``) overrides the choice.

Whether a GPU may be here is read from the device files its driver creates, so a machine without any
never imports torch to ask; a machine with one asks torch, as the torch path would.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import sys

from ..models.mini.onnx_graph import RUNTIME_ENV
from ..utils.errors import UserInputError

#: Environment variable that forces the fp32 path (see ``devices.py``).
FORCE_FP32_ENV = "ICC_FORCE_FP32"
#: What ``RUNTIME_ENV`` may name (``auto``: the default).
RUNTIMES = ("auto", "torch", "onnxruntime")
#: /proc/cpuinfo flags of CPUs that multiply bf16 in hardware (as torch.cpu's checks).
NATIVE_BF16_FLAGS = ("amx_tile", "avx512_bf16")
#: Device files of GPU drivers torch can use (NVIDIA CUDA, AMD ROCm, Intel XPU).
GPU_DEVICE_FILES = ("/dev/nvidia[0-9]*", "/dev/kfd", "/dev/dri/renderD*")
FP32_NAMES = ("float32", "fp32")


def fp32_forced() -> bool:
    """Whether ``ICC_FORCE_FP32`` asks for the fp32 path (``1``, ``true``, ``yes`` or ``on``)."""
    return os.environ.get(FORCE_FP32_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def cpu_flags() -> frozenset[str] | None:
    """This CPU's feature flags from ``/proc/cpuinfo`` (``None`` where there is none: not Linux)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        return None
    return None


def gpu_may_be_present() -> bool:
    """Whether torch could find a GPU here; ``False`` only when certain (Linux without any GPU device file)."""
    if not sys.platform.startswith("linux"):
        return True  # macOS (MPS), Windows: only torch can tell
    return any(glob.glob(pattern) for pattern in GPU_DEVICE_FILES)


def cpu_has_native_bf16() -> bool:
    """Whether this CPU multiplies bf16 in hardware (Intel AMX or AVX512-BF16); ``False`` when fp32 is forced.
    Read from ``/proc/cpuinfo`` (no torch import); elsewhere torch's CPU checks answer."""
    if fp32_forced():
        return False
    flags = cpu_flags()
    if flags is not None:
        return any(flag in flags for flag in NATIVE_BF16_FLAGS)
    import torch

    checks = ("_is_amx_tile_supported", "_is_avx512_bf16_supported")
    return any(getattr(torch.cpu, check, lambda: False)() for check in checks)


def _names_fp32(dtype: object) -> bool:
    return str(dtype).removeprefix("torch.").lower() in FP32_NAMES


def mini_runtime(device: object = None, dtype: object = None) -> str:
    """``"onnxruntime"`` or ``"torch"``: what runs mini for ``load_scorer("mini", device, dtype)``."""
    asked = os.environ.get(RUNTIME_ENV, "auto").strip().lower() or "auto"
    if asked not in RUNTIMES:
        raise UserInputError(f"{RUNTIME_ENV}={asked!r} is not a runtime; use one of {', '.join(RUNTIMES)}")
    if asked == "torch":
        return "torch"
    fits = (device is None or str(device) == "cpu") and (dtype is None or str(dtype) == "auto" or _names_fp32(dtype))
    installed = importlib.util.find_spec("onnxruntime") is not None
    if asked == "onnxruntime":
        if not (fits and installed):
            raise UserInputError(
                f"{RUNTIME_ENV}=onnxruntime runs mini on a CPU in float32 only, with onnxruntime installed; "
                f"asked for device {device!r}, dtype {dtype!r}"
            )
        return "onnxruntime"
    if not (fits and installed):
        return "torch"
    if device is None and gpu_may_be_present():
        from .devices import resolve_device

        if resolve_device(None).type != "cpu":
            return "torch"
    # On CPUs with native bf16 torch runs mini in bf16 by default, and in fp32 through oneDNN's packed
    # products: ONNX Runtime was not measured against them there, so they keep torch.
    return "torch" if cpu_has_native_bf16() else "onnxruntime"
