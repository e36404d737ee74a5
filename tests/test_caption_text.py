"""Web-caption normalization: hashtags, handles, URLs, emoji and repeats rewritten; plain captions untouched."""

import signal
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from modeling_icc import LiteScorer
from modeling_icc.testing.captions import SHAPES
from modeling_icc.utils.caption_text import (
    EMOJI_NAMES,
    LINKS_PLACEHOLDER,
    MAX_SEGMENT,
    MAX_SPLIT_HASHTAGS,
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


#: Characters per adversarial caption: large enough that quadratic time takes minutes, small enough to be quick.
ADVERSARIAL_LENGTH = 200_000
#: Seconds allowed per caption: generous, so that a loaded 2-core machine does not fail it (linear time: ~0.1 s).
ADVERSARIAL_SECONDS = 2.0


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise ``TimeoutError`` in the block after ``seconds`` (regex matching checks for signals, so it stops too)."""

    def expire(signum, frame):
        raise TimeoutError(f"took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def lite() -> LiteScorer:
    scorer = LiteScorer()
    scorer.score(["a warm-up caption #warmup"])  # the lexicon and word list load outside the deadline
    return scorer


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM")
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_adversarial_captions_normalize_and_score_in_linear_time(shape, lite):
    text = SHAPES[shape](ADVERSARIAL_LENGTH)
    with deadline(ADVERSARIAL_SECONDS):
        normalize_caption(text)
    with deadline(ADVERSARIAL_SECONDS):
        lite.score([text])


def test_one_unicode_form_nfc_nfd_and_width():
    composed = "Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e on a table!!"
    assert normalize_caption(unicodedata.normalize("NFD", composed)) == normalize_caption(composed)
    assert normalize_caption("\uff44\uff4f\uff47 on a \uff42\uff45\uff44") == "dog on a bed"
    assert normalize_caption("wait\u2026. what") == "wait... what"
    text = "Ünïcode café’s menu"
    assert normalize_caption(text) is text  # already in its normal form: returned as it came
    assert normalize_caption("Angel Wings\u2122 Arrangement") == "Angel Wings\u2122 Arrangement"  # not WingsTM
    assert normalize_caption("\U0001d41d\U0001d428\U0001d420 on a bed!!") == "dog on a bed!"  # styled letters


def test_segmentation_leaves_runs_longer_than_any_hashtag():
    run = "ab" * (MAX_SEGMENT // 2 + 1)
    assert segment(run) == run and segment("ab" * 4) != "ab" * 4


def test_only_the_first_hashtags_of_a_caption_are_split():
    """Past ``MAX_SPLIT_HASHTAGS`` hashtags, the rest are read as written without ``#`` (digits keep it)."""
    text = " ".join(["#nofilter"] * MAX_SPLIT_HASHTAGS + ["#nofilter", "#VintageStyle", "#6"])
    words = normalize_caption(text).split(" ")
    assert words[: 2 * MAX_SPLIT_HASHTAGS] == ["no", "filter"] * MAX_SPLIT_HASHTAGS
    assert words[2 * MAX_SPLIT_HASHTAGS :] == ["nofilter", "VintageStyle", "#6"]
    assert normalize_caption(normalize_caption(text)) == normalize_caption(text)
