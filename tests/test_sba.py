"""The SBA: frozen towers, caption-only loss, training, beam reconstruction, saving and loading like an adapter."""

import json
from pathlib import Path

import pytest
import torch
from checkpoint_edits import copy_checkpoint, without
from safetensors.torch import load_file, save_file
from transformers import AutoModelForCausalLM, CLIPTextModelWithProjection

from modeling_icc.models.sba.modeling_sba import IGNORE_INDEX, paper_generation_config
from modeling_icc.teachers import SBAComponents, SBAConfig, SBAForCaptionReconstruction, SBAPipeline
from modeling_icc.testing.baselines import save_tiny_clip
from modeling_icc.testing.teachers import save_tiny_sba_components, tiny_sba
from modeling_icc.training.sba_projector import ProjectorTrainingArguments, SBACollator, train_sba
from modeling_icc.utils.errors import CheckpointError

pytestmark = pytest.mark.usefixtures("single_thread")

CAPTIONS = [
    "a brown dog running on a sandy beach",
    "two red apples on a wooden table",
    "a man riding a bicycle down the street",
    "the best way to think about money",
]
PROJECTOR = {"projector.linear.weight", "projector.linear.bias"}


def _batch(sba, captions=CAPTIONS):
    return SBACollator(sba.text_tokenizer, sba.lm_tokenizer)(captions)


@pytest.fixture(scope="module")
def components(tmp_path_factory):
    paths = save_tiny_sba_components(tmp_path_factory.mktemp("sba_components"))
    return SBAComponents(text_model=str(paths["text_model"]), lm=str(paths["lm"]))


def test_only_the_projector_trains():
    model = tiny_sba().model
    trainable = {name for name, param in model.named_parameters() if param.requires_grad}
    assert trainable == {"projector.linear.weight", "projector.linear.bias"}
    model.train()
    assert model.projector.training and not model.text_model.training and not model.lm.training


def test_lora_adds_only_adapter_weights_to_the_trainable_set():
    model = tiny_sba(lora_r=4).model
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
    sba = tiny_sba()
    batch = _batch(sba)
    output = sba.model(**batch)
    prefix_len = output.logits.shape[1] - batch["input_ids"].shape[1]
    # position t predicts token t+1: the logits before each caption token, caption padding excluded
    logits = output.logits[:, prefix_len - 1 : -1].float()
    labels = batch["labels"]
    expected = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE_INDEX
    )
    torch.testing.assert_close(output.loss, expected, rtol=1e-4, atol=1e-5)
    assert (labels == IGNORE_INDEX).any(), "shorter captions are padded and their padding is masked"
    newline = sba.lm_tokenizer("\n", add_special_tokens=False)["input_ids"][-1]
    lengths = batch["attention_mask"].sum(1)
    assert all(batch["input_ids"][row, n - 1] == newline for row, n in enumerate(lengths.tolist()))


def test_padding_does_not_change_a_captions_loss():
    sba = tiny_sba()
    alone = sba.model(**_batch(sba, [CAPTIONS[1]])).loss
    with_longer = _batch(sba, [CAPTIONS[1], CAPTIONS[2] + " and a very long tail of extra words"])
    out = sba.model(**with_longer)
    n = with_longer["attention_mask"][0].sum()
    prefix_len = out.logits.shape[1] - with_longer["input_ids"].shape[1]
    logits = out.logits[0, prefix_len - 1 : prefix_len - 1 + n]
    first = torch.nn.functional.cross_entropy(logits.float(), with_longer["labels"][0, :n])
    torch.testing.assert_close(first, alone, rtol=1e-4, atol=1e-5)


def test_a_few_steps_on_four_captions_lower_the_loss():
    sba = tiny_sba(seed=1)
    model, batch = sba.model, _batch(sba)
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


def test_decoding_defaults_are_the_papers():
    config = tiny_sba().model.generation_config
    assert (config.num_beams, config.num_return_sequences, config.no_repeat_ngram_size) == (5, 5, 2)
    assert (config.stop_strings, config.do_sample, config.max_new_tokens) == ("\n", False, 64)


def test_reconstruct_returns_five_single_line_candidates():
    sba = tiny_sba()
    out = sba.reconstruct(CAPTIONS[:3], max_new_tokens=12)
    assert len(out) == 3
    assert all(len(candidates) == 5 for candidates in out)
    assert all(isinstance(c, str) and "\n" not in c for candidates in out for c in candidates)
    assert sba.reconstruct([]) == []
    with pytest.raises(ValueError, match="GenerationConfig"):
        tiny_sba(generation={"num_beemz": 3})


class _AlwaysPredicts(torch.nn.Module):
    """An LM head whose every prediction is one token."""

    def __init__(self, token_id: int, vocab_size: int) -> None:
        super().__init__()
        self.token_id, self.vocab_size = token_id, vocab_size

    def forward(self, hidden):
        logits = torch.zeros(*hidden.shape[:-1], self.vocab_size, dtype=hidden.dtype)
        logits[..., self.token_id] = 10.0
        return logits


