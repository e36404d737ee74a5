"""Configuration of the ICC student: a RoBERTa-family encoder with one regression output."""

from __future__ import annotations

from transformers import PretrainedConfig, RobertaConfig

#: The Auto classes a saved student maps to its own code files (``configuration_icc.py``,
#: ``modeling_icc.py``, saved next to the weights), so ``trust_remote_code`` users need no package.
#: Every config carries it, so every way of saving a student (``save_pretrained``, ``icc convert``,
#: the Hub folders, the distillation, ``save_tiny_student``) writes the same map.
AUTO_MAP = {
    "AutoConfig": "configuration_icc.ICCConfig",
    "AutoModel": "modeling_icc.ICCForConcreteness",
    "AutoModelForSequenceClassification": "modeling_icc.ICCForConcreteness",
}
#: Config keys that describe the file rather than the architecture; dropped on conversion.
_FILE_KEYS = ("model_type", "architectures", "auto_map", "transformers_version", "_name_or_path")


class ICCConfig(RobertaConfig):
    """RoBERTa configuration with ICC's defaults: DistilRoBERTa shape, one regression label.

    Subclassing ``RobertaConfig`` keeps every backbone field and weight name of the
    published checkpoint (``RobertaForSequenceClassification``, ``num_labels=1``),
    so that checkpoint loads without renaming a single tensor.
    """

    model_type = "icc"

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("num_hidden_layers", 6)
        kwargs.setdefault("max_position_embeddings", 514)
        kwargs.setdefault("type_vocab_size", 1)
        kwargs.setdefault("layer_norm_eps", 1e-5)
        kwargs.setdefault("num_labels", 1)
        kwargs.setdefault("problem_type", "regression")
        kwargs["auto_map"] = {**AUTO_MAP, **(kwargs.get("auto_map") or {})}
        super().__init__(**kwargs)
        if self.num_labels != 1:
            raise ValueError(f"ICC is a single-output regression model; got num_labels={self.num_labels}")

    @classmethod
    def from_backbone_config(cls, config: PretrainedConfig) -> ICCConfig:
        """Convert a RoBERTa-family config (e.g. the published ``moranyanuka/icc``) to ``ICCConfig``."""
        if isinstance(config, cls):
            return config
        if not isinstance(config, RobertaConfig):
            raise ValueError(f"ICC students use a RoBERTa-family backbone; got model_type={config.model_type!r}")
        values = {key: value for key, value in config.to_dict().items() if key not in _FILE_KEYS}
        values.pop("id2label", None)
        values.pop("label2id", None)
        values["num_labels"] = 1
        values["problem_type"] = "regression"
        return cls(**values)
