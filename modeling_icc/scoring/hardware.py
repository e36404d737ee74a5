"""What this machine offers a scorer, read without importing torch where the machine tells enough.

The facts every device and dtype choice starts from: the CPU's native bf16 (``/proc/cpuinfo``), whether a GPU
may be here (its driver's device files), the device a request without one runs on, the dtype names, and the
default dtype of a device type. Torch is imported only where only it can tell (a GPU's kind and bf16 support,
any CPU outside Linux), so lite and mini on ONNX Runtime start without it.

``ICC_FORCE_FP32=1`` in the environment makes the package behave as on a CPU without native bf16 (an
AVX2-only machine): fp32 by default on every device, and the speed benchmarks skip their bf16 variants. It
exists so that the fp32 path, the default on many CPUs, can be tested and measured on any machine
(``make test`` runs the suite both ways).
"""

from __future__ import annotations

import glob
import os
import sys

from ..utils.errors import UserInputError

#: Environment variable that forces the fp32 path.
FORCE_FP32_ENV = "ICC_FORCE_FP32"
#: /proc/cpuinfo flags of CPUs that multiply bf16 in hardware (as torch.cpu's checks).
NATIVE_BF16_FLAGS = ("amx_tile", "avx512_bf16")
#: Device files of GPU drivers torch can use (NVIDIA CUDA, AMD ROCm, Intel XPU).
GPU_DEVICE_FILES = ("/dev/nvidia[0-9]*", "/dev/kfd", "/dev/dri/renderD*")
FLOAT32, BFLOAT16, FLOAT16 = "float32", "bfloat16", "float16"
#: Every dtype name a caller may give, to the name torch gives it.
DTYPE_NAMES = {
    "float32": FLOAT32,
    "fp32": FLOAT32,
    "bfloat16": BFLOAT16,
    "bf16": BFLOAT16,
    "float16": FLOAT16,
    "fp16": FLOAT16,
}
#: The dtype value that asks for the default, as ``None`` does.
AUTO = "auto"


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


def default_device_type() -> str:
    """The device type a request without a device runs on: CUDA, then Apple MPS, then the CPU (torch tells)."""
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def known_dtype_name(dtype: object) -> str | None:
    """The name torch gives ``dtype`` (a name a caller may give, or a ``torch.dtype``): ``"bfloat16"`` for
    ``"bf16"``; ``None`` for a dtype no name here stands for (``torch.float64``, an unknown name)."""
    return DTYPE_NAMES.get(str(dtype).removeprefix("torch.").lower())


def dtype_name(dtype: object) -> str:
    """:func:`known_dtype_name`, or a ``UserInputError`` naming the dtypes there are."""
    name = known_dtype_name(dtype)
    if name is None:
        raise UserInputError(f"unknown dtype {dtype!r}; use one of {sorted(DTYPE_NAMES)}")
    return name


def default_dtype(device_type: str) -> str:
    """The dtype a model runs in on ``device_type`` when none is asked: the fastest whose scores stay within
    0.01 of fp32.

    bf16 on GPUs that support it (fp16 otherwise, and on Apple MPS) and on CPUs with native bf16
    (AMX / AVX512-BF16; about 4x faster there than fp32); fp32 on other CPUs, and everywhere when
    ``ICC_FORCE_FP32`` is set. ``benchmarks/speed/student_throughput.py`` measures the deviation on a trained model.
    """
    if fp32_forced():
        return FLOAT32
    if device_type == "cuda":
        import torch

        return BFLOAT16 if torch.cuda.is_bf16_supported() else FLOAT16
    if device_type == "mps":
        return FLOAT16
    return BFLOAT16 if cpu_has_native_bf16() else FLOAT32
