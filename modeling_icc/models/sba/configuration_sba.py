"""Configuration of the semantic-bottleneck autoencoder (SBA), composed like transformers' LLaVA."""

from __future__ import annotations

from typing import ClassVar

from transformers import AutoConfig, CLIPTextConfig, PreTrainedConfig
from transformers.configuration_utils import SubConfigSpec

BOTTLENECKS = ("pooled", "tokens")
#: CLIP ViT-L/14's text tower (the paper's encoder): 12 layers, 768 wide, 768-d projection.
CLIP_VIT_L14_TEXT = {
    "hidden_size": 768,
    "intermediate_size": 3072,
    "num_attention_heads": 12,
    "num_hidden_layers": 12,
    "projection_dim": 768,
}


class SBAConfig(PreTrainedConfig):
    """CLIP text tower (frozen) -> linear projector (trainable) -> causal LM (frozen).

    ``text_config`` is a ``CLIPTextConfig`` (CLIP ViT-L/14's by default) and
    ``lm_config`` any causal-LM config (Llama-2-7B's by default). ``bottleneck``:
    ``"pooled"`` feeds the pooled projected text embedding through one linear map
    to ``num_soft_tokens`` LM input embeddings (the paper: one); ``"tokens"`` maps
    every CLIP token state to one LM embedding each. ``text_model_name_or_path``
    and ``lm_name_or_path`` record where the frozen towers come from (ids or
    paths), so a saved SBA holds only its trainable weights, like a PEFT adapter.
    ``lora_r > 0`` adds LoRA adapters to the LM (an extension; the paper trains
    the projector alone).
    """

    model_type = "icc_sba"
    sub_configs_defaults: ClassVar[dict[str, SubConfigSpec]] = {
        "text_config": SubConfigSpec(config_class=CLIPTextConfig, init_kwargs=CLIP_VIT_L14_TEXT),
        "lm_config": SubConfigSpec(config_class=AutoConfig, model_type="llama"),
    }

    text_config: dict | PreTrainedConfig | None = None
    lm_config: dict | PreTrainedConfig | None = None
    bottleneck: str = "pooled"
    num_soft_tokens: int = 1
    text_model_name_or_path: str | None = None
    lm_name_or_path: str | None = None
    initializer_range: float = 0.02
    lora_r: int = 0
    lora_alpha: int = 16
    lora_dropout: float = 0.05
    lora_target_modules: list[str] | None = None

    def __post_init__(self, **kwargs):
        super().__post_init__(**kwargs)
        if self.bottleneck not in BOTTLENECKS:
            raise ValueError(f"bottleneck must be one of {BOTTLENECKS}, got {self.bottleneck!r}")
        if self.num_soft_tokens < 1:
            raise ValueError(f"num_soft_tokens must be at least 1, got {self.num_soft_tokens}")
        if self.bottleneck == "tokens" and self.num_soft_tokens != 1:
            raise ValueError("the 'tokens' bottleneck maps each CLIP token to one LM embedding; use num_soft_tokens=1")
        if self.lora_r < 0:
            raise ValueError(f"lora_r must be >= 0 (0 disables LoRA), got {self.lora_r}")

    @property
    def projector_in_features(self) -> int:
        if self.bottleneck == "pooled":
            return self.text_config.projection_dim
        return self.text_config.hidden_size

    @property
    def projector_out_features(self) -> int:
        return self.lm_config.hidden_size * self.num_soft_tokens