@pytest.mark.parametrize("text", ["\n", "ab\ncd"])
def test_reconstruct_stops_at_any_token_holding_a_newline(text):
    sba = tiny_sba()
    sba.lm_tokenizer.add_tokens([text])
    sba.model.lm.resize_token_embeddings(len(sba.lm_tokenizer))
    token = sba.lm_tokenizer.convert_tokens_to_ids(text)
    sba.model.lm.lm_head = _AlwaysPredicts(token, len(sba.lm_tokenizer))
    generation = dict(num_beams=2, num_return_sequences=1, max_new_tokens=8, no_repeat_ngram_size=0)
    assert sba.reconstruct(CAPTIONS[:2], **generation) == [[text.split("\n")[0]]] * 2


def test_tokens_bottleneck_handles_captions_of_different_lengths():
    sba = tiny_sba(bottleneck="tokens")
    out = sba.reconstruct(["a dog", CAPTIONS[2]], num_beams=2, num_return_sequences=2, max_new_tokens=6)
    assert [len(c) for c in out] == [2, 2]
    assert sba.model(**_batch(sba)).loss.isfinite()


def test_pretrained_towers_compute_what_they_compute_alone(components):
    """Building the composite must leave the towers' attention as loaded (it once silently broke it)."""
    model = SBAForCaptionReconstruction.from_components(components.text_model, components.lm)
    text_model = CLIPTextModelWithProjection.from_pretrained(components.text_model)
    lm = AutoModelForCausalLM.from_pretrained(components.lm)
    ids, mask = (
        torch.tensor([[0, 37, 86, 68, 263, 1, 1], [0, 37, 86, 68, 263, 74, 1]]),
        torch.ones(2, 7, dtype=torch.long),
    )
    mask[0, -1] = 0
    torch.testing.assert_close(
        model.text_model(input_ids=ids, attention_mask=mask).text_embeds,
        text_model(input_ids=ids, attention_mask=mask).text_embeds,
    )
    embeds, mask = torch.randn(2, 5, lm.config.hidden_size), torch.tensor([[0, 1, 1, 1, 1], [1, 1, 1, 1, 1]])
    torch.testing.assert_close(
        model.lm(inputs_embeds=embeds, attention_mask=mask).logits, lm(inputs_embeds=embeds, attention_mask=mask).logits
    )


def test_save_writes_only_the_projector_and_load_rebuilds_the_rest(components, tmp_path):
    sba = SBAPipeline.from_components(components)
    with torch.no_grad():
        sba.model.projector.linear.weight.normal_()
    sba.model.generation_config.max_new_tokens = 8
    sba.model.save_pretrained(tmp_path / "sba")
    assert sorted(p.name for p in (tmp_path / "sba").iterdir()) == [
        "config.json",
        "generation_config.json",
        "model.safetensors",
    ]
    assert set(load_file(str(tmp_path / "sba" / "model.safetensors"))) == PROJECTOR
    loaded = SBAPipeline.from_pretrained(tmp_path / "sba", dtype="float32")
    assert loaded.model.config.lm_name_or_path == components.lm
    assert loaded.model.generation_config.max_new_tokens == 8 and loaded.model.generation_config.num_beams == 5
    for name, tensor in sba.model.state_dict().items():
        torch.testing.assert_close(loaded.model.state_dict()[name], tensor, rtol=0, atol=0)
    beams = dict(num_beams=3, num_return_sequences=3)
    assert loaded.reconstruct(CAPTIONS[:2], **beams) == sba.reconstruct(CAPTIONS[:2], **beams)


def test_a_hub_id_loads_from_the_hub_cache(components, tmp_path):
    SBAPipeline.from_components(components).model.save_pretrained(tmp_path / "saved")
    snapshot = tmp_path / "cache" / "models--org--sba" / "snapshots" / ("0" * 40)
    snapshot.parent.mkdir(parents=True)
    (tmp_path / "saved").rename(snapshot)
    (tmp_path / "cache" / "models--org--sba" / "refs").mkdir()
    (tmp_path / "cache" / "models--org--sba" / "refs" / "main").write_text("0" * 40)
    sba = SBAPipeline.from_pretrained("org/sba", cache_dir=tmp_path / "cache")
    assert set(sba.model.trainable_state_dict()) == PROJECTOR


def test_save_pretrained_pushes_what_it_saves(components, tmp_path, monkeypatch):
    model = SBAPipeline.from_components(components).model
    pushed = {}

    class FakeApi:
        def create_repo(self, repo_id, **kwargs):
            return type("Repo", (), {"repo_id": repo_id})

    def upload(self, working_dir, repo_id, files_timestamps, **kwargs):
        pushed[repo_id] = sorted(p.name for p in Path(working_dir).iterdir() if p.name != "README.md")

    monkeypatch.setattr("transformers.modeling_utils.hf_api", FakeApi)
    monkeypatch.setattr("transformers.utils.hub.hf_api", FakeApi)
    monkeypatch.setattr(SBAForCaptionReconstruction, "_upload_modified_files", upload)
    model.save_pretrained(tmp_path / "sba", push_to_hub=True, repo_id="org/sba")
    model.push_to_hub("org/sba2")
    files = ["config.json", "generation_config.json", "model.safetensors"]
    assert pushed == {"org/sba": files, "org/sba2": files}


