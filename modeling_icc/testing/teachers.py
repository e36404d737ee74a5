"""Tiny random teachers (SBA, VBA, BERTScore model) with offline tokenizers.

Every builder makes the real architecture family from a config in well under a
second, with a byte-level BPE tokenizer trained on the shipped captions, so the
teacher code paths (beam search, diffusion sampling, BLIP-2 captioning,
BERTScore) run anywhere without weights. ``save_tiny_{sba,vba}_components`` write
them to disk so the ``from_pretrained``-style loaders are exercised too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import torch
from tokenizers import Tokenizer, processors
from transformers import (
    Blip2Config,
    Blip2ForConditionalGeneration,
    Blip2Processor,
    CLIPTextConfig,
    CLIPTextModel,
    CLIPTextModelWithProjection,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedTokenizerFast,
    RobertaConfig,
    RobertaModel,
)
from transformers.models.blip import BlipImageProcessorPil

from .student import TINY_TOWER, tiny_roberta_kwargs, tiny_tokenizer, train_byte_bpe

TINY_VOCAB = 512
#: Image side of the tiny text-to-image model (the VAE halves it once: 8x8 latents).
TINY_IMAGE_SIZE = 16
CLIP_SPECIAL_TOKENS = ("<|startoftext|>", "<|endoftext|>")
LLAMA_SPECIAL_TOKENS = ("<unk>", "<s>", "</s>")
OPT_SPECIAL_TOKENS = ("<s>", "<pad>", "</s>", "<unk>")


def _bpe_tokenizer(
    special_tokens: tuple[str, ...], template: str, unk: str | None, **kwargs
) -> PreTrainedTokenizerFast:
    backend = Tokenizer.from_str(train_byte_bpe(TINY_VOCAB, special_tokens, unk))
    ids = {token: backend.token_to_id(token) for token in special_tokens}
    used = [token for token in special_tokens if token in template]
    backend.post_processor = processors.TemplateProcessing(
        single=template, pair=f"{template} $B:1", special_tokens=[(token, ids[token]) for token in used]
    )
    return PreTrainedTokenizerFast(tokenizer_object=backend, **kwargs)


def tiny_clip_tokenizer() -> PreTrainedTokenizerFast:
    """CLIP's layout: ``<|startoftext|> ... <|endoftext|>``, padded with the end token to 77."""
    return _bpe_tokenizer(
        CLIP_SPECIAL_TOKENS,
        "<|startoftext|> $A <|endoftext|>",
        None,
        bos_token="<|startoftext|>",
        eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
        unk_token="<|endoftext|>",
        model_max_length=77,
    )


def tiny_llama_tokenizer() -> PreTrainedTokenizerFast:
    """Llama-2's layout: ``<s>`` prepended, no end token added, no pad token."""
    return _bpe_tokenizer(
        LLAMA_SPECIAL_TOKENS,
        "<s> $A",
        "<unk>",
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        model_max_length=256,
    )


def tiny_opt_tokenizer() -> PreTrainedTokenizerFast:
    """OPT's layout (BLIP-2's language model): ``</s>`` prepended as BOS, ``<pad>`` for padding."""
    return _bpe_tokenizer(
        OPT_SPECIAL_TOKENS,
        "</s> $A",
        "<unk>",
        bos_token="</s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        model_max_length=256,
    )


def special_token_ids(tokenizer) -> dict[str, int]:
    """``bos/eos/pad_token_id`` for a model config, taken from the tokenizer it is built with."""
    return {
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
    }


def tiny_clip_text_config(**overrides) -> CLIPTextConfig:
    tokenizer = tiny_clip_tokenizer()
    values = dict(
        vocab_size=TINY_VOCAB,
        **TINY_TOWER,
        max_position_embeddings=77,
        projection_dim=32,
        **special_token_ids(tokenizer),
    )
    return CLIPTextConfig(**{**values, **overrides})


def tiny_llama_config(**overrides) -> LlamaConfig:
    tokenizer = tiny_llama_tokenizer()
    values = dict(
        vocab_size=TINY_VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
        # a wide init makes the random LM sensitive to its input, so projector training visibly helps
        initializer_range=0.3,
    )
    return LlamaConfig(**{**values, **overrides})


