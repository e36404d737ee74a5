"""mini's encoder for inference: the first layers of a BERT encoder in plain torch, without ``transformers``.

Why: scoring with mini needs none of ``transformers``' machinery, whose import alone takes longer
(about 2.5 s on a 2-core CPU) than scoring a few captions; and on CPUs the generic products leave
speed unused. Here the weights are read once from their safetensors tensors; on CPUs with oneDNN they
are pre-packed for the vector/matrix units and the bias, GELU and residual additions are fused into
the products (``models/fused_linear.py``, as in the student's ``FastICCEncoder``); Q, K and V are one
product; layers after the last one the heads read never run. Embeddings, attention and the post-LayerNorms follow
``BertModel`` exactly; ``tests/test_mini.py`` checks parity with it.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from ...utils.errors import CheckpointError
from ..fused_linear import FusedLinear, mkldnn_usable
from .files import BASE_WEIGHTS_FILE, check_base_matches, read_base_weights, read_heads
from .heads import MiniHeads

#: Tensors of one encoder layer, relative to ``encoder.layer.{i}.``.
LAYER_KEYS = (
    "attention.self.query.weight",
    "attention.self.query.bias",
    "attention.self.key.weight",
    "attention.self.key.bias",
    "attention.self.value.weight",
    "attention.self.value.bias",
    "attention.output.dense.weight",
    "attention.output.dense.bias",
    "attention.output.LayerNorm.weight",
    "attention.output.LayerNorm.bias",
    "intermediate.dense.weight",
    "intermediate.dense.bias",
    "output.dense.weight",
    "output.dense.bias",
    "output.LayerNorm.weight",
    "output.LayerNorm.bias",
)
EMBEDDING_KEYS = (
    "embeddings.word_embeddings.weight",
    "embeddings.position_embeddings.weight",
    "embeddings.token_type_embeddings.weight",
    "embeddings.LayerNorm.weight",
    "embeddings.LayerNorm.bias",
)


def encoder_keys(num_layers: int) -> list[str]:
    """The base tensors the first ``num_layers`` layers read (no pooler, no later layers)."""
    return [*EMBEDDING_KEYS] + [f"encoder.layer.{i}.{key}" for i in range(num_layers) for key in LAYER_KEYS]


def select_encoder_tensors(state: dict[str, torch.Tensor], num_layers: int, source: str) -> dict[str, torch.Tensor]:
    """The encoder tensors of ``state`` (keys with or without a ``bert.`` prefix); a missing one is an error."""
    stripped = {key.removeprefix("bert."): value for key, value in state.items()}
    wanted = encoder_keys(num_layers)
    missing = [key for key in wanted if key not in stripped]
    if missing:
        raise CheckpointError(f"the mini base weights {source} do not match the encoder config: missing {missing[:3]}")
    return {key: stripped[key] for key in wanted}


def layers_read(config: dict) -> tuple[int, int]:
    """The encoder layers mini's heads read: ``(embedding layer, word layer)`` of a mini config."""
    return int(config["embedding_layer"]), int(config["word_layer"])


def read_mini(heads_path: Path, base_path: Path) -> tuple[MiniHeads, dict[str, torch.Tensor], dict]:
    """mini's heads (fp32), the base encoder tensors they read, and the config, from a heads file and the
    base encoder's folder; refuses heads fitted on other base weights."""
    head_tensors, payload = read_heads(heads_path)
    check_base_matches(payload, heads_path, base_path)
    config = payload["config"]
    heads = MiniHeads.from_tensors(head_tensors, config["special_token_ids"], config.get("position_decay"))
    source = str(base_path / BASE_WEIGHTS_FILE)
    return heads, select_encoder_tensors(read_base_weights(base_path), config["num_layers"], source), config


