"""The ICC student model: a RoBERTa-family encoder with a one-output regression head.

Parameter names match ``RobertaForSequenceClassification`` exactly (``roberta.*``,
``classifier.dense``, ``classifier.out_proj``), so the published ``moranyanuka/icc``
checkpoint and anything fine-tuned in that format load unchanged and give the same
raw regression value.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from transformers import AutoConfig
from transformers.modeling_outputs import ModelOutput
from transformers.models.roberta.modeling_roberta import (
    RobertaClassificationHead,
    RobertaModel,
    RobertaPreTrainedModel,
)

from .configuration_icc import ICCConfig


@dataclass
class ICCOutput(ModelOutput):
    """Output of :class:`ICCForConcreteness`.

    ``logits`` (batch, 1) is the raw regression value, as in the published model;
    ``raw_scores`` (batch,) is the same value flattened and can leave [0, 1];
    ``scores`` (batch,) is ``raw_scores`` clipped to [0, 1], the ICC score.
    """

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    raw_scores: torch.Tensor | None = None
    scores: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


class ICCPreTrainedModel(RobertaPreTrainedModel):
    """RoBERTa's initialization and attention back-ends, with the ICC config class."""

    config_class = ICCConfig
    config: ICCConfig


class ICCForConcreteness(ICCPreTrainedModel):
    """Caption -> visual concreteness (regression, trained with MSE).

    ``from_pretrained`` accepts both our own checkpoints (``model_type="icc"``)
    and published-format ``RobertaForSequenceClassification`` checkpoints.
    """

    def __init__(self, config: ICCConfig) -> None:
        super().__init__(config)
        self.roberta = RobertaModel(config, add_pooling_layer=False)
        self.classifier = RobertaClassificationHead(config)
        self.post_init()

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, config=None, **kwargs):
        if config is None:
            config_kwargs = {
                key: kwargs[key]
                for key in ("cache_dir", "force_download", "local_files_only", "token", "revision", "subfolder")
                if key in kwargs
            }
            config = AutoConfig.from_pretrained(pretrained_model_name_or_path, **config_kwargs, trust_remote_code=False)
        config = ICCConfig.from_backbone_config(config)
        return super().from_pretrained(pretrained_model_name_or_path, *model_args, config=config, **kwargs)

    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.LongTensor | None = None,
        position_ids: torch.LongTensor | None = None,
        inputs_embeds: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        return_dict: bool | None = None,
        **kwargs,
    ) -> ICCOutput | tuple:
        encoded = self.roberta(
            input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            position_ids=position_ids,
            inputs_embeds=inputs_embeds,
            return_dict=True,
            **kwargs,
        )
        logits = self.classifier(encoded.last_hidden_state)
        raw_scores = logits.squeeze(-1)
        loss = None
        if labels is not None:
            loss = nn.functional.mse_loss(raw_scores.float(), labels.to(raw_scores.device).float().view(-1))
        output = ICCOutput(
            loss=loss,
            logits=logits,
            raw_scores=raw_scores,
            scores=raw_scores.clamp(0.0, 1.0),
            hidden_states=encoded.hidden_states,
            attentions=encoded.attentions,
        )
        if return_dict is False:
            return output.to_tuple()
        return output