def tiny_sba(seed: int = 0, generation: dict | None = None, **config_overrides):
    """A :class:`~modeling_icc.teachers.SBAPipeline` over a random SBA and the tiny tokenizers."""
    from ..models.sba.configuration_sba import SBAConfig
    from ..models.sba.modeling_sba import SBAForCaptionReconstruction
    from ..teachers.sba import SBAPipeline

    torch.manual_seed(seed)
    config = SBAConfig(text_config=tiny_clip_text_config(), lm_config=tiny_llama_config(), **config_overrides)
    return SBAPipeline(SBAForCaptionReconstruction(config), tiny_clip_tokenizer(), tiny_llama_tokenizer(), generation)


def save_tiny_sba_components(directory: str | Path, seed: int = 0) -> dict[str, Path]:
    """Write a tiny CLIP text tower and a tiny Llama (each with tokenizer) as pretrained folders."""
    directory = Path(directory)
    torch.manual_seed(seed)
    paths = {"text_model": directory / "clip_text", "lm": directory / "llama"}
    CLIPTextModelWithProjection(tiny_clip_text_config()).save_pretrained(paths["text_model"])
    tiny_clip_tokenizer().save_pretrained(paths["text_model"])
    LlamaForCausalLM(tiny_llama_config()).save_pretrained(paths["lm"])
    tiny_llama_tokenizer().save_pretrained(paths["lm"])
    return paths


TINY_UNET = dict(
    sample_size=TINY_IMAGE_SIZE // 2,
    layers_per_block=1,
    block_out_channels=(32, 64),
    down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
    up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
    attention_head_dim=(2, 4),
    use_linear_projection=True,
)
TINY_VAE = dict(
    down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
    up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
    block_out_channels=(32, 64),
    sample_size=TINY_IMAGE_SIZE,
)


@contextmanager
def built_on(device: str | torch.device | None, dtype: torch.dtype | None) -> Iterator[None]:
    """Create parameters directly on ``device`` in ``dtype`` (no host fp32 copy of large models)."""
    if device is None and dtype is None:
        yield
        return
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype or previous)
    try:
        with torch.device(device or "cpu"):
            yield
    finally:
        torch.set_default_dtype(previous)


def build_text_to_image(
    unet: dict,
    vae: dict,
    text_config: CLIPTextConfig,
    tokenizer,
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
):
    """A Stable Diffusion pipeline (v-prediction, DPM-Solver multistep) with random weights of the given shapes."""
    from diffusers import AutoencoderKL, DPMSolverMultistepScheduler, StableDiffusionPipeline, UNet2DConditionModel

    scheduler = DPMSolverMultistepScheduler(prediction_type="v_prediction", steps_offset=1)  # fp32, on the host
    with built_on(device, dtype):
        vae_model = AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4, **vae)
        text_encoder = CLIPTextModel(text_config).eval()
        unet_model = UNet2DConditionModel(
            in_channels=4, out_channels=4, cross_attention_dim=text_config.hidden_size, **unet
        )
    return StableDiffusionPipeline(
        vae=vae_model,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        unet=unet_model,
        scheduler=scheduler,
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )


def tiny_text_to_image(seed: int = 0):
    """A Stable Diffusion 2-style pipeline (UNet, VAE, CLIP text encoder, DPM-Solver) at 16 px."""
    torch.manual_seed(seed)
    return build_text_to_image(TINY_UNET, TINY_VAE, tiny_clip_text_config(), tiny_clip_tokenizer())


def build_blip2(config: Blip2Config, image_size: int) -> tuple[Blip2ForConditionalGeneration, Blip2Processor]:
    """A random BLIP-2 of the given shape and its processor (tiny OPT-style tokenizer + ``<image>``)."""
    image_processor = BlipImageProcessorPil(size={"height": image_size, "width": image_size})
    processor = Blip2Processor(image_processor, tiny_opt_tokenizer(), num_query_tokens=config.num_query_tokens)
    if processor.tokenizer.convert_tokens_to_ids("<image>") != config.image_token_index:
        raise ValueError("the BLIP-2 config's image_token_index must be the tokenizer's <image> id")
    return Blip2ForConditionalGeneration(config).eval(), processor


