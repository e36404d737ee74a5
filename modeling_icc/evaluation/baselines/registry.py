"""Scorers by name, so that ``icc bench --scorers mini,lite,lexical,ca,cc3m,minilm,published,PATH`` works.

A spec is a registry name (``mini``, ``lite``, ``lexical``, ``ca``, ``cc3m``, ``cc3m-keep``,
``minilm``, ``published``), a model-based baseline with its checkpoint after a
colon (``stroop:openai/clip-vit-base-patch32``, ``aveclip:stabilityai/stable-diffusion-2``,
``llm:meta-llama/Llama-2-7b-chat-hf``; without the colon the options' defaults
are used), or anything else: a Hub id or local directory of an ICC student,
loaded with :func:`modeling_icc.load_scorer`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...scoring.load import load_scorer
from ...utils.errors import UserInputError
from ...utils.extras import DIFFUSERS, SPACY, Extra, require
from ..data import BENCHMARK_EXTRAS, DEV_FROZEN_ID, DEV_SPLIT_ID, PUBLISHED
from ..harness import PUBLISHED_LABEL, BenchScorer
from .clip import DEFAULT_CLIP

DEFAULT_SCORERS = ("mini", "lite", "lexical", "ca", "cc3m", "minilm", "published")
READS_NORMS = frozenset({"norms:test", "norms:train", "norms:all"})
FITTED_ON_NORMS = frozenset({"norms:train", "norms:all"})
#: Fitted or tuned on all 303 dev captions, the frozen 100 included.
FITTED_ON_DEV = frozenset({DEV_SPLIT_ID, DEV_FROZEN_ID})


@dataclass(frozen=True)
class ModelOptions:
    """Checkpoints and settings for the model-based baselines (CLI options)."""

    device: str | None = None
    dtype: str | None = None
    batch_size: int | None = None
    clip_model: str = DEFAULT_CLIP
    text_to_image: str | None = None
    llm_model: str | None = None
    llm_scale: int = 5
    images_per_caption: int = 4
    seed: int = 0

    def placement(self) -> dict[str, object]:
        """``device``, ``dtype`` and ``batch_size`` as a baseline's keywords; an unset batch size leaves the
        baseline its own default (each batches for its model's size)."""
        given = {} if self.batch_size is None else {"batch_size": self.batch_size}
        return {"device": self.device, "dtype": self.dtype, **given}


def _lite(_: str | None, options: ModelOptions):
    return load_scorer("lite")


def _mini(_: str | None, options: ModelOptions):
    return load_scorer("mini", device=options.device, dtype=options.dtype, batch_size=options.batch_size)


def _lexical(_: str | None, options: ModelOptions):
    from .lexical import LexicalNormScorer

    return LexicalNormScorer()


def _ca(_: str | None, options: ModelOptions):
    from .complexity_action import ComplexityActionScorer

    return ComplexityActionScorer()


def _cc3m(binary: bool):
    def build(_: str | None, options: ModelOptions):
        from .cc3m import CC3MHeuristicScorer

        return CC3MHeuristicScorer(binary=binary)

    return build


def _minilm(_: str | None, options: ModelOptions):
    from .embedding_ridge import EmbeddingRidgeScorer, SentenceEncoder

    return EmbeddingRidgeScorer(SentenceEncoder(device=options.device))


def _stroop(argument: str | None, options: ModelOptions):
    from .stroop import ClipStroopScorer

    return ClipStroopScorer(argument or options.clip_model, **options.placement())


def _aveclip(argument: str | None, options: ModelOptions):
    from .aveclip import DEFAULT_TEXT_TO_IMAGE, AveClipScorer

    return AveClipScorer(
        argument or options.text_to_image or DEFAULT_TEXT_TO_IMAGE,
        options.clip_model,
        images_per_caption=options.images_per_caption,
        seed=options.seed,
        **options.placement(),
    )


def _llm(argument: str | None, options: ModelOptions):
    from .llm_prompt import LLMPromptScorer

    model = argument or options.llm_model
    if not model:
        raise UserInputError("the llm baseline needs a causal LM: llm:HUB_ID_OR_PATH or --llm-model")
    return LLMPromptScorer(model, scale=options.llm_scale, **options.placement())


@dataclass(frozen=True)
class Baseline:
    label: str
    build: Callable
    #: ``data_id`` of benchmark data the scorer reads or was fitted on (see evaluation.data.IN_SAMPLE_NOTES).
    in_sample: frozenset[str] = frozenset()
    #: Optional dependencies it imports (checked before a run starts).
    needs: tuple[Extra, ...] = ()


BASELINES: dict[str, Baseline] = {
    # mini: heads fitted on the 203 dev captions outside the frozen partition and on the norms' train partition.
    "mini": Baseline("mini (MiniLM + heads, zero-download)", _mini, FITTED_ON_NORMS | {DEV_SPLIT_ID}),
    "lite": Baseline("lite (pure Python, zero-download)", _lite, READS_NORMS | FITTED_ON_DEV),
    "lexical": Baseline("lexical norm average", _lexical, READS_NORMS),
    "ca": Baseline("Complexity & Action (CA)", _ca, needs=(SPACY,)),
    # The CC3M thresholds (CC3MRules) were tuned on the dev split.
    "cc3m": Baseline("CC3M text heuristics (soft)", _cc3m(binary=False), FITTED_ON_DEV, needs=(SPACY,)),
    "cc3m-keep": Baseline("CC3M text heuristics (0/1 keep)", _cc3m(binary=True), FITTED_ON_DEV, needs=(SPACY,)),
    "minilm": Baseline("MiniLM embedding ridge", _minilm, FITTED_ON_NORMS),
    "stroop": Baseline("CLIP Stroop probing", _stroop),
    "aveclip": Baseline("aveCLIP", _aveclip, needs=(DIFFUSERS,)),
    "llm": Baseline("zero-shot LLM prompting", _llm),
}


def parse_scorer_list(text: str) -> list[str]:
    specs = [spec.strip() for spec in text.split(",") if spec.strip()]
    if not specs:
        raise UserInputError("--scorers is empty")
    return list(dict.fromkeys(specs))


def check_extras(benchmarks: list[str], specs: list[str], hint: str = "") -> None:
    """Fail in one line, before any work, when a benchmark or scorer needs an extra that is not installed."""
    needs = [(f"benchmark {name!r}", extra) for name in benchmarks for extra in BENCHMARK_EXTRAS.get(name, ())]
    for spec in specs:
        baseline = BASELINES.get(spec.partition(":")[0])
        needs += [(f"scorer {spec!r}", extra) for extra in (baseline.needs if baseline else ())]
    require(needs, hint)


def build_scorer(spec: str, options: ModelOptions | None = None) -> BenchScorer:
    """The scorer that ``spec`` names (see the module docstring)."""
    options = options or ModelOptions()
    if spec == PUBLISHED:
        return BenchScorer(PUBLISHED, PUBLISHED_LABEL, None)
    name, _, argument = spec.partition(":")
    if name in BASELINES:
        baseline = BASELINES[name]
        scorer = baseline.build(argument or None, options)
        label = baseline.label + (f" ({argument})" if argument else "")
        return BenchScorer(spec, label, scorer, in_sample=baseline.in_sample)
    if "/" not in spec and not Path(spec).expanduser().exists():
        raise UserInputError(
            f"unknown scorer {spec!r}: use one of {', '.join([*BASELINES, PUBLISHED])}, "
            "a Hub id (owner/name) or a local model directory"
        )
    scorer = load_scorer(spec, device=options.device, dtype=options.dtype, batch_size=options.batch_size)
    return BenchScorer(spec, f"ICC student ({spec})", scorer)
