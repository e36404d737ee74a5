"""How far two runs' scores of the same captions differ, over the captions both read.

A caption in a language the model does not read scores NaN in every run (issue 51), whatever the runtime,
dtype or batch: ``np.abs(a - b).max()`` would then be NaN, and ``a != b`` would count the caption as moved.
"""

from __future__ import annotations

import numpy as np


def abs_differences(scores: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """``|scores - reference|`` for each caption either run scores (in the dtype of the subtraction): a caption
    unscored in both is left out, one scored in a single run differs by ``inf``, which no tolerance accepts."""
    unscored = np.isnan(scores), np.isnan(reference)
    differences = np.abs(scores - reference)
    differences[unscored[0] ^ unscored[1]] = np.inf
    return differences[~(unscored[0] & unscored[1])]