def opt_blip2_config(vision: dict, qformer: dict, opt: dict, num_query_tokens: int) -> Blip2Config:
    """A BLIP-2 with an OPT language model read through :func:`tiny_opt_tokenizer`: the OPT's special ids are
    the tokenizer's and ``<image>`` is the id right after its vocabulary, where the processor appends it."""
    tokenizer = tiny_opt_tokenizer()
    return Blip2Config(
        vision_config=vision,
        qformer_config=qformer,
        text_config={"model_type": "opt", **opt, **special_token_ids(tokenizer)},
        num_query_tokens=num_query_tokens,
        image_token_index=len(tokenizer),
    )


def tiny_blip2_config() -> Blip2Config:
    opt = dict(
        vocab_size=TINY_VOCAB + 1,  # + the <image> token the processor adds
        hidden_size=32,
        ffn_dim=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        word_embed_proj_dim=32,
        max_position_embeddings=256,
    )
    vision = dict(**TINY_TOWER, image_size=TINY_IMAGE_SIZE, patch_size=4)
    qformer = dict(vocab_size=TINY_VOCAB, **TINY_TOWER, encoder_hidden_size=32)
    return opt_blip2_config(vision, qformer, opt, num_query_tokens=4)


def tiny_blip2(seed: int = 0) -> tuple[Blip2ForConditionalGeneration, Blip2Processor]:
    """A random BLIP-2 (ViT, Q-Former, OPT) and its processor with the ``<image>`` token."""
    torch.manual_seed(seed)
    return build_blip2(tiny_blip2_config(), TINY_IMAGE_SIZE)


def save_tiny_bertscore_model(directory: str | Path, seed: int = 0, config: RobertaConfig | None = None) -> Path:
    """A random RoBERTa encoder + tokenizer folder usable as BERTScore's ``model_type``.

    Tiny (2 layers) unless ``config`` gives another shape (e.g. RoBERTa-large for benchmarks).
    """
    directory = Path(directory)
    torch.manual_seed(seed)
    RobertaModel(config or RobertaConfig(**tiny_roberta_kwargs())).save_pretrained(directory)
    tiny_tokenizer().save_pretrained(directory)
    return directory


def save_tiny_vba_components(directory: str | Path, seed: int = 0) -> dict[str, Path]:
    """Write the tiny text-to-image pipeline, BLIP-2 (+ processor) and BERTScore model to disk."""
    directory = Path(directory)
    paths = {
        "text_to_image": directory / "text_to_image",
        "captioner": directory / "blip2",
        "bertscore_model": directory / "bertscore",
    }
    tiny_text_to_image(seed).save_pretrained(paths["text_to_image"])
    model, processor = tiny_blip2(seed)
    model.save_pretrained(paths["captioner"])
    processor.save_pretrained(paths["captioner"])
    save_tiny_bertscore_model(paths["bertscore_model"], seed)
    return paths


def tiny_vba(directory: str | Path, seed: int = 0, **overrides):
    """A :class:`~modeling_icc.teachers.VBAPipeline` over tiny random components saved in ``directory``
    (BERTScore loads its model by path); ``overrides`` replace ``VBAConfig`` fields."""
    from ..teachers.vba import VBAPipeline

    paths = {name: str(path) for name, path in save_tiny_vba_components(directory, seed).items()}
    overrides = {"size": TINY_IMAGE_SIZE, "bertscore_num_layers": 2, **paths, **overrides}
    return VBAPipeline.from_pretrained(device="cpu", dtype=torch.float32, **overrides)


def use_one_cpu_thread() -> None:
    """Tiny models are latency-bound: on a small shared CPU, two busy-waiting threads run them
    up to 20x slower than one. Scripts call this in their ``--tiny`` mode."""
    torch.set_num_threads(1)