def test_a_projector_saved_before_generation_configs_loads(components, tmp_path):
    """The format before this version: config.json + the trainable tensors, no generation_config.json."""
    text_model = CLIPTextModelWithProjection.from_pretrained(components.text_model)
    lm = AutoModelForCausalLM.from_pretrained(components.lm)
    config = SBAConfig(
        text_config=text_model.config,
        lm_config=lm.config,
        text_model_name_or_path=components.text_model,
        lm_name_or_path=components.lm,
        architectures=["SBAForCaptionReconstruction"],
    )
    config.save_pretrained(tmp_path / "old")
    weight = torch.randn(lm.config.hidden_size, text_model.config.projection_dim)
    tensors = {"projector.linear.weight": weight, "projector.linear.bias": torch.zeros(lm.config.hidden_size)}
    save_file(tensors, str(tmp_path / "old" / "model.safetensors"), metadata={"format": "pt"})
    sba = SBAPipeline.from_pretrained(tmp_path / "old")
    torch.testing.assert_close(sba.model.projector.linear.weight, weight, rtol=0, atol=0)
    assert sba.model.generation_config.to_dict() == paper_generation_config(lm.config).to_dict()


def test_loading_refuses_missing_or_unexpected_weights(components, tmp_path):
    SBAPipeline.from_components(components).model.save_pretrained(tmp_path / "sba")
    with pytest.raises(ValueError, match="does not match"):
        SBAForCaptionReconstruction.from_pretrained(tmp_path / "sba", num_soft_tokens=2)
    with pytest.raises(ValueError, match=r"missing \['lm\."):
        SBAForCaptionReconstruction.from_pretrained(tmp_path / "sba", lora_r=2)
    config = json.loads((tmp_path / "sba" / "config.json").read_text())
    del config["lm_name_or_path"]
    (tmp_path / "sba" / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="lm_name_or_path="):
        SBAForCaptionReconstruction.from_pretrained(tmp_path / "sba")


@pytest.mark.parametrize(
    ("tower", "weight"),
    [("text_model", "text_model.encoder.layers.1.mlp.fc1.weight"), ("lm", "model.layers.1.mlp.down_proj.weight")],
)
def test_a_tower_with_a_weight_missing_is_refused(components, tower, weight, tmp_path):
    """transformers would fill the weight randomly and only log it: every SBA score would be noise."""
    broken = copy_checkpoint(getattr(components, tower), tmp_path / tower, without(weight))
    paths = {"text_model": components.text_model, "lm": components.lm, tower: str(broken)}
    with pytest.raises(CheckpointError, match=rf"{tower}' does not match the model: 1 weights missing \(.*mlp"):
        SBAForCaptionReconstruction.from_components(**paths)


def test_the_text_tower_loads_from_a_full_clip_checkpoint(components, tmp_path):
    """The paper's tower comes from openai/clip-vit-large-patch14, image side included: that side is no error."""
    clip = save_tiny_clip(tmp_path / "clip")
    model = SBAForCaptionReconstruction.from_components(clip, components.lm)
    full = load_file(str(clip / "model.safetensors"))
    torch.testing.assert_close(model.text_model.text_projection.weight, full["text_projection.weight"])


def test_trainer_run_saves_a_loadable_projector(components, tmp_path):
    sba = SBAPipeline.from_components(components)
    before = sba.model.projector.linear.weight.detach().clone()
    args = ProjectorTrainingArguments(
        output_dir=str(tmp_path / "run"),
        per_device_train_batch_size=2,
        gradient_accumulation_steps=2,
        max_steps=3,
        save_steps=2,
        logging_steps=1,
    )
    metrics = train_sba(sba, CAPTIONS * 2, args)
    assert metrics["train_loss"] > 0
    assert set(load_file(str(tmp_path / "run" / "checkpoint-2" / "model.safetensors"))) == PROJECTOR
    loaded = SBAForCaptionReconstruction.from_pretrained(tmp_path / "run")
    assert not torch.equal(loaded.projector.linear.weight, before)
    torch.testing.assert_close(loaded.projector.linear.weight, sba.model.projector.linear.weight)


def test_projector_recipe_is_the_papers():
    args = ProjectorTrainingArguments()
    batch = args.per_device_train_batch_size * args.gradient_accumulation_steps
    assert (batch, args.learning_rate, args.lr_scheduler_type, args.warmup_steps) == (128, 2e-3, "cosine", 0.03)
    assert args.num_train_epochs == 2 and args.bf16 == (torch.cuda.is_available() and torch.cuda.is_bf16_supported())
