"""The teacher pipelines whose reconstruction fidelity ICC distils (needs the ``[teachers]`` extra).

SBA: caption -> CLIP text embedding -> LM reconstruction, scored by character
similarity. VBA: caption -> generated image -> BLIP-2 captions, scored by BERTScore.
``SBAPipeline`` and ``VBAPipeline`` are the two :class:`Teacher` adapters.
Heavy dependencies (diffusers, bert-score, rapidfuzz, peft) load on first use.
"""

from ..models.sba.configuration_sba import SBAConfig
from ..models.sba.modeling_sba import SBAForCaptionReconstruction, SBAProjector
from ..models.vba.configuration_vba import VBAConfig
from .captions import CaptionSet, count_words, load_captions
from .sba import SBAComponents, SBAPipeline
from .scoring import SHARD_SCHEMA, read_shards, score_to_shards
from .similarity import BERTScoreSimilarity, best_char_similarity, char_similarity
from .teacher import Reconstruction, Teacher, caption_seed
from .vba import VBAPipeline

__all__ = [
    "SHARD_SCHEMA",
    "BERTScoreSimilarity",
    "CaptionSet",
    "Reconstruction",
    "SBAComponents",
    "SBAConfig",
    "SBAForCaptionReconstruction",
    "SBAPipeline",
    "SBAProjector",
    "Teacher",
    "VBAConfig",
    "VBAPipeline",
    "best_char_similarity",
    "caption_seed",
    "char_similarity",
    "count_words",
    "load_captions",
    "read_shards",
    "score_to_shards",
]
