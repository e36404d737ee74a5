"""Seeded web noise for captions: what open-web and social-media text adds to a description.

One generator for training and evaluation: mini's fit (``training/fit_mini.py``) adds noisy copies of
its training captions with :data:`TRAINING_NOISE`, and the ``noisy_captions`` benchmark of ``icc
bench`` measures with :data:`BENCHMARK_NOISE`. The two vocabularies share no boilerplate phrase,
handle, generic hashtag, emoji, domain or keyword, so the benchmark does not reward strings the model
was fitted on. A copy depends only on ``(text, kind, seed)`` (``random.Random`` seeded with a
string), never on the process or the order of calls.

Noise types (:data:`NOISE_TYPES`): ``hashtags`` (hashtags of the caption's own words and generic
ones), ``handles``, ``urls``, ``emoji``, ``boilerplate`` ("click to enlarge", "stock photo", ...),
``seo_tail`` (a keyword list of the caption's words and generic keywords), ``casing`` (upper or
title case), ``truncation`` (cut after 60-90% of the words, with "..."), ``punctuation`` (repeated
"!"/"?" and a stretched word), ``social`` (hashtags, handles, emoji and punctuation together) and
``long`` (a keyword tail long enough to push the caption past mini's 128-token window). Two more put
the noise first, so that the description comes late: ``seo_lead`` (the keyword list, then the caption)
and ``social_lead`` (handles, hashtags and emoji, then the caption with repeated punctuation). Chatter
("what a day!") is not noise here: it is text about something other than the picture, which a
concreteness score should weigh, so no copy asks a model to ignore it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .function_words import FUNCTION_WORDS
from .words import words

NOISE_TYPES = (
    "hashtags",
    "handles",
    "urls",
    "emoji",
    "boilerplate",
    "seo_tail",
    "casing",
    "truncation",
    "punctuation",
    "social",
    "long",
    "seo_lead",
    "social_lead",
)
#: Words in a ``long`` copy's keyword tail: with the caption, well past 128 word pieces.
LONG_TAIL_WORDS = 140


@dataclass(frozen=True)
class NoiseVocabulary:
    """The strings a noise type draws from (see the module docstring)."""

    boilerplate: tuple[str, ...]
    handles: tuple[str, ...]
    hashtags: tuple[str, ...]
    emoji: tuple[str, ...]
    domains: tuple[str, ...]
    keywords: tuple[str, ...]


TRAINING_NOISE = NoiseVocabulary(
    boilerplate=(
        "click to enlarge",
        "stock photo",
        "image may contain",
        "photo by",
        "all rights reserved",
        "high resolution",
        "free download",
        "royalty free",
        "view larger image",
        "shop now",
        "read more",
        "limited offer",
    ),
    handles=("@jenny_smith", "@photo.daily", "@travelwithmike", "@the_foodie", "@anna88", "@studio_k", "@bestshots"),
    hashtags=("#instagood", "#photooftheday", "#love", "#nofilter", "#tbt", "#follow", "#instamood", "#weekend"),
    emoji=("😍", "🔥", "❤️", "👍", "😂", "✨", "🙌", "💯", "📸", "🌞"),
    domains=("https://t.co/", "http://bit.ly/", "https://instagram.com/p/", "www.flickr.com/photos/"),
    keywords=("wallpaper", "hd", "free", "download", "image", "picture", "photo", "2019", "background", "cheap"),
)
BENCHMARK_NOISE = NoiseVocabulary(
    boilerplate=(
        "tap to zoom",
        "stock image",
        "see more",
        "buy now",
        "hd wallpaper",
        "for sale",
        "copyright",
        "best price",
        "new arrival",
        "pin it",
        "editorial use only",
        "in stock",
    ),
    handles=("@mark.lee", "@sunny_days", "@urbanlens", "@kate_cooks", "@mr_bean22", "@pixelhunter", "@nomad.life"),
    hashtags=("#picoftheday", "#instadaily", "#beautiful", "#happy", "#followme", "#repost", "#mood", "#goals"),
    emoji=("😊", "🥰", "👌", "🎉", "💕", "🌟", "😎", "🤩", "🙏", "💥"),
    domains=(
        "https://www.pinterest.com/pin/",
        "http://tinyurl.com/",
        "https://shop.example.net/item/",
        "www.etsy.com/listing/",
    ),
    keywords=("ideas", "inspiration", "best", "online", "2024", "diy", "trends", "gift", "cute", "aesthetic"),
)


def content_words(text: str) -> list[str]:
    """The caption's lower-case words that are not function words or digits (hashtag and keyword material)."""
    return [word for word in words(text) if word not in FUNCTION_WORDS and word.isalpha()]


