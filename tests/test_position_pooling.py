"""Position-weighted pooling: the fit's features, the selection rule, and that mini ships what it chose."""

import json
from pathlib import Path

import numpy as np
import pytest

from modeling_icc.training.position_pooling import CLEAN_TOLERANCE, LEAD_TYPES, TIE, choose
from modeling_icc.utils.caption_noise import NOISE_TYPES

RESULT = Path(__file__).resolve().parents[1] / "benchmarks" / "quality" / "position_pooling_cv.json"


@pytest.fixture(scope="module")
def encoder():
    from transformers import AutoTokenizer

    from modeling_icc.models.mini.modeling_mini import MiniICCConfig, MiniICCModel, base_model_path
    from modeling_icc.training.fit_mini import _read_json

    base = base_model_path()
    config = MiniICCConfig(encoder=_read_json(base / "config.json"), num_layers=4, embedding_layer=4, word_layer=4)
    return MiniICCModel.from_base(config, base), AutoTokenizer.from_pretrained(str(base))


def test_a_flat_decay_gives_the_plain_means_and_a_steep_one_reads_the_start(encoder):
    from modeling_icc.training.fit_mini import encode

    caption = "a brown dog running on the beach"
    texts = [caption, caption + " " + ", ".join(["ideas", "best", "trends", "online"] * 8), caption + " x" * 300]
    plain = encode(*encoder, texts)
    assert plain.windows is not None  # the third text is read in windows, with the decay too
    flat = encode(*encoder, texts, position_decay=1e9)
    np.testing.assert_allclose(flat.embedding, plain.embedding, atol=1e-5)
    np.testing.assert_allclose(flat.word_means, plain.word_means, atol=1e-4)
    steep = encode(*encoder, texts, position_decay=2.0)
    assert steep.embedding[0] @ steep.embedding[1] > plain.embedding[0] @ plain.embedding[1]  # the tail weighs less
    assert not np.allclose(steep.embedding[2], plain.embedding[2], atol=1e-3)


def _row(decay, lead, clean, objective):
    return {"position_decay": decay, "lead_copies_in_training": lead, "clean": clean, "objective": objective}


def test_the_rule_prefers_plain_means_within_the_tie_and_refuses_a_clean_loss():
    plain = _row(None, True, 0.78, 0.74)
    assert choose([plain, _row(32.0, True, 0.79, 0.74 + TIE / 2)]) is plain
    better = _row(32.0, True, 0.78, 0.74 + 2 * TIE)
    assert choose([plain, better]) is better
    assert choose([plain, better, _row(64.0, True, 0.78, 0.74 + 1.5 * TIE)])["position_decay"] == 64.0  # tie: larger
    assert choose([plain, _row(8.0, False, 0.78 - 2 * CLEAN_TOLERANCE, 0.80)]) is plain


def test_the_committed_cv_chose_what_mini_ships():
    from modeling_icc.models.mini.modeling_mini import read_heads, shipped_heads_path
    from modeling_icc.training.fit_mini import FitSettings

    result = json.loads(RESULT.read_text(encoding="utf-8"))
    decay = FitSettings().position_decay
    assert result["chosen"] == {"position_decay": decay, "lead_copies_in_training": True}
    assert read_heads(shipped_heads_path())[1]["config"]["position_decay"] == decay
    assert set(LEAD_TYPES) <= set(NOISE_TYPES)  # so the shipped fit trains on the description-late copies
    decays = {row["position_decay"] for row in result["candidates"]}
    assert None in decays and len(decays) > 2 and len(result["candidates"]) == 2 * len(decays)
