"""mini's trained part as plain tensor functions: pooled word concreteness, the caption head, calibration.

They import no ``transformers``, so the scorer's fast path (``fast_encoder.py``) and the
``transformers`` model (``modeling_mini.py``) compute the score and its per-token decomposition with
the same code: the explained score is the score.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

#: The word head's scale midpoint and half-range (1-5 ratings -> about -1..1 in the caption head).
RATING_MID, RATING_HALF_RANGE = 3.0, 2.0
#: Floor of the pooled tokens' total weight: a caption with no such token pools to 0 (its numerator is 0).
#: Below 1, as position weights are; plain counts are whole numbers, so it changes none of their means.
POOLED_WEIGHT_FLOOR = 1e-12


@dataclass
class MiniHeads:
    """The trained tensors (fp32), the ids that never count as words, and the config's ``position_decay``
    (tokens; None: plain means)."""

    word_weight: torch.Tensor  # (H,)
    word_bias: torch.Tensor  # ()
    caption_weight: torch.Tensor  # (H + 1,)
    caption_bias: torch.Tensor  # ()
    calibration: torch.Tensor  # (2,): slope, offset
    content_mask: torch.Tensor  # (vocab,) uint8
    special_ids: torch.Tensor  # (k,) int64
    position_decay: float | None = None

    @classmethod
    def from_tensors(
        cls,
        tensors: dict[str, torch.Tensor],
        special_ids: list[int] | tuple[int, ...],
        position_decay: float | None = None,
    ) -> MiniHeads:
        """From a heads file's (or a model's state dict's) ``word_head.*``, ``caption_head.*``, ... tensors.

        The float tensors are copied into fresh storage: one read from a safetensors file sits at its offset
        in the file, and SIMD reductions over a misaligned vector round differently (by an ulp, for some
        captions) from the same values in a model's own parameters, which a folder or Hub mini reads."""
        return cls(
            word_weight=tensors["word_head.weight"].float().reshape(-1).clone(),
            word_bias=tensors["word_head.bias"].float().reshape(()).clone(),
            caption_weight=tensors["caption_head.weight"].float().reshape(-1).clone(),
            caption_bias=tensors["caption_head.bias"].float().reshape(()).clone(),
            calibration=tensors["calibration"].float().clone(),
            content_mask=tensors["content_mask"],
            special_ids=torch.tensor(list(special_ids), dtype=torch.long),
            position_decay=position_decay,
        )

    @classmethod
    def from_modules(
        cls,
        word_head: nn.Linear,
        caption_head: nn.Linear,
        calibration: torch.Tensor,
        content_mask: torch.Tensor,
        special_ids: list[int] | tuple[int, ...],
        position_decay: float | None = None,
    ) -> MiniHeads:
        """Views of a model's modules (shared storage: a later change to the model shows here too)."""
        return cls(
            word_weight=word_head.weight[0],
            word_bias=word_head.bias[0],
            caption_weight=caption_head.weight[0],
            caption_bias=caption_head.bias[0],
            calibration=calibration,
            content_mask=content_mask,
            special_ids=torch.tensor(list(special_ids), dtype=torch.long),
            position_decay=position_decay,
        )

    def to(self, device: torch.device) -> MiniHeads:
        tensors = {name: value.to(device) for name, value in vars(self).items() if isinstance(value, torch.Tensor)}
        return MiniHeads(**tensors, position_decay=self.position_decay)


def token_weights(attention_mask: torch.Tensor, position_decay: float | None) -> torch.Tensor:
    """(B, T) fp32 weight of each token in both means: the attention mask, times ``exp(-t / position_decay)``
    for the token at position t of its row (a caption or one of its windows) unless the decay is None."""
    mask = attention_mask.float()
    if position_decay is None:
        return mask
    positions = torch.arange(mask.shape[1], dtype=torch.float32, device=mask.device)
    return mask * torch.exp(-positions / position_decay)


@dataclass
class HeadOutputs:
    """``scores`` (B,) = sigmoid(``logits``); ``pooled`` (B,) mean word rating; ``token_concreteness`` (B, T);
    ``pooled_mask`` (B, T) the tokens that entered ``pooled``."""

    scores: torch.Tensor
    logits: torch.Tensor
    pooled: torch.Tensor
    token_concreteness: torch.Tensor
    pooled_mask: torch.Tensor


