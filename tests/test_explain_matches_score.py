"""The explained score is the score: ``explain(text).score == score([text])[0]`` for odd captions too (issue 25)."""

import pytest

from modeling_icc.scoring.load import load_scorer

ODD_CAPTIONS = [
    "!!!",
    "...",
    "😀",
    "😀😀 🎉",
    "?!",
    "- - -",
    "a dog!!! 😀",
    "…",
    "#1",
    "I",
    "   x   ",
    "A DOG ON A MAT.",
]


@pytest.mark.parametrize("model", ["lite", "mini"])
def test_explained_score_is_the_score(model):
    scorer = load_scorer(model)
    scores = scorer.score(ODD_CAPTIONS)
    for text, score in zip(ODD_CAPTIONS, scores, strict=True):
        explanation = scorer.explain(text)
        assert explanation.score == pytest.approx(float(score), abs=2e-6), (text, explanation.score, float(score))
    assert [e.score for e in scorer.explain_many(ODD_CAPTIONS)] == pytest.approx(scores.tolist(), abs=2e-6)


def test_lite_terms_add_up_for_captions_without_words():
    """Lite's terms (words, cues, bias) add up to the logit of the score also when the caption has no words
    that lite reads (text in another script, read here with the language step off: lite declines it, NaN)."""
    import copy
    import math

    scorer = copy.copy(load_scorer("lite"))
    scorer.languages = None
    for text in ["狗在海滩上", "собака на пляже"]:
        explanation = scorer.explain(text)
        total = sum(value for _, value in explanation) + sum(v for _, v in explanation.features) + explanation.bias
        assert total == pytest.approx(explanation.total, abs=1e-9)
        assert explanation.score == pytest.approx(1 / (1 + math.exp(-total)), abs=1e-9)
        assert "coverage (no words)" in dict(explanation.features)


def test_student_explained_score_is_the_score(tiny_student_dir, single_thread):
    scorer = load_scorer(str(tiny_student_dir), device="cpu", dtype="float32")
    scores = scorer.score(ODD_CAPTIONS)
    explained = [explanation.score for explanation in scorer.explain_many(ODD_CAPTIONS)]
    assert explained == pytest.approx(scores.tolist(), abs=1e-6)


@pytest.mark.parametrize("model", ["lite", "mini"])
def test_web_junk_is_explained_as_the_zero_it_scores(model):
    """A caption scored 0.0 as web junk is explained as such: no word terms, score 0.0, and the method says why."""
    scorer = load_scorer(model)
    for text in ["DSC_0001.JPG", "<img src=x>", "nan"]:
        explanation = scorer.explain(text)
        assert (explanation.score, list(explanation), explanation.method) == (0.0, [], "web junk")
        assert scorer.score([text])[0] == 0.0
