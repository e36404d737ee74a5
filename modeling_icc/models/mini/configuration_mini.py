"""Configuration of the ``mini`` model: the first layers of all-MiniLM-L6-v2 (frozen) and two linear heads."""

from __future__ import annotations

from huggingface_hub.dataclasses import strict
from transformers import BertConfig, PreTrainedConfig

#: Token ids never counted as words: PAD, UNK, CLS, SEP and MASK of the BERT uncased vocabulary.
BERT_UNCASED_SPECIAL_IDS = (0, 100, 101, 102, 103)


@strict
class MiniICCConfig(PreTrainedConfig):
    """``encoder`` is the base MiniLM's ``BertConfig`` as a dict; only its first ``num_layers`` layers run.

    The caption score is ``sigmoid(slope * caption_head([embedding, (pooled - 3) / 2]) + offset)``, where
    ``embedding`` is the L2-normalized mean of layer ``embedding_layer`` over all tokens (as
    sentence-transformers pools) and ``pooled`` the mean word-head concreteness (1-5 scale) of the content
    tokens at layer ``word_layer``. With ``position_decay`` both means weigh the token at position t of
    its window by ``exp(-t / position_decay)``, so a tail after the description weighs less (None: plain
    means, as heads written before it). Text is lower-cased (``lowercase``) and cut at ``max_length`` tokens.

    The heads file stores ``to_dict()`` in its metadata, so these fields are part of its bytes: the
    shipped file was written with exactly these.
    """

    model_type = "icc_mini"

    encoder: dict | None = None
    num_layers: int = 4
    embedding_layer: int = 4
    word_layer: int = 4
    max_length: int = 128
    lowercase: bool = True
    special_token_ids: list[int] | None = None
    position_decay: float | None = None

    def __post_init__(self, **kwargs) -> None:
        if self.encoder is None:
            self.encoder = BertConfig().to_dict()
        if self.special_token_ids is None:
            self.special_token_ids = list(BERT_UNCASED_SPECIAL_IDS)
        super().__post_init__(**kwargs)
        if not 0 <= max(self.embedding_layer, self.word_layer) <= self.num_layers:
            raise ValueError(f"embedding_layer and word_layer must be in 0..num_layers ({self.num_layers})")
        if self.position_decay is not None and not self.position_decay > 0:
            raise ValueError(f"position_decay must be positive or None, got {self.position_decay}")

    def encoder_config(self) -> BertConfig:
        """The base encoder's config, cut to ``num_layers`` layers."""
        config = BertConfig(**{k: v for k, v in self.encoder.items() if k not in ("model_type", "architectures")})
        config.num_hidden_layers = self.num_layers
        return config
