"""The VBA teacher: text-to-image -> BLIP-2 -> BERTScore, reproducible per caption."""

import re

import numpy as np
import pytest
import torch
from checkpoint_edits import copy_checkpoint, without

from modeling_icc.teachers import VBAPipeline, caption_seed
from modeling_icc.testing.teachers import TINY_IMAGE_SIZE, save_tiny_vba_components
from modeling_icc.utils.errors import CheckpointError

pytestmark = pytest.mark.usefixtures("single_thread")

CAPTIONS = ["a dog on a beach", "two red apples on a table", "the meaning of freedom", "a man on a bike"]
IDS = ["17", "4", "abc", "9"]


def test_end_to_end_scores_in_unit_interval(tiny_vba_pipeline):
    results = tiny_vba_pipeline.score(CAPTIONS, IDS, seed=0)
    assert len(results) == len(CAPTIONS)
    for result in results:
        assert len(result.candidates) == 5
        assert 0.0 <= result.similarity <= 1.0
        assert result.best in result.candidates
        assert not result.best.lower().startswith("a photo of")


def test_same_seed_and_ids_give_the_same_images_in_any_batch_order(tiny_vba_pipeline):
    forward = tiny_vba_pipeline.generate_images(CAPTIONS, IDS, seed=3)
    backward = tiny_vba_pipeline.generate_images(CAPTIONS[::-1], IDS[::-1], seed=3)[::-1]
    alone = tiny_vba_pipeline.generate_images(CAPTIONS[2:3], IDS[2:3], seed=3)
    for a, b in zip(forward, backward, strict=True):
        np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), atol=1)
    np.testing.assert_allclose(np.asarray(alone[0], dtype=float), np.asarray(forward[2], dtype=float), atol=1)
    other_seed = tiny_vba_pipeline.generate_images(CAPTIONS[:1], IDS[:1], seed=4)
    assert not np.array_equal(np.asarray(other_seed[0]), np.asarray(forward[0]))


def test_scores_do_not_depend_on_batch_order(tiny_vba_pipeline):
    forward = tiny_vba_pipeline.score(CAPTIONS, IDS, seed=1)
    backward = tiny_vba_pipeline.score(CAPTIONS[::-1], IDS[::-1], seed=1)[::-1]
    assert [r.candidates for r in forward] == [r.candidates for r in backward]
    np.testing.assert_allclose([r.similarity for r in forward], [r.similarity for r in backward], atol=1e-5)


def test_caption_seed_is_stable_and_distinct():
    assert caption_seed(0, "17") == caption_seed(0, "17")
    assert len({caption_seed(0, "17"), caption_seed(1, "17"), caption_seed(0, "18")}) == 3
    assert 0 <= caption_seed(12345, "x" * 1000) < 2**63


def test_bottleneck_images_can_be_kept(tiny_vba_pipeline, tmp_path):
    tiny_vba_pipeline.image_dir = tmp_path
    try:
        tiny_vba_pipeline.generate_images(CAPTIONS[:2], ["a/b", "2"], seed=0)
    finally:
        tiny_vba_pipeline.image_dir = None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2.png", "a_b.png"]


def test_provenance_records_settings_and_versions(tiny_vba_pipeline):
    provenance = tiny_vba_pipeline.provenance()
    assert provenance["prompt"] == "a photo of" and provenance["num_return_sequences"] == 5
    assert provenance["scheduler"] == "DPMSolverMultistepScheduler"
    assert provenance["versions"]["diffusers"] and provenance["versions"]["bert-score"]


@pytest.fixture(scope="module")
def components(tmp_path_factory):
    return {name: str(path) for name, path in save_tiny_vba_components(tmp_path_factory.mktemp("vba")).items()}


@pytest.mark.parametrize(
    ("component", "weights", "weight", "named"),
    [
        # diffusers leaves the weight uninitialized (on the meta device) and only logs a warning
        ("text_to_image", "unet/diffusion_pytorch_model.safetensors", "conv_in.bias", "text_to_image (unet)"),
        # the pipeline's transformers component would be filled randomly
        ("text_to_image", "text_encoder/model.safetensors", "encoder.layers.1.mlp.fc1.weight", "(text_encoder)"),
        ("captioner", "model.safetensors", "language_model.model.decoder.layers.1.fc1.weight", "captioner"),
    ],
)
def test_a_component_with_a_weight_missing_is_refused(components, component, weights, weight, named, tmp_path):
    broken = copy_checkpoint(components[component], tmp_path / component, without(weight), weights)
    paths = {**components, component: str(broken)}
    message = rf"{re.escape(named)}' does not match the model: 1 weights missing \({re.escape(weight)}\)"
    with pytest.raises(CheckpointError, match=message):
        VBAPipeline.from_pretrained(
            device="cpu", dtype=torch.float32, size=TINY_IMAGE_SIZE, bertscore_num_layers=2, **paths
        )


def test_compile_wraps_the_unet_and_keeps_the_images(tiny_vba_pipeline, monkeypatch):
    """``compile=True`` runs the UNet through torch.compile (the eager backend here: the real one takes minutes
    on a CPU); the images are those of the plain UNet."""
    from functools import partial

    monkeypatch.setattr(torch, "compile", partial(torch.compile, backend="eager"))
    plain = tiny_vba_pipeline
    assert not plain.config.compile and not hasattr(plain.text_to_image.unet, "_orig_mod")
    before = plain.generate_images(CAPTIONS[:2], IDS[:2], seed=0)
    parts = (plain.text_to_image, plain.captioner, plain.processor, plain.similarity, plain.config)
    compiled = VBAPipeline(*parts, compile=True)
    try:
        assert compiled.text_to_image.unet._orig_mod is not None and compiled.provenance()["compile"] is True
        after = compiled.generate_images(CAPTIONS[:2], IDS[:2], seed=0)
    finally:
        plain.text_to_image.unet = plain.text_to_image.unet._orig_mod  # the fixture is shared
    for a, b in zip(before, after, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