def pooled_tokens(heads: MiniHeads, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Tokens that enter the pooled word concreteness: content tokens, or all non-special if a caption has none."""
    # A comparison with each special id rather than torch.isin, which the ONNX export cannot trace.
    special = (input_ids.unsqueeze(-1) == heads.special_ids.to(input_ids.device)).any(-1)
    nonspecial = attention_mask.bool() & ~special
    content = heads.content_mask[input_ids].bool() & nonspecial
    has_content = content.any(1, keepdim=True)
    return (has_content & content) | (~has_content & nonspecial)  # a boolean where(), which ONNX Runtime lacks


def probability(logits: torch.Tensor) -> torch.Tensor:
    """``sigmoid(logits)`` as float32, computed in float64: float32 sigmoid rounds differently in its vector
    and scalar code, so a caption's score would depend on how many captions share its batch."""
    return torch.sigmoid(logits.double()).float()


def plain_sum(values: torch.Tensor, dim: int) -> torch.Tensor:
    """``values.sum(dim)``: how the heads add up a row's tokens and the caption head's terms
    (``onnx_export.py`` traces another way)."""
    return values.sum(dim)


def head_outputs(
    heads: MiniHeads,
    embedding_states: torch.Tensor,
    word_states: torch.Tensor,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    add_up: Callable[[torch.Tensor, int], torch.Tensor] = plain_sum,
) -> HeadOutputs:
    """The score from the encoder's token states (any dtype; the heads run in fp32). ``add_up(values, dim)``
    adds up each row's token states, weights and terms (dim 1) and the caption head's terms (dim -1)."""
    weights = token_weights(attention_mask, heads.position_decay)
    mask = weights.unsqueeze(-1)
    mean = add_up(embedding_states.float() * mask, 1) / add_up(mask, 1).clamp(min=1.0)  # fp32: weights are not 0/1
    embedding = nn.functional.normalize(mean, dim=-1)
    # Products as sums along the last axis, not matrix-vector products, whose summation order follows the
    # batch's shape: a caption's score must not depend on the captions batched with it.
    token_concreteness = (word_states.float() * heads.word_weight).sum(-1) + heads.word_bias
    use = pooled_tokens(heads, input_ids, attention_mask)
    pooled_weights = use.float() * weights
    pooled = add_up(token_concreteness * pooled_weights, 1) / add_up(pooled_weights, 1).clamp(min=POOLED_WEIGHT_FLOOR)
    features = torch.cat([embedding, ((pooled - RATING_MID) / RATING_HALF_RANGE).unsqueeze(-1)], dim=-1)
    raw = add_up(features * heads.caption_weight, -1) + heads.caption_bias
    logits = heads.calibration[0] * raw + heads.calibration[1]
    return HeadOutputs(probability(logits), logits, pooled, token_concreteness, use)


@dataclass
class TokenTerms:
    """Additive decomposition of the calibrated logit: ``per_token.sum(1) + bias + rounding == output.logits``.

    ``rounding`` is what the float32 decomposition misses of the model's own logit: float32 rounding
    (about 1e-6), with a bf16 encoder too, as the heads average its token states in fp32.
    """

    per_token: torch.Tensor  # (B, T)
    bias: torch.Tensor  # (B,)
    rounding: torch.Tensor  # (B,)
    output: HeadOutputs


def token_terms(
    heads: MiniHeads,
    embedding_states: torch.Tensor,
    word_states: torch.Tensor,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
) -> TokenTerms:
    """Each token's share of the logit: through the normalized mean embedding and, when pooled, through the
    word-concreteness mean. Padding contributes nothing."""
    output = head_outputs(heads, embedding_states, word_states, input_ids, attention_mask)
    weights = token_weights(attention_mask, heads.position_decay)
    mask = weights.unsqueeze(-1)
    states = embedding_states.float() * mask
    n_tokens = mask.sum(1)
    norm = (states.sum(1) / n_tokens).norm(dim=-1, keepdim=True)
    embedding_weights, pooled_weight = heads.caption_weight[:-1], heads.caption_weight[-1]
    embedding_term = (states @ embedding_weights) / (n_tokens * norm)
    use = output.pooled_mask.float() * weights
    pooled_term = (
        pooled_weight
        * use
        * (output.token_concreteness - RATING_MID)
        / RATING_HALF_RANGE
        / use.sum(1, keepdim=True).clamp(min=POOLED_WEIGHT_FLOOR)
    )
    slope, offset = heads.calibration[0], heads.calibration[1]
    per_token = slope * (embedding_term + pooled_term)
    bias = (slope * heads.caption_bias + offset).expand(per_token.shape[0])
    return TokenTerms(per_token, bias, output.logits - per_token.sum(1) - bias, output)
