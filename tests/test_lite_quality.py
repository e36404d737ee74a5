"""The lite model: quality on the dev split, paper-example ranking, explanations, robustness."""

import math

import numpy as np
import pytest

from modeling_icc import LiteScorer, load_scorer
from modeling_icc.cli.main import main
from modeling_icc.models.lite.features import FEATURE_NAMES, FEATURES
from modeling_icc.models.lite.modeling_lite import default_lite_model
from modeling_icc.training.fit_lite import cross_validate, feature_matrix, fit_lite_model
from modeling_icc.utils.shipped_data import DEV_SPLIT_FILE, dev_split

#: The one paper example lite ranks on the wrong side: a statistic phrased with concrete words.
KNOWN_MISRANKED_ABSTRACT = {"on an average , the sloth travels feet a day"}


@pytest.fixture(scope="module")
def dev():
    rows = dev_split()
    return [row["caption"] for row in rows], np.array([row["concreteness_annotation"] for row in rows], dtype=float)


def test_cross_validated_spearman_on_the_dev_split(dev):
    texts, labels = dev
    report = cross_validate(feature_matrix(texts), labels, folds=10, seeds=(0,))
    assert report["spearman_pooled_mean"] >= 0.72  # achieved: 0.740 (seed 0), goal 0.60
    assert report["spearman_per_fold"]["min"] >= 0.55


def test_shipped_parameters_are_what_the_fitting_script_produces(dev):
    texts, labels = dev
    refit = fit_lite_model(texts, labels, source=DEV_SPLIT_FILE)
    shipped = default_lite_model()
    np.testing.assert_allclose(refit.weights, shipped.weights, rtol=1e-9, atol=1e-12)
    assert refit.bias == pytest.approx(shipped.bias)
    assert shipped.report["cross_validation"]["spearman_pooled_mean"] >= 0.72


def test_calibration_puts_half_the_annotation_split_at_one_half(dev):
    texts, labels = dev
    scores = LiteScorer().score(texts)
    read = ~np.isnan(scores)  # the dev captions in other languages are not read
    assert read.sum() >= 0.95 * len(texts)
    scores, labels = scores[read], labels[read]
    concrete_half = labels >= 2
    accuracy = ((scores >= 0.5) == concrete_half).mean()
    assert accuracy >= 0.75
    assert scores[concrete_half].mean() > 0.5 > scores[~concrete_half].mean()


def test_paper_examples_concrete_above_abstract(paper_examples):
    scores = dict(
        zip(
            [e["caption"] for e in paper_examples],
            LiteScorer().score([e["caption"] for e in paper_examples]),
            strict=True,
        )
    )
    concrete = [e["caption"] for e in paper_examples if e["group"] == "concrete"]
    abstract = [e["caption"] for e in paper_examples if e["group"] == "abstract"]
    lowest_concrete = min(scores[c] for c in concrete)
    misranked = {a for a in abstract if scores[a] >= lowest_concrete}
    assert misranked == KNOWN_MISRANKED_ABSTRACT


@pytest.mark.parametrize(
    "text",
    [
        "a man with a white shirt",
        "How To Create A Social Media Holiday Strategy In 5 Easy Steps",
        "I can't see this image, it is too dark!",
        "Little girl sitting in armchair Stock Photos",
        "Телескоп Celestron Advanced VX 8 — $499 at www.example.com",
        "🐈 on a 🛋️",
        "a cat on a street in İstanbul",  # lower() changes the length of this string
    ],
)
def test_lite_explanations_add_up_to_the_logit(text):
    scorer = LiteScorer()
    explanation = scorer.explain(text)
    total = sum(v for _, v in explanation) + sum(v for _, v in explanation.features) + explanation.bias
    assert total == pytest.approx(explanation.total, abs=1e-9)
    assert explanation.score == pytest.approx(float(scorer.score([text])[0]), abs=1e-6)
    assert explanation.score == pytest.approx(1 / (1 + math.exp(-explanation.total)))


def test_lite_explanation_words_follow_the_caption():
    explanation = LiteScorer().explain("A fire hydrant next to my car")
    words = [text for text, _ in explanation]
    assert words[:2] == ["A", "fire hydrant"]
    contributions = dict(explanation)
    assert contributions["fire hydrant"] > 0 > contributions["my"]
    assert explanation.reasons(1)
    assert LiteScorer().explain("   ").score != LiteScorer().explain("   ").score  # NaN for blank


def test_every_feature_is_documented():
    assert len(FEATURE_NAMES) == len(set(FEATURE_NAMES))
    assert all(len(feature.description) > 20 for feature in FEATURES)


def test_huge_unicode_and_deterministic():
    scorer = LiteScorer()
    texts = ["a red car " * 50_000, "東京タワーの夜景", "🐈🐈🐈", "Ελληνικά", "\x00\x01 control chars"]
    first = scorer.score(texts)
    assert np.isnan(first).tolist() == [False, True, False, True, False]  # Japanese and Greek: not read
    assert ((first[[0, 2, 4]] >= 0) & (first[[0, 2, 4]] <= 1)).all()
    np.testing.assert_array_equal(first, LiteScorer().score(texts))


def test_student_occlusion_explanations(tiny_student_dir):
    scorer = load_scorer(tiny_student_dir, dtype="float32")
    explanations = scorer.explain_many(["a man with a white shirt", "dog"])
    assert [w for w, _ in explanations[0]] == "a man with a white shirt".split()
    full = float(scorer.score(["a man with a white shirt"], raw=True)[0])
    assert explanations[0].total == pytest.approx(full, abs=1e-6)
    without_man = float(scorer.score(["a with a white shirt"], raw=True)[0])
    assert dict(explanations[0])["man"] == pytest.approx(full - without_man, abs=1e-6)
    assert explanations[1][0][1] == pytest.approx(explanations[1].total, abs=1e-6)


def test_cli_explain_text_and_json(capsys):
    assert main(["explain", "--model", "lite", "a man with a white shirt"]) == 0
    out = capsys.readouterr().out
    assert "ICC 0." in out and "raises the score" in out
    assert main(["explain", "--model", "lite", "--json", "a dog", "my idea"]) == 0
    import json

    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["words"][-1]["text"] for line in lines] == ["dog", "idea"]
    assert main(["explain", "--model", "lite", "  "]) == 2


def test_the_fit_reads_the_features_the_scorer_reads():
    """Web noise is normalized away for the fit as for the scorer: no skew between training and serving."""
    texts = ["Glazed Lemon Cake #glazed #lemon #dessert @baker https://x.co/a 🍰", "Love homemade burgers!!!"]
    np.testing.assert_array_equal(feature_matrix(texts), LiteScorer().features(texts))
