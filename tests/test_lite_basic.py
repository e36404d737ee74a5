"""The embedded lite model: ranking, determinism, lexicon, odd input."""

import random
import re

import numpy as np
import pytest

from modeling_icc import LiteScorer
from modeling_icc.models.lite import features
from modeling_icc.models.lite.lexicon import default_lexicon, lexicon_sources
from modeling_icc.utils.words import words


def test_ranks_the_papers_headline_pair():
    scores = LiteScorer().score(["a man with a white shirt", "a great method of quantifying concreteness"])
    assert scores[0] > scores[1]


def test_scores_are_in_unit_interval_and_deterministic(paper_examples):
    texts = [example["caption"] for example in paper_examples]
    first = LiteScorer().score(texts)
    assert ((first >= 0) & (first <= 1)).all()
    np.testing.assert_array_equal(first, LiteScorer().score(texts))


def test_multiword_entries_match_longest_first():
    spans = default_lexicon().match(words("a fire hydrant next to a white shirt"))
    entries = [entry for _, _, entry in spans]
    assert "fire hydrant" in entries and "white shirt" in entries
    assert "fire" not in entries and "hydrant" not in entries


def test_blank_unicode_and_huge_captions():
    scorer = LiteScorer()
    huge = "a red car on a street " * 20_000
    scores = scorer.score(["", "🐈🐈", "東京タワーの夜景", huge, "café au lait on a table"])
    assert np.isnan(scores[0])
    assert np.isnan(scores[2])  # Japanese: lite reads English only (tests/test_languages.py)
    assert np.isfinite(scores[[1, 3, 4]]).all()


def test_lite_reads_a_bounded_start_of_a_caption():
    """Past ``MAX_CHARS`` characters nothing is read (a bound on work): the form cues there change nothing."""
    scorer = LiteScorer()
    start = "a red car on a street " * (features.MAX_CHARS // 22) + "a" * (features.MAX_CHARS % 22)
    assert len(start) == features.MAX_CHARS
    tail = " Buy now for $9.99! How to draw it? Stock photo 2020-01-01 https://x.com"
    assert scorer.score([start + tail])[0] == scorer.score([start])[0]
    assert scorer.explain(start + tail).score == scorer.explain(start).score
    short = start[:1000]
    assert scorer.score([short + tail])[0] != scorer.score([short])[0]  # the same cues, read


def test_lexicon_records_sources_and_excludes_research_only_mrc():
    sources = lexicon_sources()
    assert {"brysbaert", "muraki", "glasgow", "lancaster"} <= set(sources["sources"])
    assert "mrc" not in sources["sources"] and "mrc" in sources["excluded"]
    assert sources["entries"] > 90_000


def test_lite_reads_the_normalized_caption():
    from modeling_icc import load_scorer

    scorer = load_scorer("lite")
    text = "Love homemade burgers!!! 😂🍔 @chefjohn https://t.co/abc #foodporn"
    explanation = scorer.explain(text)
    assert [word for word, _ in explanation] == ["Love", "homemade", "burgers", "food", "porn"]
    assert explanation.score == pytest.approx(float(scorer.score([text])[0]), abs=1e-6)
    assert scorer.score([text])[0] == scorer.score(["Love homemade burgers! food porn"])[0]


def test_form_cues_are_those_of_one_pattern_with_the_product_code_last():
    """The cues are found in linear time, without the product code's look-aheads, yet exactly as before."""
    one_pattern = re.compile(features._PATTERNS.pattern + "|(?P<code>" + features.PRODUCT_CODE + ")")
    names = dict(features._PATTERN_FEATURES, code="product_listing")
    pieces = ["a", "z", "1", "9", "-", "--", " ", "_", "é", "\u0663", "sale", "new", "2019", "x1", "xl", ".", "com"]
    pieces += ["@", "$", "www.", "http://", "how to", "tips", "'", "stock photo", "jan", "ab-12", "1-a", "\n"]
    rng = random.Random(0)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 14))) for _ in range(20_000)]
    texts += ["xl-2000 sale", "a-b-c-d-1", "1-2-3-4-a", "sale-2019x", "é-ab12", "ab-12_", "new-model-x100"]
    for text in texts:
        assert features.cue_flags(text) == {names[match.lastgroup] for match in one_pattern.finditer(text)}, text
