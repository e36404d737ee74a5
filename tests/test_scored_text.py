"""What every scorer reads: a caption with nothing visible is NaN, and one text in any Unicode form is one score."""

import math
import unicodedata

import numpy as np
import pytest

from modeling_icc import load_scorer
from modeling_icc.cli.main import main
from modeling_icc.scoring.inputs import has_content, prepare_texts

#: Captions that show nothing: invisible format characters (Cf), controls (Cc), a NUL, whitespace between them.
NOTHING_VISIBLE = [
    "\u200b\u200b",
    "\ufeff",
    "\u200b \u200c",
    "\u2060",
    "\u00ad",
    "\x01\x02\x7f",
    "\x00",
    " \t\u200d\n",
]
#: Captions that show something, however little or unusual.
VISIBLE = ["a", "\u200bdog\u200b", "\x00a red car", "\U0001f408", "\ue000", "\u0301", "Café"]


@pytest.fixture(scope="module", params=["lite", "mini", "student"])
def scorer(request, tiny_student_dir):
    if request.param == "student":
        return load_scorer(tiny_student_dir, dtype="float32")
    return load_scorer(request.param)


def test_visible_content_is_decided_once():
    assert not any(has_content(text) for text in [*NOTHING_VISIBLE, "", "   "])
    assert all(has_content(text) for text in VISIBLE)
    valid, mask = prepare_texts(["a dog", *NOTHING_VISIBLE, "\u200bdog"])
    assert valid == ["a dog", "\u200bdog"]
    assert mask.tolist() == [True] + [False] * len(NOTHING_VISIBLE) + [True]


def test_captions_with_nothing_visible_score_nan(scorer):
    scores = scorer.score(["a dog on a beach", *NOTHING_VISIBLE, "\u200ba dog on a beach"])
    assert np.isnan(scores[1:-1]).all(), scores
    assert np.isfinite(scores[[0, -1]]).all()


@pytest.mark.parametrize("name", ["lite", "mini"])
def test_explaining_nothing_visible_is_nan(name, capsys):
    explanation = load_scorer(name).explain("\u200b\ufeff")
    assert list(explanation) == [] and math.isnan(explanation.score)
    assert main(["explain", "--model", name, "\u200b\ufeff"]) == 2
    assert "cannot explain a blank caption" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["lite", "mini"])
def test_one_score_whatever_the_unicode_form(name):
    scorer = load_scorer(name)
    accented = "Crème brûlée and a café au lait on a wooden table in Zürich"
    fullwidth = "".join(chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else char for char in "a dog on a red sofa")
    texts = [
        unicodedata.normalize("NFC", accented),
        unicodedata.normalize("NFD", accented),
        "a dog on a red sofa",
        fullwidth,
    ]
    assert texts[0] != texts[1] and texts[2] != texts[3]
    scores = scorer.score(texts)
    assert scores[0] == scores[1]
    assert scores[2] == scores[3]


def test_a_lone_surrogate_is_read_as_the_replacement_character(scorer):
    """``json.loads`` makes a lone surrogate of the escape ``"\\ud800"``; no tokenizer or language identifier takes
    one. Every model reads it as U+FFFD, as the file readers write it: the same score and language, in English
    and in another language, when scored and when explained."""
    with_surrogate = ["a dog \ud800 on a red sofa", "ein Hund \ud800 liegt auf dem roten Sofa im Wohnzimmer"]
    replaced = [text.replace("\ud800", "\ufffd") for text in with_surrogate]
    scores = scorer.score(with_surrogate)
    assert np.array_equal(scores, scorer.score(replaced), equal_nan=True)
    assert np.isfinite(scores[0]) and np.isnan(scores[1])
    explanations = scorer.explain_many(with_surrogate)
    assert [explanation.language for explanation in explanations] == ["en", "de"]
    assert math.isclose(explanations[0].score, scores[0], rel_tol=1e-5) and math.isnan(explanations[1].score)
