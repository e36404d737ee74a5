"""The SBA teacher: frozen towers, caption-only loss, training, beam reconstruction, save/load."""

import pytest
import torch
from safetensors.torch import load_file

from modeling_icc.models.sba.modeling_sba import IGNORE_INDEX, WEIGHTS_NAME
from modeling_icc.teachers import SBACollator, SBAConfig, SBAForCaptionReconstruction, SBATrainingConfig, train_sba
from modeling_icc.testing.teachers import save_tiny_sba_components, tiny_sba

pytestmark = pytest.mark.usefixtures("single_thread")

CAPTIONS = [
    "a brown dog running on a sandy beach",
    "two red apples on a wooden table",
    "a man riding a bicycle down the street",
    "the best way to think about money",
]


def _batch(model, captions=CAPTIONS):
    return SBACollator(model.text_tokenizer, model.lm_tokenizer)(captions)


@pytest.fixture(scope="module")
def components(tmp_path_factory):
    return save_tiny_sba_components(tmp_path_factory.mktemp("sba_components"))


def test_only_the_projector_trains():
    model = tiny_sba()
    trainable = {name for name, param in model.named_parameters() if param.requires_grad}
    assert trainable == {"projector.linear.weight", "projector.linear.bias"}
    model.train()
    assert model.projector.training and not model.text_model.training and not model.lm.training


def test_lora_adds_only_adapter_weights_to_the_trainable_set():
    model = tiny_sba(lora_r=4)
    trainable = [name for name, param in model.named_parameters() if param.requires_grad]
    assert any("lora_" in name for name in trainable)
    assert all(name.startswith("projector.") or "lora_" in name for name in trainable)


def test_default_config_is_the_paper_shape():
    config = SBAConfig()
    assert (config.text_config.projection_dim, config.lm_config.hidden_size, config.num_soft_tokens) == (768, 4096, 1)
    assert config.bottleneck == "pooled" and config.lora_r == 0
    with pytest.raises(ValueError, match="bottleneck"):
        SBAConfig(bottleneck="image")


def test_loss_covers_caption_tokens_only():
    model = tiny_sba()
    batch = _batch(model)
    output = model(**batch)
    prefix_len = output.logits.shape[1] - batch["input_ids"].shape[1]
    # position t predicts token t+1: the logits before each caption token, caption padding excluded
    logits = output.logits[:, prefix_len - 1 : -1].float()
    labels = batch["labels"]
    expected = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE_INDEX
    )
    torch.testing.assert_close(output.loss, expected, rtol=1e-4, atol=1e-5)
    assert (labels == IGNORE_INDEX).any(), "shorter captions are padded and their padding is masked"
    newline = model.lm_tokenizer("\n", add_special_tokens=False)["input_ids"][-1]
    lengths = batch["attention_mask"].sum(1)
    assert all(batch["input_ids"][row, n - 1] == newline for row, n in enumerate(lengths.tolist()))


def test_padding_does_not_change_a_captions_loss():
    model = tiny_sba()
    alone = model(**_batch(model, [CAPTIONS[1]])).loss
    with_longer = _batch(model, [CAPTIONS[1], CAPTIONS[2] + " and a very long tail of extra words"])
    out = model(**with_longer)
    n = with_longer["attention_mask"][0].sum()
    prefix_len = out.logits.shape[1] - with_longer["input_ids"].shape[1]
    logits = out.logits[0, prefix_len - 1 : prefix_len - 1 + n]
    first = torch.nn.functional.cross_entropy(logits.float(), with_longer["labels"][0, :n])
    torch.testing.assert_close(first, alone, rtol=1e-4, atol=1e-5)


def test_a_few_steps_on_four_captions_lower_the_loss():
    model = tiny_sba(seed=1)
    batch = _batch(model)
    optimizer = torch.optim.Adam(model.projector.parameters(), lr=3e-2)
    model.train()
    losses = []
    for _ in range(15):
        loss = model(**batch).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] - 0.3, losses


