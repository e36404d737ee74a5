"""Adversarial captions: the shapes that once made the text path take time faster than linear.

Each shape is a caption of about ``length`` characters built to make a backtracking regular
expression, a per-word loop or a segmentation search do the most work per character: a long
word next to whatever sends a caption down the slow path (``...``, ``!!``, ``#``, ``@``, emoji, an
upper-case triple), long runs of one character, long URLs, hashtags and handles, hyphen-joined
letters and digits (lite's product-code cue), text with no visible content, and the wrappers taken off a
caption (brackets, tags, escapes, file names, preambles). The speed test
and ``benchmarks/speed/adversarial_captions.py`` read the same shapes.
"""

from __future__ import annotations

from collections.abc import Callable

#: A word with no letter three times in a row (a triple would let the old regex match at once).
_WORD_UNIT = "ab"


def _word(length: int) -> str:
    return _WORD_UNIT * (length // len(_WORD_UNIT))


def _repeat(unit: str, length: int) -> str:
    return unit * max(length // len(unit), 1)


def _distinct_hashtags(length: int) -> str:
    """Hashtags of letters that all differ (so no cache helps), about ``length`` characters in all."""
    letters = str.maketrans("0123456789abcdef", "ghijklmnopqrstuv")
    tags, size, index = [], 0, 0
    while size < length:
        tag = "#" + format(index, "x").translate(letters) + "style"
        tags.append(tag)
        size += len(tag) + 1
        index += 1
    return " ".join(tags)


#: Shape name -> builder of a caption of about ``length`` characters.
SHAPES: dict[str, Callable[[int], str]] = {
    "long_word_and_dots": lambda n: _word(n) + " ...",
    "long_word_and_exclamations": lambda n: _word(n) + " !!",
    "long_word_and_hashtag": lambda n: _word(n) + " #tag",
    "long_word_and_handle": lambda n: _word(n) + " @user",
    "long_word_and_emoji": lambda n: _word(n) + " \U0001f600",
    "long_word_and_upper_triple": lambda n: _word(n) + " AAA",
    "one_letter_run": lambda n: "a" * n,
    "letter_triples_in_one_word": lambda n: _repeat("aaab", n),
    "dots": lambda n: "." * n,
    "exclamations_and_questions": lambda n: _repeat("!?", n),
    "decoration": lambda n: "*" * n,
    "spaces_then_a_word": lambda n: " " * n + "dog !!",
    "url": lambda n: "https://example.com/" + _word(n),
    "distinct_hashtags": _distinct_hashtags,
    "one_long_hashtag": lambda n: "#" + _word(n),
    "one_camel_case_hashtag": lambda n: "#" + _repeat("Ab", n),
    "long_handle": lambda n: "@" + _repeat("ab.", n),
    "hyphenated_letters": lambda n: _repeat("a-", n) + " !!",
    "hyphenated_digits": lambda n: _repeat("1-", n) + " !!",
    "letters_digits_hyphens": lambda n: _repeat("ab-1-", n) + " sale",
    "hyphenated_price_words": lambda n: _repeat("sale-", n) + " !!",
    "invisible_characters": lambda n: "\u200b" * n,
    # wrappers (markup, escapes, file names, preambles), taken off before the models read a caption
    "open_angle_brackets": lambda n: "<" * n + " dog",
    "one_unclosed_tag": lambda n: "<b " + _word(n),
    "many_tags": lambda n: _repeat("<b>", n),
    "many_entities": lambda n: _repeat("&amp;", n),
    "nested_escape": lambda n: "&" + _repeat("amp;", n) + "lt;",
    "open_square_brackets": lambda n: "[" * n + "] dog",
    "bbcode_openings": lambda n: _repeat("[url=", n) + "]",
    "file_names_without_spaces": lambda n: _repeat("a.jpg", n),
    "file_name_then_punctuation": lambda n: "a.jpg" + "!" * n + "x",
    "script_openings": lambda n: _repeat("<script>", n),
    "sentences_with_preambles": lambda n: _repeat("x. Image may contain: ", n),
}


def adversarial_captions(length: int) -> dict[str, str]:
    """One caption of about ``length`` characters per shape of :data:`SHAPES`."""
    return {name: build(length) for name, build in SHAPES.items()}
