"""The student: published-format parity, Auto registration, save/load, outputs."""

import json

import pytest
import torch
from transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForSequenceClassification,
    RobertaForSequenceClassification,
)

import modeling_icc
from modeling_icc import ICCConfig, ICCForConcreteness
from modeling_icc.testing import tiny_student, tiny_tokenizer


def _encode(texts):
    return tiny_tokenizer()(texts, padding=True, return_tensors="pt")


def test_published_format_loads_unchanged_with_identical_raw_output(published_format_dir):
    reference = RobertaForSequenceClassification.from_pretrained(published_format_dir).eval()
    ours = ICCForConcreteness.from_pretrained(published_format_dir).eval()
    batch = _encode(["a man with a white shirt", "keep an eye on the ball when it comes to investments"])
    with torch.inference_mode():
        expected = reference(**batch).logits
        got = ours(**batch)
    torch.testing.assert_close(got.logits, expected, rtol=0, atol=0)
    assert ours.config.model_type == "icc" and ours.config.num_labels == 1


def test_output_has_raw_and_clipped_scores():
    model = tiny_student()
    with torch.no_grad():
        model.classifier.out_proj.bias.fill_(3.0)  # push raw outputs above 1
        out = model(**_encode(["a dog on a beach"]))
    assert out.raw_scores.item() > 1.0
    assert out.scores.item() == 1.0
    assert out.logits.shape == (1, 1)


def test_mse_loss_with_labels():
    model = tiny_student()
    batch = _encode(["a red car", "an abstract idea"])
    labels = torch.tensor([0.9, 0.1])
    out = model(**batch, labels=labels)
    expected = torch.nn.functional.mse_loss(out.raw_scores, labels)
    torch.testing.assert_close(out.loss, expected)


def test_save_and_load_round_trip_in_safetensors(tmp_path):
    model = tiny_student(seed=3)
    model.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").is_file()
    assert not list(tmp_path.glob("*.bin"))
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["model_type"] == "icc"
    assert config["auto_map"]["AutoModel"].endswith("ICCForConcreteness")
    assert config["auto_map"]["AutoConfig"].endswith("ICCConfig")
    loaded = AutoModel.from_pretrained(tmp_path)
    assert type(loaded) is ICCForConcreteness
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(loaded.state_dict()[name], tensor, rtol=0, atol=0)


def test_auto_classes_are_registered(tmp_path):
    tiny_student().save_pretrained(tmp_path)
    assert type(AutoConfig.from_pretrained(tmp_path)) is ICCConfig
    assert type(AutoModelForSequenceClassification.from_pretrained(tmp_path)) is ICCForConcreteness
    assert AutoConfig.for_model("icc").__class__ is ICCConfig
    assert modeling_icc.ICCConfig.model_type == "icc"


def test_config_defaults_are_distilroberta_regression():
    config = ICCConfig()
    assert (config.num_hidden_layers, config.hidden_size, config.num_labels) == (6, 768, 1)
    assert config.problem_type == "regression"
    with pytest.raises(ValueError, match="single-output"):
        ICCConfig(num_labels=3)


def test_non_roberta_backbone_is_refused():
    from transformers import BertConfig

    with pytest.raises(ValueError, match="RoBERTa-family"):
        ICCConfig.from_backbone_config(BertConfig())