def test_reconstruct_returns_five_single_line_candidates():
    model = tiny_sba()
    out = model.reconstruct(CAPTIONS[:3], num_beams=5, num_return_sequences=5, max_new_tokens=12)
    assert len(out) == 3
    assert all(len(candidates) == 5 for candidates in out)
    assert all(isinstance(c, str) and "\n" not in c for candidates in out for c in candidates)
    assert model.reconstruct([]) == []


class _AlwaysPredicts(torch.nn.Module):
    """An LM head whose every prediction is one token."""

    def __init__(self, token_id: int, vocab_size: int) -> None:
        super().__init__()
        self.token_id, self.vocab_size = token_id, vocab_size

    def forward(self, hidden):
        logits = torch.zeros(*hidden.shape[:-1], self.vocab_size, dtype=hidden.dtype)
        logits[..., self.token_id] = 10.0
        return logits


def test_reconstruct_stops_at_the_newline():
    model = tiny_sba()
    newline = model.lm_tokenizer("\n", add_special_tokens=False)["input_ids"][-1]
    assert newline in model.newline_token_ids()
    model.lm.lm_head = _AlwaysPredicts(newline, model.config.lm_config.vocab_size)
    out = model.reconstruct(CAPTIONS[:2], num_beams=2, num_return_sequences=1, max_new_tokens=8, no_repeat_ngram_size=0)
    assert out == [[""], [""]]


def test_tokens_bottleneck_handles_captions_of_different_lengths():
    model = tiny_sba(bottleneck="tokens")
    out = model.reconstruct(["a dog", CAPTIONS[2]], num_beams=2, num_return_sequences=2, max_new_tokens=6)
    assert [len(c) for c in out] == [2, 2]
    assert model(**_batch(model)).loss.isfinite()


def test_save_writes_only_trainable_weights_and_load_restores_them(components, tmp_path):
    model = SBAForCaptionReconstruction.from_components(components["text_model"], components["lm"])
    with torch.no_grad():
        model.projector.linear.weight.normal_()
    model.save_pretrained(tmp_path / "sba")
    saved = load_file(str(tmp_path / "sba" / WEIGHTS_NAME))
    assert set(saved) == {"projector.linear.weight", "projector.linear.bias"}
    loaded = SBAForCaptionReconstruction.from_pretrained(tmp_path / "sba")
    assert loaded.config.lm_name_or_path == str(components["lm"].resolve())
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(loaded.state_dict()[name], tensor, rtol=0, atol=0)
    kwargs = dict(num_beams=3, num_return_sequences=3, max_new_tokens=8)
    assert loaded.reconstruct(CAPTIONS[:2], **kwargs) == model.reconstruct(CAPTIONS[:2], **kwargs)


def test_loading_refuses_weights_of_another_shape(components, tmp_path):
    tiny = SBAForCaptionReconstruction.from_components(components["text_model"], components["lm"], num_soft_tokens=2)
    tiny.save_pretrained(tmp_path / "two_tokens")
    model = SBAForCaptionReconstruction.from_components(components["text_model"], components["lm"], lora_r=2)
    with pytest.raises(ValueError, match="does not match"):
        model.load_trainable_weights(tmp_path / "two_tokens" / WEIGHTS_NAME)


def test_trainer_run_saves_a_loadable_projector(components, tmp_path):
    model = SBAForCaptionReconstruction.from_components(components["text_model"], components["lm"])
    before = model.projector.linear.weight.detach().clone()
    config = SBATrainingConfig(batch_size=4, per_device_batch_size=2, max_steps=3, save_steps=2, logging_steps=1)
    metrics = train_sba(model, CAPTIONS * 2, tmp_path / "run", config)
    assert metrics["train_loss"] > 0
    assert (tmp_path / "run" / "checkpoint-2").is_dir()
    loaded = SBAForCaptionReconstruction.from_pretrained(tmp_path / "run")
    assert not torch.equal(loaded.projector.linear.weight, before)
    torch.testing.assert_close(loaded.projector.linear.weight, model.projector.linear.weight)
