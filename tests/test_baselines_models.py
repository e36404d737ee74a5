"""Model-based baselines on tiny random models (real loading and scoring code paths, no download)."""

import re

import numpy as np
import pytest
from baseline_checks import assert_scores_in_order
from checkpoint_edits import copy_checkpoint, without
from PIL import Image

from modeling_icc.evaluation.baselines import AveClipScorer, ClipScore, ClipStroopScorer, LLMPromptScorer, parse_rating
from modeling_icc.evaluation.baselines.clip import ClipEmbedder
from modeling_icc.evaluation.baselines.stroop import STROOP_PROMPTS
from modeling_icc.scoring.load import ModelNotAvailableError
from modeling_icc.testing import save_tiny_causal_lm, save_tiny_clip, save_tiny_text_to_image
from modeling_icc.utils.errors import CheckpointError

# Tiny models are latency-bound: thousands of small products (the LM's generation above all) run fastest, and
# steadiest on a shared CPU, on one thread.
pytestmark = pytest.mark.usefixtures("single_thread")


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory):
    return save_tiny_clip(tmp_path_factory.mktemp("tiny_clip"))


@pytest.fixture(scope="module")
def lm_dir(tmp_path_factory):
    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny_lm"))


@pytest.fixture(scope="module")
def t2i_dir(tmp_path_factory):
    return save_tiny_text_to_image(tmp_path_factory.mktemp("tiny_t2i"))


@pytest.fixture(scope="module")
def captions(paper_examples):
    return [example["caption"] for example in paper_examples]


def test_stroop_scores_paper_examples_in_order(clip_dir, captions):
    scorer = ClipStroopScorer(clip_dir, device="cpu", dtype="float32")
    scores = assert_scores_in_order(scorer, captions, atol=1e-5)
    embedder = ClipEmbedder(clip_dir, vision=False, device="cpu", dtype="float32")
    expected = np.mean(
        [
            embedder.texts([prompt.replace("MASK", captions[0])])[0] @ embedder.texts([prompt.replace(" MASK", "")])[0]
            for prompt in STROOP_PROMPTS
        ]
    )
    assert scorer.score(captions[:1], raw=True)[0] == pytest.approx(expected, abs=1e-5)
    assert np.all(scores <= 1.0)


def test_stroop_rejects_prompts_without_one_slot(clip_dir):
    with pytest.raises(ValueError, match="exactly one 'MASK' slot"):
        ClipStroopScorer(clip_dir, prompts=("a photo",), device="cpu")


def test_aveclip_scores_in_order_with_reproducible_images(t2i_dir, clip_dir, captions):
    scorer = AveClipScorer(
        t2i_dir, clip_dir, images_per_caption=2, num_inference_steps=2, batch_size=8, device="cpu", dtype="float32"
    )
    raw = scorer.score(captions, raw=True)
    assert np.isfinite(raw).all() and np.all(np.abs(raw) <= 1.0 + 1e-6)
    np.testing.assert_allclose(scorer.score(captions[::-1], raw=True)[::-1], raw, atol=1e-4)
    first, again = scorer.generate(captions[:1])[0], scorer.generate(captions[:1])[0]
    assert len(first) == 2
    assert np.array_equal(np.asarray(first[0]), np.asarray(again[0]))
    assert not np.array_equal(np.asarray(first[0]), np.asarray(first[1]))


def test_llm_prompting_rates_paper_examples_in_order(lm_dir, captions):
    # Each caption costs a generation and, as a random LM's answers hold no rating, five scored answers:
    # six captions in batches of four (a full batch and a partial one) prove what all the examples would.
    captions = captions[:6]
    scorer = LLMPromptScorer(lm_dir, scale=5, device="cpu", dtype="float32", batch_size=4)
    ratings = scorer.rate(captions)
    assert ratings.min() >= 1 and ratings.max() <= 5
    assert 0 <= scorer.last_fallbacks <= len(captions)
    scores = assert_scores_in_order(scorer, captions, atol=1e-6)
    np.testing.assert_allclose(scores, (ratings - 1) / 4)
    assert "Caption: " + captions[0] in scorer.prompt(captions[0]) and "1 to 5" in scorer.prompt(captions[0])


