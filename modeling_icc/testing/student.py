"""Tiny ICC students and a RoBERTa-style tokenizer trained offline on the shipped captions."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast, RobertaConfig, RobertaForSequenceClassification, RobertaTokenizerFast

from ..models.icc.configuration_icc import ICCConfig
from ..models.icc.modeling_icc import ICCForConcreteness
from ..utils.shipped_data import dev_split, paper_examples

ROBERTA_SPECIAL_TOKENS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
#: The shape of every tiny tower (the student, CLIP's text and vision towers, BLIP-2's ViT and Q-Former).
TINY_TOWER = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2)


def training_corpus() -> list[str]:
    """Real captions shipped with the package (paper examples + dev split) for tokenizer training."""
    return [row["caption"] for row in paper_examples()] + [row["caption"] for row in dev_split()]


@lru_cache(maxsize=16)
def train_byte_bpe(vocab_size: int, special_tokens: tuple[str, ...], unk_token: str | None = None) -> str:
    """A byte-level BPE trained on the shipped captions, as a ``tokenizers`` JSON string.

    Special tokens take ids 0, 1, ... in the order given; no post-processor is set.
    """
    tokenizer = Tokenizer(models.BPE(unk_token=unk_token))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(training_corpus(), trainer=trainer)
    return tokenizer.to_str()


@lru_cache(maxsize=4)
def _tiny_bpe(vocab_size: int) -> str:
    tokenizer = Tokenizer.from_str(train_byte_bpe(vocab_size, tuple(ROBERTA_SPECIAL_TOKENS), "<unk>"))
    tokenizer.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    return tokenizer.to_str()


def tiny_tokenizer(vocab_size: int = 512, model_max_length: int = 128) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer with RoBERTa's special tokens, trained on the shipped captions."""
    return RobertaTokenizerFast(
        tokenizer_object=Tokenizer.from_str(_tiny_bpe(vocab_size)),
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
        model_max_length=model_max_length,
    )


def tiny_roberta_kwargs(vocab_size: int = 512, max_length: int = 128) -> dict:
    """A 2-layer, 32-wide RoBERTa shape (DistilRoBERTa's wiring, a fraction of its size)."""
    return dict(
        vocab_size=vocab_size,
        **TINY_TOWER,
        max_position_embeddings=max_length + 2,
        type_vocab_size=1,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
    )


def tiny_student(seed: int = 0, **overrides) -> ICCForConcreteness:
    """A randomly initialized :class:`ICCForConcreteness` small enough for unit tests."""
    torch.manual_seed(seed)
    return ICCForConcreteness(ICCConfig(**{**tiny_roberta_kwargs(), **overrides})).eval()


def save_tiny_student(directory: str | Path, seed: int = 0) -> Path:
    """Save a tiny student with its tokenizer, loadable by ``load_scorer(directory)``."""
    directory = Path(directory)
    tiny_student(seed).save_pretrained(directory)
    tiny_tokenizer().save_pretrained(directory)
    return directory


def save_published_format_checkpoint(directory: str | Path, seed: int = 0) -> Path:
    """A tiny checkpoint in the published ``moranyanuka/icc`` format.

    ``RobertaForSequenceClassification`` with ``num_labels=1`` and
    ``problem_type="regression"``, saved by plain transformers: what loaders of the
    published model must accept unchanged.
    """
    directory = Path(directory)
    torch.manual_seed(seed)
    config = RobertaConfig(**tiny_roberta_kwargs(), num_labels=1, problem_type="regression")
    RobertaForSequenceClassification(config).eval().save_pretrained(directory)
    tiny_tokenizer().save_pretrained(directory)
    return directory


def distilroberta_config() -> ICCConfig:
    """The real DistilRoBERTa-base shape (82M parameters), for speed benchmarks with random weights."""
    return ICCConfig(vocab_size=50265, hidden_size=768, num_attention_heads=12, intermediate_size=3072)
