"""The semantic-bottleneck autoencoder (SBA): reconstruct a caption from its CLIP text embedding.

A frozen CLIP text tower encodes the caption; a trainable linear projector turns
the embedding into soft token(s) at the input of a frozen causal LM, which is
trained (through the projector only) to spell the caption back, ending with a
newline. How well a caption survives this bottleneck is the SBA teacher signal.
"""

from __future__ import annotations

import copy
import os
import warnings
from pathlib import Path

import torch
from safetensors.torch import load_file
from torch import nn
from transformers import AutoModelForCausalLM, CLIPTextModelWithProjection, GenerationConfig, PreTrainedModel
from transformers.modeling_outputs import CausalLMOutputWithPast
from transformers.utils import SAFE_WEIGHTS_NAME, cached_file

from ...utils.checkpoints import CLIP_IMAGE_SIDE, load_complete
from .configuration_sba import SBAConfig

IGNORE_INDEX = -100
#: Download options that apply to the towers as well as to the SBA's own files.
HUB_KWARGS = ("cache_dir", "force_download", "local_files_only", "proxies", "token")


def paper_generation_config(lm_config) -> GenerationConfig:
    """The paper's decoding: beam search with 5 beams, the 5 best returned, no repeated bigram,
    stopping at the first newline (the training terminator) or the LM's end token."""
    eos, pad = lm_config.eos_token_id, lm_config.pad_token_id
    if pad is None:  # Llama has none; finished beams are padded with the end token
        pad = eos[0] if isinstance(eos, list) else eos
    return GenerationConfig(
        num_beams=5,
        num_return_sequences=5,
        no_repeat_ngram_size=2,
        max_new_tokens=64,
        stop_strings="\n",
        do_sample=False,
        bos_token_id=lm_config.bos_token_id,
        eos_token_id=eos,
        pad_token_id=pad,
    )


class SBAProjector(nn.Module):
    """One linear map from CLIP features to ``num_soft_tokens`` LM input embeddings."""

    def __init__(self, config: SBAConfig) -> None:
        super().__init__()
        self.num_soft_tokens = config.num_soft_tokens
        self.linear = nn.Linear(config.projector_in_features, config.projector_out_features)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        projected = self.linear(features.to(self.linear.weight.dtype))
        if features.dim() == 2:  # pooled: (batch, k * hidden) -> (batch, k, hidden)
            return projected.view(features.shape[0], self.num_soft_tokens, -1)
        return projected  # tokens: (batch, seq, hidden)


class SBAPreTrainedModel(PreTrainedModel):
    config_class = SBAConfig
    config: SBAConfig
    base_model_prefix = "sba"
    supports_gradient_checkpointing = True
    _supports_sdpa = True

    def _init_weights(self, module: nn.Module) -> None:
        if isinstance(module, SBAProjector):
            nn.init.normal_(module.linear.weight, std=self.config.initializer_range)
            nn.init.zeros_(module.linear.bias)


