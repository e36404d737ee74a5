"""Device and dtype defaults: the fastest safe choice for the hardware at hand.

``ICC_FORCE_FP32=1`` in the environment makes the package behave as on a CPU without
native bf16 (an AVX2-only machine): fp32 by default on every device, and the
speed benchmarks skip their bf16 variants. It exists so that the fp32 path, the default
on many CPUs, can be tested and measured on any machine (``make test`` runs the
suite both ways).
"""

from __future__ import annotations

import torch

from ..utils.errors import UserInputError
from . import runtimes
from .runtimes import FORCE_FP32_ENV, fp32_forced  # defined torch-free there

#: Accelerators a device may name, by torch device type (their torch module says whether one is here).
_BACKENDS = {"cuda": "CUDA GPU", "mps": "Apple MPS GPU", "xpu": "Intel XPU GPU"}
_DEVICE_NAMES = "'cpu', 'cuda', 'cuda:N', 'mps' or 'xpu'"
_DTYPES = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
    "float16": torch.float16,
    "fp16": torch.float16,
}


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None`` picks CUDA, then Apple MPS, then CPU; a device that is not here is a ``UserInputError``
    (rather than torch's error from deep inside the first forward pass)."""
    if device is not None:
        return _available_device(device)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def _available_device(device: str | torch.device) -> torch.device:
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError):
        raise UserInputError(f"unknown device {str(device)!r}; use {_DEVICE_NAMES}") from None
    if resolved.type == "cpu":
        return resolved
    if resolved.type not in _BACKENDS:
        raise UserInputError(f"device {str(device)!r} is not supported; use {_DEVICE_NAMES}")
    backend = getattr(torch, resolved.type, None) if resolved.type != "mps" else getattr(torch.backends, "mps", None)
    if backend is None or not backend.is_available():
        raise UserInputError(
            f"device {str(device)!r} is not available: this torch ({torch.__version__}) sees no "
            f"{_BACKENDS[resolved.type]}; use 'cpu', or no device for the best one available"
        )
    count = backend.device_count() if hasattr(backend, "device_count") else 1
    if resolved.index is not None and resolved.index >= count:
        raise UserInputError(
            f"device {str(device)!r} is not available: {count} {_BACKENDS[resolved.type]}"
            f"{'s' * (count != 1)} here ({', '.join(f'{resolved.type}:{i}' for i in range(count))})"
        )
    return resolved


def bf16_unavailable_reason(device: torch.device) -> str | None:
    """Why ``device`` should not run bf16 (``None``: it multiplies bf16 natively).

    Without hardware support bf16 runs in software emulation, many times slower than
    fp32; the speed benchmarks skip such variants and record this reason instead of a number.
    """
    if fp32_forced():
        return f"{FORCE_FP32_ENV}=1 forces the fp32 path"
    if device.type == "cpu" and not runtimes.cpu_has_native_bf16():
        return "this CPU has no native bf16 (AMX or AVX512-BF16): bf16 would run in slow software emulation"
    if device.type == "cuda" and not torch.cuda.is_bf16_supported():
        return "this GPU has no native bf16"
    return None


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """``None`` picks the fastest dtype whose scores stay within 0.01 of fp32.

    bf16 on GPUs that support it (fp16 otherwise) and on CPUs with native bf16
    (AMX / AVX512-BF16; about 4x faster there than fp32); fp32 on other CPUs, and
    everywhere when ``ICC_FORCE_FP32`` is set. An explicit ``dtype`` is always honoured.
    ``benchmarks/speed/student_throughput.py`` measures the deviation on a trained model.
    """
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype is None or dtype == "auto":
        if fp32_forced():
            return torch.float32
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        if device.type == "mps":
            return torch.float16
        return torch.bfloat16 if runtimes.cpu_has_native_bf16() else torch.float32
    try:
        return _DTYPES[str(dtype).lower()]
    except KeyError:
        raise UserInputError(f"unknown dtype {dtype!r}; use one of {sorted(_DTYPES)}") from None
