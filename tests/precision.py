"""How closely two runs of one neural scorer agree, by the dtype it runs in.

Runs that batch or split captions differently reach the same numbers by different
summation orders. In fp32 that moves a score by float32 rounding; bf16 and fp16
round every layer's output to 8 (11) significant bits, so two runs may differ by a
few units in the last place (0.004 near 1 in bf16). The project's accuracy rule for
reduced precision, measured against fp32 on a trained model (README,
``benchmarks/speed/student_throughput.py``), is 0.01: two reduced-precision runs must agree
within it.
"""

import torch

FP32_ATOL = 1e-5
REDUCED_PRECISION_ATOL = 0.01


def score_atol(scorer) -> float:
    """Tolerance for comparing scores of ``scorer`` (a ``NeuralScorer``) across batchings."""
    return FP32_ATOL if scorer.model.dtype == torch.float32 else REDUCED_PRECISION_ATOL
