"""Opt-in checks of the teachers with the paper's real checkpoints (skipped unless cached locally).

Download once where the Hub is reachable (`hf download stabilityai/stable-diffusion-2`,
`hf download Salesforce/blip2-opt-2.7b-coco`, `hf download roberta-large`); the VBA check
also needs a CUDA GPU.
"""

import pytest
import torch
from huggingface_hub import try_to_load_from_cache

from modeling_icc.models.vba.configuration_vba import VBAConfig

pytestmark = pytest.mark.real_weights


def _require_cached(*repos: str) -> None:
    missing = [repo for repo in repos if not isinstance(try_to_load_from_cache(repo, "config.json"), str)]
    missing = [repo for repo in missing if not isinstance(try_to_load_from_cache(repo, "model_index.json"), str)]
    if missing:
        pytest.skip(f"real weights not in the local Hugging Face cache: {', '.join(missing)}")


def test_bertscore_with_roberta_large_ranks_paraphrases_above_unrelated_text():
    _require_cached(VBAConfig.bertscore_model)
    from modeling_icc.teachers import BERTScoreSimilarity

    similarity = BERTScoreSimilarity()
    close, far = similarity.f1(["a dog running on a beach", "a bowl of soup"], ["a dog runs on the beach"] * 2)
    assert close > far and close > 0.9


def test_vba_reconstructs_a_concrete_caption_better_than_an_abstract_one():
    if not torch.cuda.is_available():
        pytest.skip("the full-size VBA check needs a CUDA GPU")
    _require_cached(VBAConfig.text_to_image, VBAConfig.captioner, VBAConfig.bertscore_model)
    from modeling_icc import VBAPipeline

    vba = VBAPipeline.from_pretrained()
    concrete, abstract = vba.score(
        ["a red double-decker bus on a city street", "the importance of trust in long-term investing"],
        ["0", "1"],
        seed=0,
    )
    assert concrete.similarity > abstract.similarity
