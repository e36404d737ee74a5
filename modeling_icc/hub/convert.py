"""The conversion of a student into our checkpoint format (``student_format.py``).

``icc convert`` turns a checkpoint in the published format (``moranyanuka/icc``:
``RobertaForSequenceClassification``) into it, with the same tensors and the same raw scores;
``icc push --kind model`` re-saves every student through it.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..models.icc import ICCForConcreteness
from ..scoring.load import load_scorer
from ..utils.atomic_files import copy_file
from ..utils.errors import UserInputError
from ..utils.shipped_data import paper_examples
from .fresh_process import remote_code_scores
from .student_format import save_student

#: The most a converted model's raw score may move (fp32, same tensors; only the code path differs).
SCORE_TOLERANCE = 1e-5


def convert_student(source: str | os.PathLike, folder: Path, card: str | os.PathLike | None = None) -> list[str]:
    """Write the student at ``source`` (local folder or Hub id, ours or the published format)
    into ``folder`` in our format, with ``card`` as README.md and the source's
    ``icc_provenance.json`` if it has one; returns the checks it passed.

    Checked: our loader and a fresh process using only the folder's code
    (``trust_remote_code=True``, without this package) give the source's raw scores.
    """
    scorer = load_scorer(source, device="cpu", dtype="float32")  # safetensors only; complete weights or an error
    if not isinstance(getattr(scorer, "model", None), ICCForConcreteness):
        raise UserInputError(f"{source!r} is not a student checkpoint (models shipped in the package have none)")
    save_student(scorer.model, scorer.tokenizer, folder)
    from ..training.distillation.distill import PROVENANCE_FILE

    provenance = Path(source) / PROVENANCE_FILE
    if provenance.is_file():
        copy_file(provenance, folder / PROVENANCE_FILE)
    if card is not None:
        if not Path(card).is_file():
            raise UserInputError(f"card not found: {card} (generate it with `icc cards`)")
        copy_file(card, folder / "README.md")
    texts = [row["caption"] for row in paper_examples()]
    expected = scorer.score(texts, raw=True)
    ours = load_scorer(folder, device="cpu", dtype="float32").score(texts, raw=True)
    remote = np.asarray(remote_code_scores(folder, texts), dtype=np.float32)
    for what, scores in (("load_scorer", ours), ("trust_remote_code", remote)):
        if not np.allclose(scores, expected, atol=SCORE_TOLERANCE):
            worst = float(np.abs(scores - expected).max())
            raise UserInputError(f"the converted model's raw scores ({what}) differ from the source's by up to {worst}")
    return [
        f"{folder}: model.safetensors, config.json (model_type icc, auto_map), code files, tokenizer",
        f"load_scorer(folder) gives the source's raw scores on {len(texts)} captions",
        "AutoModel.from_pretrained(folder, trust_remote_code=True) in a fresh process without the package "
        "gives the same raw scores",
    ]
