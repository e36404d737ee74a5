"""The SBA teacher: captions -> SBA reconstructions (beam search) -> best character similarity."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import torch
from transformers import AutoTokenizer, PreTrainedTokenizerBase

from ..models.sba.configuration_sba import BOTTLENECKS
from ..models.sba.modeling_sba import HUB_KWARGS, SBAForCaptionReconstruction
from ..scoring.devices import resolve_device, resolve_dtype
from ..utils.provenance import package_versions
from ..version import DISTRIBUTION
from .similarity import best_char_similarity
from .teacher import Reconstruction


@dataclass
class SBAComponents:
    """What a fresh SBA is built on: the frozen towers (ids or paths) and the projector's shape.
    The paper's by default; parsed by ``train_sba.py`` and nested by the pipeline config."""

    text_model: str = field(
        default="openai/clip-vit-large-patch14", metadata={"help": "CLIP model id or path (its text tower is used)"}
    )
    lm: str = field(default="meta-llama/Llama-2-7b-hf", metadata={"help": "causal LM id or path"})
    bottleneck: str = field(default="pooled", metadata={"choices": BOTTLENECKS})
    num_soft_tokens: int = 1
    lora_r: int = field(default=0, metadata={"help": "LoRA rank on the LM (0 = off, as in the paper)"})


class SBAPipeline:
    """Text in and out of an :class:`SBAForCaptionReconstruction`: the SBA teacher.

    Holds the model and the two tokenizers of its towers. :meth:`reconstruct` decodes
    with the model's ``generation_config`` (the paper's: 5 beams, 5 returned, no repeated
    bigram, stop at a newline); ``generation`` overrides it. :meth:`score` keeps the
    candidate closest to the caption by character similarity (the :class:`Teacher` protocol).
    """

    name = "sba"

    def __init__(
        self,
        model: SBAForCaptionReconstruction,
        text_tokenizer: PreTrainedTokenizerBase,
        lm_tokenizer: PreTrainedTokenizerBase,
        generation: dict[str, Any] | None = None,
    ) -> None:
        self.model = model.eval()
        self.text_tokenizer = text_tokenizer
        self.lm_tokenizer = lm_tokenizer
        unknown = model.generation_config.update(**(generation or {}))
        if unknown:
            raise ValueError(f"not GenerationConfig settings: {', '.join(sorted(unknown))}")
        model.generation_config.validate(strict=True)

    @classmethod
    def from_pretrained(
        cls,
        pretrained_model_name_or_path: str | os.PathLike,
        *,
        device: str | torch.device | None = None,
        dtype: str | torch.dtype | None = None,
        generation: dict[str, Any] | None = None,
        **kwargs,
    ) -> SBAPipeline:
        """A trained SBA (local folder or Hub id) and the tokenizers of the towers it records, on
        ``device`` (CUDA when present) in ``dtype`` (bf16 on GPU by default, as the VBA)."""
        device = resolve_device(device)
        model = SBAForCaptionReconstruction.from_pretrained(
            pretrained_model_name_or_path, dtype=resolve_dtype(dtype, device), **kwargs
        )
        return cls._with_tokenizers(model.to(device), generation, kwargs)

    @classmethod
    def from_components(cls, components: SBAComponents | None = None, **kwargs) -> SBAPipeline:
        """A fresh SBA (untrained projector) on the pretrained towers of ``components``, for training."""
        components = components or SBAComponents()
        model = SBAForCaptionReconstruction.from_components(
            components.text_model,
            components.lm,
            bottleneck=components.bottleneck,
            num_soft_tokens=components.num_soft_tokens,
            lora_r=components.lora_r,
            **kwargs,
        )
        return cls._with_tokenizers(model, None, kwargs)

    @classmethod
    def _with_tokenizers(cls, model: SBAForCaptionReconstruction, generation, kwargs: dict) -> SBAPipeline:
        hub = {key: kwargs[key] for key in HUB_KWARGS if key in kwargs}
        text_tokenizer = AutoTokenizer.from_pretrained(
            model.config.text_model_name_or_path, **hub, trust_remote_code=False
        )
        lm_tokenizer = AutoTokenizer.from_pretrained(model.config.lm_name_or_path, **hub, trust_remote_code=False)
        return cls(model, text_tokenizer, lm_tokenizer, generation)

    def reconstruct(self, captions: list[str], **generate_kwargs) -> list[list[str]]:
        """For each caption, ``num_return_sequences`` reconstructions (best beam first), each cut
        at its first newline; ``generate_kwargs`` override the generation config for this call."""
        if not captions:
            return []
        encoded = self.text_tokenizer(
            list(captions),
            padding=True,
            truncation=True,
            max_length=self.model.config.text_config.max_position_embeddings,
            return_tensors="pt",
        ).to(self.model.projector.linear.weight.device)
        generated = self.model.generate(
            encoded["input_ids"], encoded["attention_mask"], tokenizer=self.lm_tokenizer, **generate_kwargs
        )
        texts = [
            t.split("\n", 1)[0].strip() for t in self.lm_tokenizer.batch_decode(generated, skip_special_tokens=True)
        ]
        n = len(texts) // len(captions)
        return [texts[i : i + n] for i in range(0, len(texts), n)]

    def score(self, captions: list[str], row_ids: list[str], seed: int) -> list[Reconstruction]:
        """Beam search is deterministic: ``row_ids`` and ``seed`` are not needed (kept for the protocol)."""
        out = []
        for caption, candidates in zip(captions, self.reconstruct(captions), strict=True):
            best, similarity = best_char_similarity(caption, candidates)
            out.append(Reconstruction(candidates, best, similarity))
        return out

    def provenance(self) -> dict[str, object]:
        config = self.model.config
        generation = self.model.generation_config.to_diff_dict()
        generation.pop("transformers_version", None)
        return {
            "text_model": config.text_model_name_or_path,
            "lm": config.lm_name_or_path,
            "bottleneck": config.bottleneck,
            "num_soft_tokens": config.num_soft_tokens,
            "similarity": "char_levenshtein",
            **generation,
            "versions": package_versions(DISTRIBUTION, "transformers", "torch", "rapidfuzz"),
        }
