"""The offline text baselines: lexical norms, Complexity & Action, CC3M heuristics, MiniLM ridge."""

import numpy as np
import pytest
from baseline_checks import assert_scores_in_order, concrete_minus_abstract
from checkpoint_edits import copy_checkpoint, without

from modeling_icc.evaluation.baselines import (
    CC3MHeuristicScorer,
    CC3MRules,
    ComplexityActionScorer,
    EmbeddingRidgeScorer,
    LexicalNormScorer,
)
from modeling_icc.evaluation.baselines.complexity_action import analyze
from modeling_icc.evaluation.baselines.embedding_ridge import (
    RidgeHead,
    SentenceEncoder,
    fit_ridge,
    norm_training_set,
)
from modeling_icc.evaluation.data import brysbaert_unigrams, muraki_phrases
from modeling_icc.evaluation.nlp import parse
from modeling_icc.models.mini.modeling_mini import base_model_path
from modeling_icc.utils.errors import CheckpointError


@pytest.fixture(scope="module")
def minilm() -> EmbeddingRidgeScorer:
    return EmbeddingRidgeScorer()


@pytest.mark.parametrize(
    "make",
    [LexicalNormScorer, ComplexityActionScorer, CC3MHeuristicScorer, lambda: CC3MHeuristicScorer(binary=True)],
    ids=["lexical", "ca", "cc3m", "cc3m-keep"],
)
def test_offline_baselines_score_paper_examples_in_order(make, paper_examples):
    scores = assert_scores_in_order(make(), [example["caption"] for example in paper_examples])
    assert ((scores >= 0) & (scores <= 1)).all()


def test_minilm_scores_paper_examples_in_order_and_separates_groups(minilm, paper_examples):
    assert_scores_in_order(minilm, [example["caption"] for example in paper_examples], atol=1e-4)
    assert concrete_minus_abstract(minilm, paper_examples) > 0.05


def test_the_minilm_encoder_refuses_a_checkpoint_with_a_weight_missing(tmp_path):
    """transformers would fill the weight randomly: every embedding, and so every score, would be off."""
    weight = "encoder.layer.1.attention.self.query.weight"
    broken = copy_checkpoint(base_model_path(), tmp_path / "minilm", without(weight))
    with pytest.raises(CheckpointError, match=rf"minilm' does not match the model: 1 weights missing \({weight}\)"):
        SentenceEncoder(broken, device="cpu")


def test_lexical_separates_the_papers_groups_and_matches_phrases_first(paper_examples):
    scorer = LexicalNormScorer()
    assert concrete_minus_abstract(scorer, paper_examples) > 0.05
    ratings = scorer.lexicon.norms["concreteness"]
    expected = (ratings["fire hydrant"] - 1) / 4  # one phrase, not the mean of "fire" and "hydrant"
    assert scorer.score(["the fire hydrant"])[0] == pytest.approx(expected, abs=1e-6)
    assert scorer.score(["of the and"])[0] == pytest.approx(0.5)  # nothing rated: the scale's midpoint


def test_complexity_and_action_from_the_parse():
    rich, plain, copular = (analyze(doc) for doc in parse(["a man riding a brown horse", "dogs", "the car is red"]))
    assert rich.action and rich.complexity >= 2  # man (relation), horse (attribute + relation)
    assert not plain.action and plain.complexity == 0
    assert not copular.action and copular.complexity == 1  # acomp "red" is an attribute of "car"
    texts = ["a man riding a brown horse", "the car is red"]
    np.testing.assert_array_equal(ComplexityActionScorer().keep(texts), [True, False])
    np.testing.assert_array_equal(ComplexityActionScorer(require_action=False).keep(texts), [True, True])
    np.testing.assert_allclose(ComplexityActionScorer(max_complexity=1).score(texts), [1.0, 0.5])


def test_cc3m_crops_boilerplate_and_applies_each_rule():
    scorer = CC3MHeuristicScorer()
    good, stock, permalink, shouting, lower, repeated, gushing = scorer.check(
        [
            "A dog runs on the beach near the water.",
            "Stock Photo - A red car parked on a street, click to enlarge picture",
            "Embedded image permalink A cat on a sofa",
            "RED CAR ON A STREET",
            "a red car on a street",
            "A dog dog dog dog on a mat",
            "The best and most amazing and wonderful day of my life",
        ]
    )
    assert good.keep and good.soft_score == 1.0
    assert stock.keep and stock.text == "A red car parked on a street"
    assert not permalink.passed["boilerplate"]
    assert not shouting.passed["capitalization"] and not lower.passed["capitalization"]
    assert not repeated.passed["repetition"] and not gushing.passed["sentiment"]
    assert not scorer.check(["Ducati Desmoquattro at the show"])[0].passed["vocabulary"]
    lenient = CC3MHeuristicScorer(CC3MRules(max_oov_ratio=0.5))
    assert lenient.check(["Ducati Desmoquattro at the show"])[0].passed["vocabulary"]
    np.testing.assert_array_equal(
        CC3MHeuristicScorer(binary=True).score([good.text, "RED CAR ON A STREET"]), [1.0, 0.0]
    )


def test_norm_training_set_is_disjoint_from_the_benchmark_partition():
    texts, ratings = norm_training_set()
    held_out = {text for text, _ in brysbaert_unigrams("test") + muraki_phrases("test")}
    assert len(texts) == len(ratings) > 70_000
    assert held_out and held_out.isdisjoint(texts)
    assert ratings.min() >= 1.0 and ratings.max() <= 5.0


def test_ridge_fit_recovers_a_linear_map_and_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    embeddings = rng.normal(size=(400, 8)).astype(np.float32)
    true_coef = rng.normal(size=8)
    ratings = embeddings @ true_coef + 3.0
    head = fit_ridge(embeddings, ratings, alphas=(1e-3,))
    np.testing.assert_allclose(head.coef, true_coef, atol=1e-2)
    loaded = RidgeHead.load(head.save(tmp_path / "head.safetensors"))
    assert loaded.n_train == 400 and loaded.alpha == pytest.approx(1e-3)
    np.testing.assert_allclose(loaded.predict(embeddings), head.predict(embeddings), atol=1e-4)
