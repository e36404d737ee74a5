"""FastICCEncoder gives the transformers module's scores, and the scorer keeps it in step with the weights."""

import copy

import numpy as np
import pytest
import torch

from modeling_icc import NeuralScorer
from modeling_icc.models.icc import fast_encoder
from modeling_icc.models.icc.fast_encoder import FastICCEncoder, supports_fast_encoder
from modeling_icc.testing import tiny_student, tiny_tokenizer

CAPTIONS = [
    "a man with a white shirt",
    "dog",
    "small blue and white airplane parked on the ramp with a control tower in the distance",
    "keep an eye on the ball when it comes to investments",
    "x",
    "A sandwich sits on a small blue plate",
]


def _batch(texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    encoded = tiny_tokenizer()(texts, padding=True, return_tensors="pt")
    return encoded["input_ids"], encoded["attention_mask"]


def _module_scores(model, input_ids, attention_mask) -> torch.Tensor:
    with torch.inference_mode():
        return model(input_ids=input_ids, attention_mask=attention_mask).raw_scores.float()


@pytest.mark.parametrize("use_mkldnn", [True, False], ids=["onednn", "plain-linear"])
def test_fp32_scores_match_the_module_on_padded_batches(monkeypatch, use_mkldnn):
    if not use_mkldnn:
        monkeypatch.setattr(fast_encoder, "mkldnn_usable", lambda dtype: False)
    model = tiny_student(seed=3)
    input_ids, attention_mask = _batch(CAPTIONS)
    assert attention_mask.sum(1).unique().numel() > 1  # rows of different lengths, so padding is exercised
    encoder = FastICCEncoder(model)
    assert encoder.uses_mkldnn == (use_mkldnn and torch.backends.mkldnn.is_available())
    torch.testing.assert_close(encoder(input_ids, attention_mask), _module_scores(model, input_ids, attention_mask))


def test_bf16_fast_scores_stay_as_close_to_fp32_as_the_bf16_module():
    model = tiny_student(seed=4)
    input_ids, attention_mask = _batch(CAPTIONS * 4)
    reference = _module_scores(model, input_ids, attention_mask)
    bf16 = copy.deepcopy(model).to(torch.bfloat16)
    module_error = (_module_scores(bf16, input_ids, attention_mask) - reference).abs().max().item()
    fast_error = (FastICCEncoder(bf16)(input_ids, attention_mask).float() - reference).abs().max().item()
    assert fast_error <= max(2 * module_error, 0.01)


def test_scorer_sees_in_place_weight_changes_made_after_scoring():
    model = tiny_student(seed=6)
    scorer = NeuralScorer(model, tiny_tokenizer(), model_id="tiny", progress=False)
    module = NeuralScorer(model, tiny_tokenizer(), model_id="tiny", progress=False, fast=False)
    before = scorer.score(CAPTIONS, raw=True)
    with torch.no_grad():  # a fused, pre-packed projection: only a rebuild picks this up
        model.roberta.encoder.layer[0].attention.self.value.weight.mul_(3.0)
    after = scorer.score(CAPTIONS, raw=True)
    assert np.abs(after - before).max() > 1e-4  # well above the 1e-5 agreement checked below
    np.testing.assert_allclose(after, module.score(CAPTIONS, raw=True), atol=1e-5)


def test_unsupported_architectures_run_the_module():
    model = tiny_student(hidden_act="relu")
    assert not supports_fast_encoder(model)
    with pytest.raises(ValueError, match="GELU"):
        FastICCEncoder(model)
    fast_requested = NeuralScorer(model, tiny_tokenizer(), model_id="tiny", progress=False)
    module = NeuralScorer(model, tiny_tokenizer(), model_id="tiny", progress=False, fast=False)
    assert not fast_requested.fast
    np.testing.assert_array_equal(fast_requested.score(CAPTIONS), module.score(CAPTIONS))


def test_fast_and_module_scorers_agree_end_to_end():
    model = tiny_student(seed=5)
    texts = CAPTIONS * 9
    fast = NeuralScorer(model, tiny_tokenizer(), model_id="tiny", progress=False, batch_size=4, max_batch_tokens=64)
    module = NeuralScorer(model, tiny_tokenizer(), model_id="tiny", progress=False, fast=False)
    np.testing.assert_allclose(fast.score(texts, raw=True), module.score(texts, raw=True), atol=1e-5)
