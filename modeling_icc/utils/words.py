"""Word tokenization shared by the norm readers, the lite lexicon builder and scorer, and mini's fit.

Every side must split text identically, otherwise multiword entries such as
"fire hydrant" would never match. The rule is deliberately simple (one regex)
so that it runs at tens of thousands of captions per second in pure Python.
"""

from __future__ import annotations

import re

# A word: letters/digits, optionally joined by an apostrophe or hyphen ("don't", "t-shirt").
WORD_PATTERN = re.compile(r"[a-z0-9]+(?:['\u2019\-][a-z0-9]+)*")


def words(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` (curly apostrophes folded to ASCII)."""
    return WORD_PATTERN.findall(text.lower().replace("\u2019", "'"))


def normalize_entry(entry: str) -> str:
    """The lookup key of a lexicon entry: its words joined by single spaces."""
    return " ".join(words(entry))
