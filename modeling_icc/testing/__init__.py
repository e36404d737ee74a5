"""Tiny random models and tokenizers, built offline, for tests, demos and CPU dry runs.

Each submodule builds one family from configs in seconds with no download, so the
real code paths run on them: ``student`` (the ICC student and its tokenizer) and
``teachers`` (SBA, VBA and BERTScore components with offline tokenizers).
"""

from .student import (
    ROBERTA_SPECIAL_TOKENS,
    distilroberta_config,
    save_published_format_checkpoint,
    save_tiny_student,
    tiny_roberta_kwargs,
    tiny_student,
    tiny_tokenizer,
    training_corpus,
)
from .teachers import (
    save_tiny_bertscore_model,
    save_tiny_sba_components,
    save_tiny_vba_components,
    tiny_blip2,
    tiny_sba,
    tiny_text_to_image,
    tiny_vba,
)

__all__ = [
    "ROBERTA_SPECIAL_TOKENS",
    "distilroberta_config",
    "save_published_format_checkpoint",
    "save_tiny_bertscore_model",
    "save_tiny_sba_components",
    "save_tiny_student",
    "save_tiny_vba_components",
    "tiny_blip2",
    "tiny_roberta_kwargs",
    "tiny_sba",
    "tiny_student",
    "tiny_text_to_image",
    "tiny_tokenizer",
    "tiny_vba",
    "training_corpus",
]
