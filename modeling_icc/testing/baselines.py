"""Tiny random models for the model-based baselines: CLIP (text + vision), a causal LM, and a
Stable-Diffusion-shaped text-to-image pipeline, each saved to a directory that the baselines
load exactly as they load real checkpoints."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

from .student import training_corpus

CLIP_BOS, CLIP_EOS = "<|startoftext|>", "<|endoftext|>"
LM_BOS, LM_EOS, LM_PAD = "<s>", "</s>", "<pad>"
#: Texts beyond the shipped captions that the tiny tokenizers must spell: prompts and answers.
EXTRA_TEXTS = (
    "You are a visual expert. Rate how concrete the caption is. Answer with a single integer. "
    "1 2 3 4 5 6 7 8 9 10 Rating: Caption: A photo depicts a photo of an image of a picture of",
)


@lru_cache(maxsize=4)
def _bpe_json(special_tokens: tuple[str, ...], vocab_size: int) -> str:
    tokenizer = Tokenizer(models.BPE(unk_token=special_tokens[-1]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(training_corpus() + list(EXTRA_TEXTS), trainer=trainer)
    bos, eos = special_tokens[0], special_tokens[1]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}" if bos == CLIP_BOS else f"{bos} $A",
        special_tokens=[(bos, tokenizer.token_to_id(bos)), (eos, tokenizer.token_to_id(eos))],
    )
    return tokenizer.to_str()


def tiny_clip_tokenizer(vocab_size: int = 512) -> PreTrainedTokenizerFast:
    """CLIP-style byte-level BPE: ``<|startoftext|> text <|endoftext|>``, padded with the end token."""
    return PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(_bpe_json((CLIP_BOS, CLIP_EOS, "<|unk|>"), vocab_size)),
        bos_token=CLIP_BOS,
        eos_token=CLIP_EOS,
        pad_token=CLIP_EOS,
        unk_token="<|unk|>",
        model_max_length=77,
    )


def tiny_lm_tokenizer(vocab_size: int = 512) -> PreTrainedTokenizerFast:
    """Llama-style tokenizer (BOS prepended, left padding for batched generation)."""
    return PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(_bpe_json((LM_BOS, LM_EOS, LM_PAD, "<unk>"), vocab_size)),
        bos_token=LM_BOS,
        eos_token=LM_EOS,
        pad_token=LM_PAD,
        unk_token="<unk>",
        padding_side="left",
        model_max_length=512,
    )


def tiny_clip_text_kwargs(vocab_size: int = 512) -> dict:
    tokenizer = tiny_clip_tokenizer(vocab_size)
    return dict(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        max_position_embeddings=77,
        projection_dim=16,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )


def save_tiny_clip(directory: str | Path, seed: int = 0) -> Path:
    """A 2-layer CLIP (text + 32-px vision towers) with tokenizer and image processor."""
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

    directory = Path(directory)
    torch.manual_seed(seed)
    vision = dict(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=32,
        patch_size=8,
        projection_dim=16,
    )
    config = CLIPConfig(text_config=tiny_clip_text_kwargs(), vision_config=vision, projection_dim=16)
    CLIPModel(config).eval().save_pretrained(directory)
    tiny_clip_tokenizer().save_pretrained(directory)
    CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(directory)
    return directory


def save_tiny_causal_lm(directory: str | Path, seed: int = 0) -> Path:
    """A 2-layer Llama with its tokenizer (random weights: answers are noise, the code path is real)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    directory = Path(directory)
    tokenizer = tiny_lm_tokenizer()
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    LlamaForCausalLM(config).eval().save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def save_tiny_text_to_image(directory: str | Path, seed: int = 0) -> Path:
    """A Stable-Diffusion-shaped pipeline (UNet, VAE, CLIP text encoder, DPM-Solver) making 32-px images."""
    from diffusers import AutoencoderKL, DPMSolverMultistepScheduler, StableDiffusionPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel

    directory = Path(directory)
    torch.manual_seed(seed)
    unet = UNet2DConditionModel(
        sample_size=8,
        in_channels=4,
        out_channels=4,
        layers_per_block=1,
        block_out_channels=(32, 64),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=32,
        attention_head_dim=8,
        norm_num_groups=32,
    )
    vae = AutoencoderKL(
        in_channels=3,
        out_channels=3,
        latent_channels=4,
        block_out_channels=(32, 32),
        down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
        up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
        norm_num_groups=32,
        sample_size=16,
    )
    text_kwargs = {key: value for key, value in tiny_clip_text_kwargs().items() if key != "projection_dim"}
    text_encoder = CLIPTextModel(CLIPTextConfig(**text_kwargs))
    pipeline = StableDiffusionPipeline(
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=tiny_clip_tokenizer(),
        unet=unet,
        scheduler=DPMSolverMultistepScheduler(steps_offset=1),
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )
    pipeline.save_pretrained(directory)
    return directory
