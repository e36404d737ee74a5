"""Web-caption normalization: hashtags, handles, URLs, emoji and repeats rewritten; plain captions untouched."""

import pytest

from modeling_icc.utils.caption_text import (
    EMOJI_NAMES,
    LINKS_PLACEHOLDER,
    needs_normalization,
    normalize_caption,
    segment,
)
from modeling_icc.utils.shipped_data import cc3m_captions, dev_split


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("#vintagestyle dress", "vintage style dress"),
        ("#VintageStyle", "Vintage Style"),
        ("#sunsetphotography #beachlife", "sunset photography beach life"),
        ("#dogsofinstagram #photooftheday", "dogs of ins tag ram photo of the day"),
        ("Red car #RedCar2020", "Red car Red Car 2020"),
        ("Candy Apple Series #6", "Candy Apple Series #6"),
        ("a cat @jane_doe on a mat", "a cat on a mat"),
        ("email me at jane@example.com", "email me at jane@example.com"),
        ("see https://t.co/AbC123 and www.shop.com/x now", "see and now"),
        ("burgers 😂🍔 for lunch", "burgers for lunch"),
        ("Love it!!!", "Love it!"),
        ("what?!?!", "what?"),
        ("***** sale *****", "* sale *"),
        ("wait.... what", "wait... what"),
        ("soooo cute", "so cute"),
        ("goooood morning", "good morning"),
        ("The best tunes - Part III", "The best tunes - Part III"),
        ("1000 people in 2000", "1000 people in 2000"),
        ('a 6\'\' pipe and ""quotes""', 'a 6\'\' pipe and ""quotes""'),
        ("@only @handles", "@only @handles"),
    ],
)
def test_normalization(text, expected):
    assert normalize_caption(text) == expected


def test_variants_names_and_placeholders():
    assert normalize_caption("🍕 night", emoji=EMOJI_NAMES) == "slice of pizza night"
    assert normalize_caption("@bob at www.x.com", links=LINKS_PLACEHOLDER) == "@user at http"


def test_segmentation_prefers_few_frequent_words_and_keeps_unknown_runs():
    assert segment("sunset") == "sunset"  # a known word stays whole
    assert segment("nofilter") == "no filter"
    assert segment("xqzw") == "xqzw"  # nothing to split into


def test_fast_path_returns_plain_captions_unchanged():
    plain = ["a man with a white shirt", "Ünïcode café’s menu", "Cruise ship - sailing from port on sunset"]
    for text in plain:
        assert not needs_normalization(text)
        assert normalize_caption(text) is text
    # A triple character takes the slow path, which changes nothing here.
    assert normalize_caption("sailing on sunset... 1000 boats") == "sailing on sunset... 1000 boats"


def test_idempotent_on_real_and_noisy_captions():
    texts = [row["caption"] for row in dev_split()] + cc3m_captions()[:2000]
    texts += ["Love homemade burgers!!! 😂😂🍔 @chefjohn https://t.co/abc #foodporn #nofilter #yummyyyy", "!@x!"]
    for text in texts:
        once = normalize_caption(text)
        assert normalize_caption(once) == once, text
