"""Devices and dtypes as torch objects: the request resolved, checked against the hardware at hand.

What the defaults are is read from :mod:`~.hardware` (torch-free); which device, dtype and runtime a model
runs with is decided by :func:`~.execution.resolve_execution`.
"""

from __future__ import annotations

import torch

from ..utils.errors import UserInputError
from . import hardware
from .hardware import AUTO, FORCE_FP32_ENV, dtype_name, fp32_forced

#: Accelerators a device may name, by torch device type (their torch module says whether one is here).
_BACKENDS = {"cuda": "CUDA GPU", "mps": "Apple MPS GPU", "xpu": "Intel XPU GPU"}
_DEVICE_NAMES = "'cpu', 'cuda', 'cuda:N', 'mps' or 'xpu'"


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None`` picks CUDA, then Apple MPS, then CPU; a device that is not here is a ``UserInputError``
    (rather than torch's error from deep inside the first forward pass)."""
    if device is None:
        return torch.device(hardware.default_device_type())
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
    if device.type == "cpu" and not hardware.cpu_has_native_bf16():
        return "this CPU has no native bf16 (AMX or AVX512-BF16): bf16 would run in slow software emulation"
    if device.type == "cuda" and not torch.cuda.is_bf16_supported():
        return "this GPU has no native bf16"
    return None


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """``dtype`` as a ``torch.dtype``; ``None`` (or ``"auto"``) is :func:`~.hardware.default_dtype` of ``device``.
    An explicit ``dtype`` is always honoured."""
    if isinstance(dtype, torch.dtype):
        return dtype
    name = hardware.default_dtype(device.type) if dtype is None or dtype == AUTO else dtype_name(dtype)
    return getattr(torch, name)
