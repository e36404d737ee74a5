"""Similarity measures of the teachers: character edit similarity and guarded BERTScore."""

import pytest
import torch
from checkpoint_edits import copy_checkpoint, without
from transformers import RobertaConfig, RobertaForMaskedLM

from modeling_icc.teachers import BERTScoreSimilarity, best_char_similarity, char_similarity
from modeling_icc.testing import tiny_tokenizer
from modeling_icc.testing.student import tiny_roberta_kwargs
from modeling_icc.testing.teachers import save_tiny_bertscore_model
from modeling_icc.utils.errors import CheckpointError

pytestmark = pytest.mark.usefixtures("single_thread")


@pytest.mark.parametrize("text", ["a dog on a beach", "", "Ünïcödé 🐶 狗", " "])
def test_identity_is_one(text):
    assert char_similarity(text, text) == 1.0


@pytest.mark.parametrize(
    ("a", "b"), [("kitten", "sitting"), ("a dog", "a god on a log"), ("café", "cafe"), ("", "x"), ("🐶🐱", "🐶")]
)
def test_symmetric(a, b):
    assert char_similarity(a, b) == char_similarity(b, a)


def test_known_values_count_code_points_not_bytes():
    assert char_similarity("kitten", "sitting") == pytest.approx(1 - 3 / 7)
    assert char_similarity("café", "cafe") == pytest.approx(0.75)  # é is one character, not two bytes
    assert char_similarity("🐶🐱", "🐶") == pytest.approx(0.5)


def test_empty_strings_are_defined():
    assert char_similarity("", "") == 1.0
    assert char_similarity("", "a caption") == 0.0
    assert char_similarity("a caption", "") == 0.0


def test_best_of_candidates():
    assert best_char_similarity("a red car", ["a blue car", "a red car", "xyz"]) == ("a red car", 1.0)
    assert best_char_similarity("a red car", []) == ("", 0.0)


@pytest.fixture(scope="module")
def bertscore(tmp_path_factory):
    return BERTScoreSimilarity(str(save_tiny_bertscore_model(tmp_path_factory.mktemp("bertscore"))), num_layers=2)


def test_bertscore_guards_empty_strings(bertscore):
    scores = bertscore.f1(["", "", "a dog", "a dog on a beach"], ["", "a dog", "", "a dog on a beach"])
    assert scores[:3].tolist() == [1.0, 0.0, 0.0]
    assert scores[3] == pytest.approx(1.0, abs=1e-5)


def test_bertscore_best_and_provenance(bertscore):
    best = bertscore.best(["a dog on a beach", "a red car"], [["a cat", "a dog on a beach"], ["", "a red car"]])
    assert [text for text, _ in best] == ["a dog on a beach", "a red car"]
    assert all(0.0 <= score <= 1.0 for _, score in best)
    provenance = bertscore.provenance
    assert provenance["versions"]["bert-score"] and provenance["versions"]["transformers"]
    assert provenance["bertscore_num_layers"] == 2


def test_bertscore_refuses_a_model_with_a_weight_missing(tmp_path):
    """bert-score loads with plain from_pretrained, which would fill the weight randomly."""
    weight = "encoder.layer.1.attention.self.query.weight"
    broken = copy_checkpoint(save_tiny_bertscore_model(tmp_path / "model"), tmp_path / "broken", without(weight))
    with pytest.raises(CheckpointError, match=rf"broken' does not match the model: 1 weights missing \({weight}\)"):
        BERTScoreSimilarity(str(broken), num_layers=2)


def test_bertscore_takes_a_masked_lm_checkpoint_like_roberta_large(tmp_path):
    """roberta-large saves an LM head and no pooler: neither is read by bert-score, so neither is an error."""
    torch.manual_seed(0)
    RobertaForMaskedLM(RobertaConfig(**tiny_roberta_kwargs())).save_pretrained(tmp_path)
    tiny_tokenizer().save_pretrained(tmp_path)
    similarity = BERTScoreSimilarity(str(tmp_path), num_layers=2)
    assert similarity.f1(["a dog on a beach"], ["a dog on a beach"])[0] == pytest.approx(1.0, abs=1e-5)