class SBAForCaptionReconstruction(SBAPreTrainedModel):
    """CLIP text tower (frozen) -> :class:`SBAProjector` (trainable) -> causal LM (frozen).

    ``SBAForCaptionReconstruction(config)`` builds random towers from the sub-configs;
    :meth:`from_components` puts a fresh projector on pretrained towers. Saved like a
    PEFT adapter: ``save_pretrained``/``push_to_hub`` write ``config.json`` (with the
    towers' ids), ``generation_config.json`` (the paper's decoding) and the trainable
    tensors only; :meth:`from_pretrained` (a local folder or a Hub id) rebuilds the towers
    from their ids and loads those tensors, refusing missing or unexpected ones.
    Tokenizers and text in/out live in ``modeling_icc.teachers.SBAPipeline``.
    """

    def __init__(self, config: SBAConfig) -> None:
        super().__init__(config)
        self.text_model = CLIPTextModelWithProjection._from_config(config.text_config)
        self.lm = AutoModelForCausalLM.from_config(config.lm_config)
        self.projector = SBAProjector(config)
        self.generation_config = paper_generation_config(config.lm_config)
        self.post_init()
        self._freeze_towers()

    @classmethod
    def can_generate(cls) -> bool:
        return True  # generate() decodes through the LM; its GenerationConfig is saved with the model

    def _freeze_towers(self) -> None:
        self.text_model.requires_grad_(False).eval()
        self.lm.requires_grad_(False).eval()
        if self.config.lora_r:
            self.lm = _add_lora(self.lm, self.config)

    # ----- construction and persistence -------------------------------------------------------

    @classmethod
    def from_components(
        cls, text_model: str | os.PathLike, lm: str | os.PathLike, **kwargs
    ) -> SBAForCaptionReconstruction:
        """A fresh SBA (untrained projector) over a pretrained CLIP text tower and causal LM (ids or paths).

        ``kwargs``: ``SBAConfig`` fields (``bottleneck``, ``num_soft_tokens``, ``lora_r``, ...);
        the rest (``dtype``, ``local_files_only``, ``token``, ...) go to the towers' ``from_pretrained``.
        """
        options = _pop_config_fields(kwargs)
        config = SBAConfig(text_model_name_or_path=_as_id(text_model), lm_name_or_path=_as_id(lm), **options)
        return cls._on_pretrained_towers(config, **kwargs)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: str | os.PathLike, **kwargs) -> SBAForCaptionReconstruction:
        """Rebuild the frozen towers from the ids the config records, then load the trained projector.

        ``kwargs`` as for ``PreTrainedModel.from_pretrained``: config fields override the saved
        ones (e.g. ``lm_name_or_path=`` after moving the LM); ``revision``/``subfolder`` locate
        the SBA's own files; download options and the rest (``dtype``, ...) apply to the towers too.
        """
        hub = {key: kwargs.pop(key) for key in HUB_KWARGS if key in kwargs}
        location = {key: kwargs.pop(key) for key in ("revision", "subfolder") if key in kwargs}
        config = SBAConfig.from_pretrained(
            pretrained_model_name_or_path, **hub, **location, **_pop_config_fields(kwargs)
        )
        if not config.text_model_name_or_path or not config.lm_name_or_path:
            raise ValueError(
                f"{pretrained_model_name_or_path} does not record its CLIP text tower and LM; "
                "pass text_model_name_or_path= and lm_name_or_path="
            )
        weights = cached_file(pretrained_model_name_or_path, SAFE_WEIGHTS_NAME, **hub, **location)
        model = cls._on_pretrained_towers(config, **hub, **kwargs)
        model.load_trainable_weights(weights)
        generation = cached_file(
            pretrained_model_name_or_path,
            "generation_config.json",
            _raise_exceptions_for_missing_entries=False,
            **hub,
            **location,
        )
        if generation is not None:  # SBAs saved before decoding settings were saved use the paper's
            model.generation_config = GenerationConfig.from_pretrained(os.path.dirname(generation))
        return model

    @classmethod
    def _on_pretrained_towers(cls, config: SBAConfig, **kwargs) -> SBAForCaptionReconstruction:
        """The frozen towers, loaded strictly: a weight missing from either checkpoint is a CheckpointError."""
        text_model = load_complete(
            CLIPTextModelWithProjection.from_pretrained,
            config.text_model_name_or_path,
            allowed_unexpected=CLIP_IMAGE_SIDE,
            use_safetensors=True,
            **kwargs,
        )
        lm = load_complete(AutoModelForCausalLM.from_pretrained, config.lm_name_or_path, use_safetensors=True, **kwargs)
        # copies: building the composite must not touch the live towers' configs (their attention dispatch)
        config.text_config, config.lm_config = copy.deepcopy(text_model.config), copy.deepcopy(lm.config)
        with torch.device("meta"):  # the towers built by __init__ are replaced: never materialize them
            model = cls(config)
        model.text_model, model.lm = text_model, lm
        model._freeze_towers()
        model.projector = SBAProjector(config).to(lm.get_input_embeddings().weight.device)
        model._init_weights(model.projector)
        return model

    def trainable_state_dict(self) -> dict[str, torch.Tensor]:
        return {name: param.detach() for name, param in self.named_parameters() if param.requires_grad}

    def save_pretrained(self, save_directory: str | os.PathLike, state_dict: dict | None = None, **kwargs) -> None:
        """``PreTrainedModel.save_pretrained`` (``push_to_hub=`` and every other option included)
        restricted to the trainable tensors; the frozen towers are referenced by their ids."""
        trainable = self.trainable_state_dict()
        if state_dict is not None:  # the Trainer passes the full state dict it gathered
            trainable = {name: tensor for name, tensor in state_dict.items() if name in trainable}
        super().save_pretrained(save_directory, state_dict=trainable, **kwargs)

    def load_trainable_weights(self, path: str | os.PathLike) -> None:
        """Load projector (and LoRA) weights; every trainable tensor must be present, in its shape, nothing else."""
        state = load_file(os.fspath(path))
        expected = {name: tensor.shape for name, tensor in self.trainable_state_dict().items()}
        if {name: tensor.shape for name, tensor in state.items()} != expected:
            missing, unexpected = sorted(expected.keys() - state.keys()), sorted(state.keys() - expected.keys())
            reshaped = sorted(name for name in expected.keys() & state.keys() if state[name].shape != expected[name])
            raise ValueError(
                f"{path} does not match this SBA: missing {missing[:5]}, unexpected {unexpected[:5]}, "
                f"other shape {reshaped[:5]}"
            )
        self.load_state_dict(state, strict=False)

    def train(self, mode: bool = True) -> SBAForCaptionReconstruction:
        """Only the trainable parts switch mode: the frozen towers stay in eval (no dropout)."""
        super().train(mode)
        self.text_model.eval()
        if not self.config.lora_r:
            self.lm.eval()
        return self

    # ----- the bottleneck ---------------------------------------------------------------------

    def encode_bottleneck(
        self, text_input_ids: torch.LongTensor, text_attention_mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """LM prefix embeddings ``(batch, P, hidden)`` and mask: [BOS] + soft token(s), left-padded."""
        with torch.no_grad():
            encoded = self.text_model(input_ids=text_input_ids, attention_mask=text_attention_mask)
        batch = text_input_ids.shape[0]
        if self.config.bottleneck == "pooled":
            soft = self.projector(encoded.text_embeds)
            soft_mask = torch.ones(soft.shape[:2], dtype=torch.long, device=soft.device)
        else:
            soft = self.projector(encoded.last_hidden_state)
            soft_mask = (
                text_attention_mask.long()
                if text_attention_mask is not None
                else torch.ones(soft.shape[:2], dtype=torch.long, device=soft.device)
            )
            soft, soft_mask = _left_align(soft, soft_mask)
        embeddings = self.lm.get_input_embeddings()
        soft = soft.to(embeddings.weight.dtype)
        bos_id = self.config.lm_config.bos_token_id
        if bos_id is None:
            return soft, soft_mask
        bos = embeddings(torch.full((batch, 1), bos_id, dtype=torch.long, device=soft.device))
        bos_mask = torch.ones((batch, 1), dtype=torch.long, device=soft.device)
        prefix, mask = torch.cat([bos, soft], dim=1), torch.cat([bos_mask, soft_mask], dim=1)
        if self.config.bottleneck == "tokens":
            prefix, mask = _left_align(prefix, mask)
        return prefix, mask

    def forward(
        self,
        input_ids: torch.LongTensor,
        text_input_ids: torch.LongTensor,
        attention_mask: torch.Tensor | None = None,
        text_attention_mask: torch.Tensor | None = None,
        labels: torch.LongTensor | None = None,
        **kwargs,
    ) -> CausalLMOutputWithPast:
        """Next-token loss on the caption tokens (``input_ids``); the prefix is never a target.

        ``input_ids`` are the LM tokens of ``caption + "\\n"`` (right-padded),
        ``labels`` the same ids with padding set to -100.
        """
        prefix, prefix_mask = self.encode_bottleneck(text_input_ids, text_attention_mask)
        caption_embeds = self.lm.get_input_embeddings()(input_ids)
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        mask = torch.cat([prefix_mask, attention_mask.to(prefix_mask.dtype)], dim=1)
        position_ids = (mask.cumsum(dim=1) - 1).clamp(min=0)
        full_labels = None
        if labels is not None:
            ignored = torch.full(prefix_mask.shape, IGNORE_INDEX, dtype=labels.dtype, device=labels.device)
            full_labels = torch.cat([ignored, labels], dim=1)
        return self.lm(
            inputs_embeds=torch.cat([prefix, caption_embeds], dim=1),
            attention_mask=mask,
            position_ids=position_ids,
            labels=full_labels,
            use_cache=False,
        )

    @torch.inference_mode()
    def generate(
        self, text_input_ids: torch.LongTensor, text_attention_mask: torch.Tensor | None = None, **kwargs
    ) -> torch.LongTensor:
        """LM token ids decoded from each caption's bottleneck with ``self.generation_config``
        (``kwargs`` override it; the newline stop needs ``tokenizer=`` the LM's tokenizer)."""
        prefix, mask = self.encode_bottleneck(text_input_ids, text_attention_mask)
        generation_config = copy.deepcopy(kwargs.pop("generation_config", self.generation_config))
        kwargs = generation_config.update(**kwargs)  # what is left are model inputs such as tokenizer=
        with warnings.catch_warnings():
            # n-grams are meant to apply to the reconstruction only, which is what generate warns about
            warnings.filterwarnings("ignore", message=".*no_repeat_ngram_size.*inputs_embeds", category=UserWarning)
            return self.lm.generate(
                inputs_embeds=prefix, attention_mask=mask, generation_config=generation_config, **kwargs
            )


def _left_align(embeds: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Move each row's valid positions to the right end (left padding), as ``generate`` expects."""
    order = torch.argsort(mask, dim=1, stable=True)
    return embeds.gather(1, order.unsqueeze(-1).expand_as(embeds)), mask.gather(1, order)


def _add_lora(lm: nn.Module, config: SBAConfig) -> nn.Module:
    from peft import LoraConfig, get_peft_model

    lora = LoraConfig(
        r=config.lora_r,
        lora_alpha=config.lora_alpha,
        lora_dropout=config.lora_dropout,
        target_modules=config.lora_target_modules or ["q_proj", "v_proj"],
        task_type="CAUSAL_LM",
    )
    return get_peft_model(lm, lora)


def _pop_config_fields(kwargs: dict) -> dict:
    """The ``SBAConfig`` fields among ``kwargs`` (removed from it); the rest are for the towers."""
    return {key: kwargs.pop(key) for key in list(kwargs) if key in SBAConfig.__annotations__}


def _as_id(name: str | os.PathLike) -> str:
    """Local folders are recorded as absolute paths so a saved SBA finds them from anywhere."""
    path = Path(name).expanduser()
    return str(path.resolve()) if path.exists() else os.fspath(name)