def test_llm_prompting_uses_the_chat_template_when_there_is_one(lm_dir):
    scorer = LLMPromptScorer(lm_dir, scale=3, device="cpu", dtype="float32")
    scorer.tokenizer.chat_template = "{% for m in messages %}<s>[USER] {{ m['content'] }} [ASSISTANT]{% endfor %}"
    prompt = scorer.prompt("a red car")
    assert prompt.startswith("<s>[USER] You are a visual expert") and prompt.endswith("[ASSISTANT]")
    assert set(scorer.rate(["a red car", "a theory of love"])) <= {1, 2, 3}


@pytest.mark.parametrize(
    ("answer", "n", "expected"),
    [
        (" 4", 5, 4),
        ("**4**/5", 5, 4),
        ("Rating: four.", 5, 4),
        ("I would say 10", 10, 10),
        ("7", 5, None),
        ("15 then 2", 5, 2),
        ("no idea", 5, None),
        ("", 3, None),
    ],
)
def test_parse_rating(answer, n, expected):
    assert parse_rating(answer, n) == expected


def test_clipscore_is_weighted_clipped_cosine(clip_dir, tmp_path):
    scorer = ClipScore(clip_dir, device="cpu", dtype="float32")
    red, blue = Image.new("RGB", (40, 30), (220, 20, 20)), Image.new("RGB", (32, 32), (20, 20, 220))
    path = tmp_path / "blue.png"
    blue.save(path)
    scores = scorer.score([red, path], ["a red square", "a blue square"])
    assert scores.shape == (2,) and np.all(scores >= 0) and np.all(scores <= 2.5)
    embedder = scorer.embedder
    cosine = float(embedder.images([red])[0] @ embedder.texts(["A photo depicts a red square"])[0])
    assert scores[0] == pytest.approx(2.5 * max(cosine, 0.0), abs=1e-5)
    with pytest.raises(ValueError, match="2 images but 1 captions"):
        scorer.score([red, blue], ["one caption"])


def test_missing_checkpoint_gives_a_clear_error():
    with pytest.raises(ModelNotAvailableError, match="neither a local directory nor in the Hugging Face cache"):
        ClipStroopScorer("nobody/no-such-clip", device="cpu")


@pytest.mark.parametrize(
    ("checkpoint", "weights", "weight", "load"),
    [
        ("clip", "model.safetensors", "text_model.encoder.layers.1.mlp.fc1.weight", ClipStroopScorer),
        ("clip", "model.safetensors", "vision_model.encoder.layers.1.mlp.fc1.weight", ClipScore),
        ("lm", "model.safetensors", "model.layers.1.mlp.up_proj.weight", LLMPromptScorer),
        ("t2i", "unet/diffusion_pytorch_model.safetensors", "conv_in.bias", None),
    ],
)
def test_a_baseline_checkpoint_with_a_weight_missing_is_refused(
    checkpoint, weights, weight, load, clip_dir, lm_dir, t2i_dir, tmp_path
):
    """transformers would fill the weight randomly and diffusers leave it uninitialized: a baseline
    scoring with it would give numbers that look fine and mean nothing."""
    source = {"clip": clip_dir, "lm": lm_dir, "t2i": t2i_dir}[checkpoint]
    broken = copy_checkpoint(source, tmp_path / checkpoint, without(weight), weights)
    if load is None:
        load = lambda path, device: AveClipScorer(path, clip_model=clip_dir, device=device)  # noqa: E731
    with pytest.raises(CheckpointError, match=rf"1 weights missing \({re.escape(weight)}\)"):
        load(broken, device="cpu")


def test_the_clip_text_tower_loads_from_a_full_clip_checkpoint_without_its_image_side(clip_dir, tmp_path):
    broken = copy_checkpoint(clip_dir, tmp_path / "clip", without("vision_model.encoder.layers.1.mlp.fc1.weight"))
    ClipEmbedder(broken, vision=False, device="cpu", dtype="float32")  # the text tower needs no image weight
