"""An inference-only forward pass for :class:`ICCForConcreteness` that does less work.

The student's score reads only the first (``<s>``) token of the last layer, so the
last layer needs keys and values for every token but queries, the attention
output and the feed-forward block only for that one token: about 13 % fewer
FLOPs at caption lengths, with the same result. The query, key and value
projections run as one matrix product. On CPUs with oneDNN, weights are
pre-packed once for the matrix units (AMX/AVX-512) and the bias, GELU and
residual additions are fused into the products, which removes whole passes over
the activations. Everything else (embeddings, post-LayerNorm, the
``tanh`` head) follows RoBERTa exactly.

``benchmarks/speed/student_throughput.py`` measures the speed and the deviation from
the module's fp32 scores; ``tests/test_fast_encoder.py`` checks fp32 parity.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..fused_linear import FusedLinear, mkldnn_usable
from .modeling_icc import ICCForConcreteness


def supports_fast_encoder(model: ICCForConcreteness) -> bool:
    """Whether the model's architecture is the one this forward pass implements."""
    config = model.config
    return (
        config.hidden_act == "gelu"
        and getattr(config, "position_embedding_type", "absolute") == "absolute"
        and not getattr(config, "is_decoder", False)
        and config.hidden_size % config.num_attention_heads == 0
        and model.roberta.embeddings.position_embeddings.padding_idx is not None
    )


class FastICCEncoder(nn.Module):
    """Inference-only forward pass of an :class:`ICCForConcreteness`; returns raw scores.

    It reads the model's weights when it is built (fused and, on CPUs, pre-packed
    copies of the projections; the rest shared): rebuild it after changing the model,
    as :class:`~modeling_icc.NeuralScorer` does. ``batch_hint`` is the number of tokens
    per batch the products will see; oneDNN picks its weight layout for it.
    """

    def __init__(self, model: ICCForConcreteness, *, batch_hint: int = 2048) -> None:
        super().__init__()
        if not supports_fast_encoder(model):
            raise ValueError("FastICCEncoder implements RoBERTa encoders with absolute positions and GELU")
        config = model.config
        reference = next(model.parameters())
        self.dtype, self.device = reference.dtype, reference.device
        mkldnn = self.device.type == "cpu" and mkldnn_usable(self.dtype)
        self.uses_mkldnn = mkldnn

        def frozen(tensor: torch.Tensor) -> torch.Tensor:
            return tensor.detach()  # shares storage: no second copy of the weights

        def linear(*layers: nn.Linear) -> FusedLinear:
            """One product for all ``layers`` (stacked outputs), e.g. Q, K and V."""
            weight = torch.cat([layer.weight for layer in layers]) if len(layers) > 1 else layers[0].weight
            bias = torch.cat([layer.bias for layer in layers]) if len(layers) > 1 else layers[0].bias
            return FusedLinear(frozen(weight), frozen(bias), mkldnn=mkldnn, batch_hint=batch_hint)

        embeddings = model.roberta.embeddings
        self.word_embeddings = frozen(embeddings.word_embeddings.weight)
        self.position_embeddings = frozen(embeddings.position_embeddings.weight)
        self.token_type_embedding = frozen(embeddings.token_type_embeddings.weight[0])
        self.padding_idx = int(embeddings.position_embeddings.padding_idx)
        self.embedding_norm = (frozen(embeddings.LayerNorm.weight), frozen(embeddings.LayerNorm.bias))
        self.eps = float(config.layer_norm_eps)
        self.hidden = config.hidden_size
        self.heads = config.num_attention_heads
        self.head_dim = self.hidden // self.heads
        self.layers = []
        encoder_layers = list(model.roberta.encoder.layer)
        for index, layer in enumerate(encoder_layers):
            attention = layer.attention.self
            if index == len(encoder_layers) - 1:
                projections = {"q": linear(attention.query), "kv": linear(attention.key, attention.value)}
            else:
                projections = {"qkv": linear(attention.query, attention.key, attention.value)}
            self.layers.append(
                {
                    **projections,
                    "attention_out": linear(layer.attention.output.dense),
                    "attention_norm": (
                        frozen(layer.attention.output.LayerNorm.weight),
                        frozen(layer.attention.output.LayerNorm.bias),
                    ),
                    "intermediate": linear(layer.intermediate.dense),
                    "output": linear(layer.output.dense),
                    "output_norm": (frozen(layer.output.LayerNorm.weight), frozen(layer.output.LayerNorm.bias)),
                }
            )
        head = model.classifier
        self.head_dense = (frozen(head.dense.weight), frozen(head.dense.bias))
        self.head_out = (frozen(head.out_proj.weight), frozen(head.out_proj.bias))

    def _norm(self, x: torch.Tensor, weight_bias: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        return F.layer_norm(x, (self.hidden,), *weight_bias, self.eps)

    def _split_heads(self, x: torch.Tensor, batch: int, parts: int) -> tuple[torch.Tensor, ...]:
        """``(batch * tokens, parts * hidden)`` -> ``parts`` tensors of ``(batch, heads, tokens, head_dim)``."""
        split = x.view(batch, -1, parts, self.heads, self.head_dim).unbind(2)
        return tuple(part.transpose(1, 2) for part in split)

    @torch.inference_mode()
    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        batch, width = input_ids.shape
        not_padding = input_ids.ne(self.padding_idx)
        positions = torch.cumsum(not_padding, dim=1) * not_padding + self.padding_idx
        x = self.word_embeddings[input_ids] + self.position_embeddings[positions] + self.token_type_embedding
        x = self._norm(x, self.embedding_norm).view(batch * width, self.hidden)
        key_mask = attention_mask.bool()[:, None, None, :]
        for layer in self.layers:
            if "kv" in layer:
                # The last layer: only its <s> token reaches the head.
                key, value = self._split_heads(layer["kv"](x), batch, 2)
                x = x.view(batch, width, self.hidden)[:, 0].contiguous()
                (query,) = self._split_heads(layer["q"](x), batch, 1)
            else:
                query, key, value = self._split_heads(layer["qkv"](x), batch, 3)
            attended = F.scaled_dot_product_attention(query, key, value, attn_mask=key_mask)
            attended = attended.transpose(1, 2).reshape(x.shape)
            x = self._norm(layer["attention_out"](attended, residual=x), layer["attention_norm"])
            hidden = layer["intermediate"](x, gelu=True)
            x = self._norm(layer["output"](hidden, residual=x), layer["output_norm"])
        first_token = x.view(batch, -1, self.hidden)[:, 0]
        return F.linear(torch.tanh(F.linear(first_token, *self.head_dense)), *self.head_out).squeeze(-1)