class FastMiniEncoder:
    """Token states of the layers mini's heads read, for right-padded ``input_ids``.

    ``tensors`` are the base encoder's (see :func:`select_encoder_tensors`); ``encoder`` its BERT config as
    a dict (``hidden_size``, ``num_attention_heads``, ``layer_norm_eps``, ``hidden_act``). Layer 0 is the
    embedding output, layer ``i`` the output of the ``i``-th encoder layer, as in ``hidden_states``.
    ``prepacked=False`` keeps plain ``F.linear`` products on CPUs too (what an ONNX export can trace).
    """

    def __init__(
        self,
        tensors: dict[str, torch.Tensor],
        encoder: dict,
        num_layers: int,
        *,
        dtype: torch.dtype = torch.float32,
        device: torch.device | str = "cpu",
        batch_hint: int = 4096,
        prepacked: bool = True,
    ) -> None:
        if encoder.get("hidden_act", "gelu") != "gelu" or encoder.get("position_embedding_type", "absolute") != (
            "absolute"
        ):
            raise ValueError("FastMiniEncoder implements BERT encoders with absolute positions and exact GELU")
        self.device, self.dtype, self.num_layers = torch.device(device), dtype, num_layers
        self.hidden = int(encoder["hidden_size"])
        self.heads = int(encoder["num_attention_heads"])
        self.head_dim = self.hidden // self.heads
        self.eps = float(encoder.get("layer_norm_eps", 1e-12))
        self.uses_mkldnn = prepacked and self.device.type == "cpu" and mkldnn_usable(dtype)

        def tensor(key: str) -> torch.Tensor:
            return tensors[key].detach().to(self.device, dtype)

        def linear(*names: str) -> FusedLinear:
            weight = torch.cat([tensor(f"{name}.weight") for name in names])
            bias = torch.cat([tensor(f"{name}.bias") for name in names])
            return FusedLinear(weight, bias, mkldnn=self.uses_mkldnn, batch_hint=batch_hint)

        self.word_embeddings = tensor("embeddings.word_embeddings.weight")
        self.position_embeddings = tensor("embeddings.position_embeddings.weight")
        self.token_type_embedding = tensor("embeddings.token_type_embeddings.weight")[0]
        self.embedding_norm = (tensor("embeddings.LayerNorm.weight"), tensor("embeddings.LayerNorm.bias"))
        self.layers = []
        for index in range(num_layers):
            prefix = f"encoder.layer.{index}."
            self.layers.append(
                {
                    "qkv": linear(*(f"{prefix}attention.self.{name}" for name in ("query", "key", "value"))),
                    "attention_out": linear(f"{prefix}attention.output.dense"),
                    "attention_norm": (
                        tensor(f"{prefix}attention.output.LayerNorm.weight"),
                        tensor(f"{prefix}attention.output.LayerNorm.bias"),
                    ),
                    "intermediate": linear(f"{prefix}intermediate.dense"),
                    "output": linear(f"{prefix}output.dense"),
                    "output_norm": (
                        tensor(f"{prefix}output.LayerNorm.weight"),
                        tensor(f"{prefix}output.LayerNorm.bias"),
                    ),
                }
            )

    def _norm(self, x: torch.Tensor, weight_bias: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        return F.layer_norm(x, (self.hidden,), *weight_bias, self.eps)

    @torch.inference_mode()
    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, layers: tuple[int, ...]) -> list:
        """``(B, T, H)`` token states of each layer in ``layers`` (0 = embeddings), in ``self.dtype``."""
        batch, width = input_ids.shape
        positions = torch.arange(width, device=input_ids.device)
        x = self.word_embeddings[input_ids] + self.position_embeddings[positions] + self.token_type_embedding
        x = self._norm(x, self.embedding_norm).view(batch * width, self.hidden)
        states = {0: x}
        key_mask = attention_mask.bool()[:, None, None, :]
        for index, layer in enumerate(self.layers[: max(layers)], start=1):
            qkv = layer["qkv"](x).view(batch, width, 3, self.heads, self.head_dim)
            query, key, value = (part.transpose(1, 2) for part in qkv.unbind(2))
            attended = F.scaled_dot_product_attention(query, key, value, attn_mask=key_mask)
            attended = attended.transpose(1, 2).reshape(batch * width, self.hidden)
            x = self._norm(layer["attention_out"](attended, residual=x), layer["attention_norm"])
            x = self._norm(layer["output"](layer["intermediate"](x, gelu=True), residual=x), layer["output_norm"])
            states[index] = x
        return [states[index].view(batch, width, self.hidden) for index in layers]
