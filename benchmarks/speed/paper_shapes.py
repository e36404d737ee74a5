"""The paper's teacher architectures at full size with random weights, for the GPU speed benchmarks.

Random weights cost the same FLOPs as trained ones, so throughput measured on
these equals the real models' (given fixed output lengths). Tokenizers are the
offline byte-level BPEs of :mod:`modeling_icc.testing.teachers`; their ids fit
every vocabulary here. Models are created directly on ``device`` in ``dtype``,
never materialized in fp32 on the host.
"""

from __future__ import annotations

import torch
from transformers import Blip2Config, CLIPTextConfig, LlamaConfig, RobertaConfig

from modeling_icc.testing.teachers import (
    build_blip2,
    build_text_to_image,
    built_on,
    opt_blip2_config,
    special_token_ids,
    tiny_clip_tokenizer,
    tiny_llama_tokenizer,
)

#: Llama-2-7B: 32 layers, 4096 wide, 32 heads, MLP 11008, vocabulary 32000.
LLAMA2_7B = dict(
    vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32
)
#: Stable Diffusion 2 (768-v): UNet with linear-projection transformers, OpenCLIP ViT-H/14 text encoder.
SD2_UNET = dict(
    sample_size=96,
    layers_per_block=2,
    block_out_channels=(320, 640, 1280, 1280),
    down_block_types=("CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"),
    up_block_types=("UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"),
    attention_head_dim=(5, 10, 20, 20),
    use_linear_projection=True,
    upcast_attention=True,
)
SD2_VAE = dict(
    down_block_types=("DownEncoderBlock2D",) * 4,
    up_block_types=("UpDecoderBlock2D",) * 4,
    block_out_channels=(128, 256, 512, 512),
    layers_per_block=2,
    sample_size=768,
    scaling_factor=0.18215,
)
OPENCLIP_H_TEXT = dict(
    vocab_size=49408,
    hidden_size=1024,
    intermediate_size=4096,
    num_attention_heads=16,
    num_hidden_layers=23,
    projection_dim=512,
    hidden_act="gelu",
)
BLIP2_IMAGE_SIZE = 224


def paper_sba(device: str | torch.device, dtype: torch.dtype):
    """CLIP ViT-L/14 text tower + projector + Llama-2-7B, random weights, in an SBAPipeline."""
    from modeling_icc.teachers import SBAConfig, SBAForCaptionReconstruction, SBAPipeline

    text_tokenizer, lm_tokenizer = tiny_clip_tokenizer(), tiny_llama_tokenizer()
    config = SBAConfig(
        text_config={
            **special_token_ids(text_tokenizer),
            **SBAConfig.sub_configs_defaults["text_config"].init_kwargs,
        },
        lm_config=LlamaConfig(**LLAMA2_7B, bos_token_id=lm_tokenizer.bos_token_id, eos_token_id=2),
    )
    with built_on(device, dtype):
        model = SBAForCaptionReconstruction(config)
    return SBAPipeline(model, text_tokenizer, lm_tokenizer)


def paper_text_to_image(device: str | torch.device, dtype: torch.dtype):
    """Stable Diffusion 2 (768 px) shapes: UNet 865M, VAE 84M, OpenCLIP-H text encoder 354M."""
    tokenizer = tiny_clip_tokenizer()
    text_config = CLIPTextConfig(
        **OPENCLIP_H_TEXT,
        **special_token_ids(tokenizer),
    )
    return build_text_to_image(SD2_UNET, SD2_VAE, text_config, tokenizer, device, dtype)


def blip2_opt27b_config() -> Blip2Config:
    """BLIP-2 OPT-2.7B: EVA ViT-g/14 (1408 wide, 39 layers), Q-Former (32 queries), OPT-2.7B."""
    vision = dict(
        hidden_size=1408,
        intermediate_size=6144,
        num_hidden_layers=39,
        num_attention_heads=16,
        image_size=BLIP2_IMAGE_SIZE,
        patch_size=14,
        qkv_bias=True,
    )
    qformer = dict(
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=3072,
        encoder_hidden_size=1408,
        cross_attention_frequency=2,
    )
    opt = dict(
        vocab_size=50272,
        hidden_size=2560,
        ffn_dim=10240,
        num_hidden_layers=32,
        num_attention_heads=32,
        word_embed_proj_dim=2560,
        max_position_embeddings=2048,
    )
    return opt_blip2_config(vision, qformer, opt, num_query_tokens=32)


def paper_blip2(device: str | torch.device, dtype: torch.dtype):
    with built_on(device, dtype):
        return build_blip2(blip2_opt27b_config(), BLIP2_IMAGE_SIZE)


def roberta_large_config() -> RobertaConfig:
    """RoBERTa-large, BERTScore's default English model (layer 17 of 24 is used)."""
    return RobertaConfig(
        vocab_size=50265,
        hidden_size=1024,
        num_hidden_layers=24,
        num_attention_heads=16,
        intermediate_size=4096,
        max_position_embeddings=514,
        type_vocab_size=1,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
    )
