"""Many distinct, real-looking captions: the CC3M validation captions copied, one word swapped per copy.

The GPU measurements (``gpu_end_to_end.py``) use 1,000,000 such captions (mean 13.1 tokens with the MiniLM
tokenizer): real caption text and lengths, and every caption distinct, so that the scorer's
de-duplication cannot make a run look faster than it is. Copy 0 of each caption is the caption
itself; copy ``k > 0`` has one word, at a random position, replaced by a word drawn from all the
captions' words.
"""

from __future__ import annotations

import numpy as np

from modeling_icc.utils.shipped_data import cc3m_captions


def cc3m_copies(n: int, seed: int = 0) -> list[str]:
    """``n`` captions cycling through the CC3M validation captions, each copy after the first with one word swapped."""
    base = [caption.split() for caption in cc3m_captions() if caption.strip()]
    vocabulary = sorted({word for words in base for word in words})
    rng = np.random.default_rng(seed)
    positions = rng.random(n)
    replacements = rng.integers(0, len(vocabulary), size=n)
    out = []
    for index in range(n):
        words = base[index % len(base)]
        if index >= len(base):
            words = list(words)
            words[int(positions[index] * len(words))] = vocabulary[replacements[index]]
        out.append(" ".join(words))
    return out
