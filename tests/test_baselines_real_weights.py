"""Opt-in checks of the model-based baselines on real checkpoints.

Run with ``ICC_REAL_WEIGHTS=1 pytest -m real_weights`` on a machine whose Hugging Face cache
holds the checkpoints (or can download them); each test skips with the reason otherwise.
"""

import os

import numpy as np
import pytest
from PIL import Image

from modeling_icc.scoring.load import ModelNotAvailableError

pytestmark = pytest.mark.real_weights
HEADLINE = ["a man with a white shirt", "a great method of quantifying concreteness"]


def build(factory, name: str):
    if os.environ.get("ICC_REAL_WEIGHTS") != "1":
        pytest.skip("real-weight checks are opt-in: set ICC_REAL_WEIGHTS=1")
    try:
        return factory()
    except ModelNotAvailableError:
        pytest.skip(f"{name} is not on this machine and cannot be downloaded here")


def test_stroop_on_real_clip():
    from modeling_icc.evaluation.baselines import ClipStroopScorer

    scorer = build(lambda: ClipStroopScorer("openai/clip-vit-base-patch32"), "openai/clip-vit-base-patch32")
    scores = scorer.score(HEADLINE, raw=True)
    assert np.isfinite(scores).all() and np.all((scores > 0.3) & (scores <= 1.0))


def test_aveclip_on_real_stable_diffusion_ranks_the_headline_pair():
    from modeling_icc.evaluation.baselines import AveClipScorer

    scorer = build(lambda: AveClipScorer(images_per_caption=2), "stabilityai/stable-diffusion-2")
    scores = scorer.score(HEADLINE, raw=True)
    assert scores[0] > scores[1]


def test_llm_prompting_on_a_real_chat_model_ranks_the_headline_pair():
    from modeling_icc.evaluation.baselines import LLMPromptScorer

    model_id = os.environ.get("ICC_REAL_LLM", "meta-llama/Llama-2-7b-chat-hf")
    scorer = build(lambda: LLMPromptScorer(model_id, scale=5), model_id)
    scores = scorer.score(HEADLINE)
    assert scores[0] > scores[1] and scorer.last_fallbacks == 0


def test_clipscore_on_real_clip_prefers_the_matching_caption():
    from modeling_icc.evaluation.baselines import ClipScore

    scorer = build(lambda: ClipScore(), "openai/clip-vit-base-patch32")
    red = Image.new("RGB", (224, 224), (220, 20, 20))
    scores = scorer.score([red, red], ["a plain red square", "a plain blue square"])
    assert scores[0] > scores[1] >= 0.0
