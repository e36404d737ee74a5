"""The methods the ICC paper compares with, each a scorer with ``.score(texts)``.

Text-only and offline: :class:`LexicalNormScorer`, :class:`ComplexityActionScorer`,
:class:`CC3MHeuristicScorer`, :class:`EmbeddingRidgeScorer`. Model-based (real
checkpoints by Hub id or path): :class:`ClipStroopScorer`, :class:`AveClipScorer`,
:class:`LLMPromptScorer`; and :class:`ClipScore` over (image, caption) pairs.
Names are imported on first use, so that the ``icc`` command starts fast.
"""

from ...utils.lazy_exports import lazy_getattr

_EXPORTS = {
    "AveClipScorer": "aveclip",
    "BASELINES": "registry",
    "CC3MHeuristicScorer": "cc3m",
    "CC3MRules": "cc3m",
    "ClipScore": "clipscore",
    "ClipStroopScorer": "stroop",
    "ComplexityActionScorer": "complexity_action",
    "EmbeddingRidgeScorer": "embedding_ridge",
    "LLMPromptScorer": "llm_prompt",
    "LexicalNormScorer": "lexical",
    "ModelOptions": "registry",
    "build_scorer": "registry",
    "parse_rating": "llm_prompt",
}
__all__ = sorted(_EXPORTS)

__getattr__ = lazy_getattr(__name__, _EXPORTS)
