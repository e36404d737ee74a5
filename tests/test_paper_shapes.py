"""The benchmark's full-size random models have the published parameter counts (built on the meta device)."""

import pytest
import torch
from transformers import RobertaModel

from benchmarks.speed import paper_shapes


def _billions(module) -> float:
    return sum(p.numel() for p in module.parameters()) / 1e9


def test_sba_is_clip_vit_l14_text_plus_llama2_7b():
    sba = paper_shapes.paper_sba("meta", torch.bfloat16).model
    assert _billions(sba.text_model) == pytest.approx(0.1237, abs=1e-3)
    assert _billions(sba.lm) == pytest.approx(6.738, abs=1e-3)
    assert sba.projector.linear.in_features == 768 and sba.projector.linear.out_features == 4096


def test_text_to_image_is_stable_diffusion_2():
    pipe = paper_shapes.paper_text_to_image("meta", torch.bfloat16)
    assert _billions(pipe.unet) == pytest.approx(0.8659, abs=1e-3)
    assert _billions(pipe.vae) == pytest.approx(0.0837, abs=1e-3)
    assert _billions(pipe.text_encoder) == pytest.approx(0.3404, abs=1e-3)
    with torch.no_grad():  # 768 px: 96x96 latents through the UNet on the meta device
        latents = torch.zeros(1, 4, 96, 96, device="meta", dtype=torch.bfloat16)
        text = torch.zeros(1, 77, 1024, device="meta", dtype=torch.bfloat16)
        out = pipe.unet(latents, torch.tensor([1], device="meta"), text)
    assert out.sample.shape == (1, 4, 96, 96)
    assert pipe.scheduler.sigmas.dtype == torch.float32


def test_captioner_is_blip2_opt_2_7b_and_bertscore_is_roberta_large():
    blip2, processor = paper_shapes.paper_blip2("meta", torch.bfloat16)
    assert _billions(blip2) == pytest.approx(3.745, abs=2e-3)
    assert processor.num_query_tokens == 32
    with paper_shapes.built_on("meta", torch.float32):
        roberta = RobertaModel(paper_shapes.roberta_large_config())
    assert _billions(roberta) == pytest.approx(0.3554, abs=1e-3)
