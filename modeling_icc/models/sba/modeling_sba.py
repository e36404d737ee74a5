"""The semantic-bottleneck autoencoder (SBA): reconstruct a caption from its CLIP text embedding.

A frozen CLIP text tower encodes the caption; a trainable linear projector turns
the embedding into soft token(s) at the input of a frozen causal LM, which is
trained (through the projector only) to spell the caption back, ending with a
newline. How well a caption survives this bottleneck is the SBA teacher signal.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from torch import nn
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    CLIPTextModelWithProjection,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)
from transformers.modeling_outputs import CausalLMOutputWithPast

from .configuration_sba import SBAConfig

#: The trainable weights (projector, LoRA adapters), saved without the frozen components.
WEIGHTS_NAME = "model.safetensors"
IGNORE_INDEX = -100


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

    Build it from configs (random weights) with ``SBAForCaptionReconstruction(config)``,
    from pretrained components with :meth:`from_components`, or from a saved projector
    with :meth:`from_pretrained`. Text goes in and out through the two tokenizers set
    by :meth:`set_tokenizers` (the loaders set them).
    """

    def __init__(self, config: SBAConfig, text_model: nn.Module | None = None, lm: nn.Module | None = None) -> None:
        super().__init__(config)
        if text_model is None:
            text_model = CLIPTextModelWithProjection._from_config(config.text_config)
        self.text_model = text_model
        self.lm = lm if lm is not None else AutoModelForCausalLM.from_config(config.lm_config)
        self.projector = SBAProjector(config)
        self.text_model.requires_grad_(False)
        self.lm.requires_grad_(False)
        if config.lora_r:
            self.lm = _add_lora(self.lm, config)
        self.text_tokenizer: PreTrainedTokenizerBase | None = None
        self.lm_tokenizer: PreTrainedTokenizerBase | None = None
        self._newline_ids: list[int] | None = None
        self.post_init()

    # ----- construction and persistence -------------------------------------------------------

    @classmethod
    def from_components(
        cls,
        text_model: str | os.PathLike,
        lm: str | os.PathLike,
        *,
        dtype: torch.dtype | None = None,
        device: str | torch.device | None = None,
        local_files_only: bool | None = None,
        **config_kwargs,
    ) -> SBAForCaptionReconstruction:
        """A fresh SBA (untrained projector) over pretrained CLIP text tower and LM ids or paths."""
        text_model, lm = _as_id(text_model), _as_id(lm)
        load = {"local_files_only": local_files_only} if local_files_only is not None else {}
        text = CLIPTextModelWithProjection.from_pretrained(text_model, dtype=dtype, use_safetensors=True, **load)
        language_model = AutoModelForCausalLM.from_pretrained(lm, dtype=dtype, use_safetensors=True, **load)
        config = SBAConfig(
            text_config=text.config,
            lm_config=language_model.config,
            text_model_name_or_path=text_model,
            lm_name_or_path=lm,
            **config_kwargs,
        )
        model = cls(config, text_model=text.eval(), lm=language_model.eval())
        model.projector.float()
        model.set_tokenizers(
            AutoTokenizer.from_pretrained(text_model, **load), AutoTokenizer.from_pretrained(lm, **load)
        )
        return model.to(device) if device is not None else model

    @classmethod
    def from_pretrained(
        cls,
        pretrained_model_name_or_path: str | os.PathLike,
        *,
        text_model: str | os.PathLike | None = None,
        lm: str | os.PathLike | None = None,
        dtype: torch.dtype | None = None,
        device: str | torch.device | None = None,
        local_files_only: bool | None = None,
    ) -> SBAForCaptionReconstruction:
        """Load an SBA saved in a local directory: the components from their recorded ids (or the
        ``text_model``/``lm`` overrides, e.g. after moving them), then its trainable weights."""
        directory = Path(pretrained_model_name_or_path)
        saved = SBAConfig.from_pretrained(directory)
        text_model = text_model or saved.text_model_name_or_path
        lm = lm or saved.lm_name_or_path
        if not text_model or not lm:
            raise ValueError(
                f"{directory} does not record its CLIP text tower and LM; pass text_model= and lm= explicitly"
            )
        options = {
            key: getattr(saved, key)
            for key in (
                "bottleneck",
                "num_soft_tokens",
                "initializer_range",
                "lora_r",
                "lora_alpha",
                "lora_dropout",
                "lora_target_modules",
            )
        }
        model = cls.from_components(text_model, lm, dtype=dtype, local_files_only=local_files_only, **options)
        model.load_trainable_weights(directory / WEIGHTS_NAME)
        return model.to(device) if device is not None else model

    def trainable_state_dict(self) -> dict[str, torch.Tensor]:
        return {name: param.detach() for name, param in self.named_parameters() if param.requires_grad}

    def save_pretrained(self, save_directory: str | os.PathLike, **_trainer_options) -> None:
        """Write ``config.json`` and the trainable weights only (the frozen components are referenced).

        ``Trainer`` passes ``state_dict``/``is_main_process``; they do not apply to a
        projector-only save and are ignored.
        """
        directory = Path(save_directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.config.architectures = [type(self).__name__]
        self.config.save_pretrained(directory)
        tensors = {name: tensor.contiguous().cpu() for name, tensor in self.trainable_state_dict().items()}
        temp = directory / f".{WEIGHTS_NAME}.tmp"
        save_file(tensors, temp, metadata={"format": "pt", "contents": "trainable parameters of an ICC SBA"})
        os.replace(temp, directory / WEIGHTS_NAME)

    def load_trainable_weights(self, path: str | os.PathLike) -> None:
        """Load projector (and LoRA) weights; every trainable tensor must be present, nothing else."""
        state = load_file(str(path))
        expected = set(self.trainable_state_dict())
        if set(state) != expected:
            missing, unexpected = sorted(expected - set(state)), sorted(set(state) - expected)
            raise ValueError(f"{path} does not match this SBA: missing {missing[:5]}, unexpected {unexpected[:5]}")
        self.load_state_dict(state, strict=False)

    def set_tokenizers(self, text_tokenizer: PreTrainedTokenizerBase, lm_tokenizer: PreTrainedTokenizerBase) -> None:
        self.text_tokenizer = text_tokenizer
        self.lm_tokenizer = lm_tokenizer
        self._newline_ids = None

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

    # ----- reconstruction ---------------------------------------------------------------------

    def newline_token_ids(self) -> list[int]:
        """Every LM token whose text contains a newline: generation stops at any of them."""
        if self._newline_ids is None:
            tokenizer = self._require_tokenizers()[1]
            texts = tokenizer.batch_decode([[i] for i in range(len(tokenizer))])
            self._newline_ids = [i for i, text in enumerate(texts) if "\n" in text]
            if not self._newline_ids:
                raise ValueError("the LM tokenizer has no token containing a newline; SBA needs one to stop")
        return self._newline_ids

    @torch.inference_mode()
    def reconstruct(
        self,
        captions: list[str],
        num_beams: int = 5,
        num_return_sequences: int = 5,
        max_new_tokens: int = 64,
        no_repeat_ngram_size: int = 2,
        min_new_tokens: int | None = None,
    ) -> list[list[str]]:
        """For each caption, ``num_return_sequences`` beam-search reconstructions (best first).

        Decoding stops at the first newline (the training terminator) or the LM's end
        token; the newline and anything after it are dropped.
        """
        if num_return_sequences > num_beams:
            raise ValueError("num_return_sequences cannot exceed num_beams")
        if not captions:
            return []
        text_tokenizer, lm_tokenizer = self._require_tokenizers()
        device = self.projector.linear.weight.device
        encoded = text_tokenizer(
            list(captions),
            padding=True,
            truncation=True,
            max_length=self.config.text_config.max_position_embeddings,
            return_tensors="pt",
        ).to(device)
        prefix, mask = self.encode_bottleneck(encoded["input_ids"], encoded["attention_mask"])
        stop_ids = list(dict.fromkeys([*self.newline_token_ids(), *_as_list(self.config.lm_config.eos_token_id)]))
        pad_id = lm_tokenizer.pad_token_id if lm_tokenizer.pad_token_id is not None else stop_ids[0]
        with warnings.catch_warnings():
            # n-grams are meant to apply to the reconstruction only, which is what generate warns about
            warnings.filterwarnings("ignore", message=".*no_repeat_ngram_size.*inputs_embeds", category=UserWarning)
            generated = self.lm.generate(
                inputs_embeds=prefix,
                attention_mask=mask,
                num_beams=num_beams,
                num_return_sequences=num_return_sequences,
                max_new_tokens=max_new_tokens,
                min_new_tokens=min_new_tokens,
                no_repeat_ngram_size=no_repeat_ngram_size,
                do_sample=False,
                eos_token_id=stop_ids,
                pad_token_id=pad_id,
            )
        texts = [
            text.split("\n", 1)[0].strip() for text in lm_tokenizer.batch_decode(generated, skip_special_tokens=True)
        ]
        return [texts[i : i + num_return_sequences] for i in range(0, len(texts), num_return_sequences)]

    def _require_tokenizers(self) -> tuple[PreTrainedTokenizerBase, PreTrainedTokenizerBase]:
        if self.text_tokenizer is None or self.lm_tokenizer is None:
            raise ValueError("no tokenizers attached: load with from_components/from_pretrained or call set_tokenizers")
        return self.text_tokenizer, self.lm_tokenizer


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


def _as_id(name: str | os.PathLike) -> str:
    """Local folders are recorded as absolute paths so a saved SBA finds them from anywhere."""
    path = Path(name).expanduser()
    return str(path.resolve()) if path.exists() else os.fspath(name)


def _as_list(value: int | list[int] | None) -> list[int]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]
