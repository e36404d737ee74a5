"""The teacher pipelines whose reconstruction fidelity ICC distils (needs the ``[teachers]`` extra).

SBA: caption -> CLIP text embedding -> LM reconstruction, scored by character
similarity. VBA: caption -> generated image -> BLIP-2 captions, scored by BERTScore.
Heavy dependencies (diffusers, bert-score, rapidfuzz, peft) load on first use.
"""

from ..models.sba.configuration_sba import SBAConfig
from ..models.sba.modeling_sba import SBAForCaptionReconstruction, SBAProjector
from .captions import CaptionSet, count_words, load_captions
from .sba_training import SBACollator, SBATrainingConfig, train_sba
from .scoring import SHARD_SCHEMA, read_shards, score_to_shards
from .similarity import BERTScoreSimilarity, best_char_similarity, char_similarity
from .teacher import Reconstruction, SBATeacher, Teacher, caption_seed
from .vba import VBAPipeline

__all__ = [
    "SHARD_SCHEMA",
    "BERTScoreSimilarity",
    "CaptionSet",
    "Reconstruction",
    "SBACollator",
    "SBAConfig",
    "SBAForCaptionReconstruction",
    "SBAProjector",
    "SBATeacher",
    "SBATrainingConfig",
    "Teacher",
    "VBAPipeline",
    "best_char_similarity",
    "caption_seed",
    "char_similarity",
    "count_words",
    "load_captions",
    "read_shards",
    "score_to_shards",
    "train_sba",
]
