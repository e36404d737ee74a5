"""Tiny random models and tokenizers, built offline, for tests, demos and CPU dry runs.

Each submodule builds one family from configs in seconds with no download, so the
real code paths run on them: ``student`` (the ICC student and its tokenizer), ``teachers``
(SBA, VBA and BERTScore components with offline tokenizers), ``baselines`` (CLIP, a
causal LM and a text-to-image pipeline for the model-based baselines), ``publishing``
(a teacher-score parquet for card and push tests) and ``pipeline`` (a pipeline config on tiny components);
``captions`` builds the adversarial captions the text path's speed test and benchmark time.
"""

from .baselines import save_tiny_causal_lm, save_tiny_clip, save_tiny_text_to_image
from .pipeline import with_tiny_components
from .publishing import write_teacher_score_dataset
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
    tiny_clip_tokenizer,
    tiny_llama_tokenizer,
    tiny_sba,
    tiny_text_to_image,
    tiny_vba,
)

__all__ = [
    "ROBERTA_SPECIAL_TOKENS",
    "distilroberta_config",
    "save_published_format_checkpoint",
    "save_tiny_bertscore_model",
    "save_tiny_causal_lm",
    "save_tiny_clip",
    "save_tiny_sba_components",
    "save_tiny_student",
    "save_tiny_text_to_image",
    "save_tiny_vba_components",
    "tiny_blip2",
    "tiny_clip_tokenizer",
    "tiny_llama_tokenizer",
    "tiny_roberta_kwargs",
    "tiny_sba",
    "tiny_student",
    "tiny_text_to_image",
    "tiny_tokenizer",
    "tiny_vba",
    "training_corpus",
    "with_tiny_components",
    "write_teacher_score_dataset",
]