def _hashtags(text: str, rng: random.Random, vocabulary: NoiseVocabulary, n_generic: int) -> list[str]:
    own = content_words(text)
    tags = []
    for _ in range(rng.randint(2, 4) if own else 0):
        first = rng.choice(own)
        if rng.random() < 0.4 and len(own) > 1:
            second = rng.choice(own)
            tags.append("#" + (first + second if rng.random() < 0.5 else first.title() + second.title()))
        else:
            tags.append("#" + first)
    tags += rng.sample(vocabulary.hashtags, n_generic)
    rng.shuffle(tags)
    return tags


def _url(rng: random.Random, vocabulary: NoiseVocabulary) -> str:
    code = "".join(rng.choice("abcdefghijkmnpqrstuvwxyzABCDEFGH0123456789") for _ in range(rng.randint(6, 11)))
    return rng.choice(vocabulary.domains) + code


def _keywords(text: str, rng: random.Random, vocabulary: NoiseVocabulary, n: int) -> list[str]:
    own = content_words(text) or list(vocabulary.keywords)
    return [rng.choice(own) if rng.random() < 0.6 else rng.choice(vocabulary.keywords) for _ in range(n)]


def _stretch(word: str, rng: random.Random) -> str:
    vowels = [i for i, char in enumerate(word) if char in "aeiouy"]
    if not vowels:
        return word
    i = rng.choice(vowels)
    return word[:i] + word[i] * rng.randint(3, 6) + word[i + 1 :]


def add_noise(text: str, kind: str, vocabulary: NoiseVocabulary, seed: int = 0) -> str:
    """A noisy copy of ``text`` of the given ``kind`` (one of :data:`NOISE_TYPES`), deterministic in all three."""
    if kind not in NOISE_TYPES:
        raise ValueError(f"unknown noise type {kind!r}; choose from {', '.join(NOISE_TYPES)}")
    rng = random.Random(f"{seed}\x1f{kind}\x1f{text}")
    text = text.strip()
    if kind == "hashtags":
        return f"{text} {' '.join(_hashtags(text, rng, vocabulary, rng.randint(1, 3)))}"
    if kind == "handles":
        handles = rng.sample(vocabulary.handles, rng.randint(1, 2))
        return f"{' '.join(handles)} {text}" if rng.random() < 0.5 else f"{text} via {' '.join(handles)}"
    if kind == "urls":
        return f"{text} {_url(rng, vocabulary)}" if rng.random() < 0.7 else f"{_url(rng, vocabulary)} {text}"
    if kind == "emoji":
        marks = "".join(rng.choice(vocabulary.emoji) for _ in range(rng.randint(1, 4)))
        return f"{text} {marks}" if rng.random() < 0.7 else f"{marks} {text}"
    if kind == "boilerplate":
        phrase = rng.choice(vocabulary.boilerplate)
        phrase = phrase.title() if rng.random() < 0.5 else phrase
        return f"{text} - {phrase}" if rng.random() < 0.6 else f"{phrase}: {text}"
    if kind == "seo_tail":
        return f"{text} {', '.join(_keywords(text, rng, vocabulary, rng.randint(4, 10)))}"
    if kind == "casing":
        return text.upper() if rng.random() < 0.5 else text.title()
    if kind == "truncation":
        tokens = text.split()
        if len(tokens) < 4:
            return text
        keep = max(3, round(len(tokens) * rng.uniform(0.6, 0.9)))
        return " ".join(tokens[:keep]) + ("..." if keep < len(tokens) else "")
    if kind == "punctuation":
        tokens = text.rstrip(".!?").split()
        own = [i for i, token in enumerate(tokens) if token.lower() in set(content_words(text))]
        if own:
            i = rng.choice(own)
            tokens[i] = _stretch(tokens[i], rng)
        return " ".join(tokens) + rng.choice(("!!!", "!!!!", "!!", "?!?!", "!!!!!!"))
    if kind == "social":
        noisy = add_noise(add_noise(text, "punctuation", vocabulary, seed), "emoji", vocabulary, seed)
        noisy = add_noise(noisy, "handles", vocabulary, seed)
        return f"{noisy} {' '.join(_hashtags(text, rng, vocabulary, rng.randint(2, 4)))}"
    if kind == "long":  # the caption, then a keyword tail that pushes it past mini's window
        return f"{text} | {', '.join(_keywords(text, rng, vocabulary, LONG_TAIL_WORDS))}"
    if kind == "seo_lead":
        return f"{', '.join(_keywords(text, rng, vocabulary, rng.randint(4, 10)))} - {text}"
    # social_lead: handles, hashtags and emoji first, then the caption with repeated punctuation.
    handles = " ".join(rng.sample(vocabulary.handles, rng.randint(1, 2)))
    tags = " ".join(_hashtags(text, rng, vocabulary, rng.randint(2, 4)))
    marks = "".join(rng.choice(vocabulary.emoji) for _ in range(rng.randint(1, 4)))
    return f"{handles} {tags} {marks} {add_noise(text, 'punctuation', vocabulary, seed)}"
