"""Web junk: alt-text that is not a caption at all, which ICC's own scorers score 0.0 without reading it.

Scraped pools hold alt-text that describes nothing: a camera file name (``DSC_0001.JPG``), a bare URL or
domain, an HTML remnant (``<img src=x>``), a missing-value marker (``nan``, ``None``, ``null``), punctuation,
emoji, a hash or a dimension string (``800x600``). A model trained on captions reads these as unusual short
text and may score them anywhere; a curator expects them near 0. :func:`is_web_junk` recognises them by
form, not by meaning, so that the rule is the same for every model and language:

* the whole caption is a missing-value marker (:data:`MISSING_MARKERS`: the strings pandas reads as NaN,
  plus ``undefined`` and ``nil``), or one file name (a token ending in an extension of
  :data:`FILE_EXTENSIONS`, words in it or not: ``Red-wool-coat.jpg`` names a file, it does not caption it);
* or no token spells a word: each token (split at whitespace, quotes and brackets stripped) is a URL, a
  domain, an e-mail address, a file name, a camera file stem (``IMG_2034``), a hash or UUID, a code mixing
  letters and digits with no known word of three letters or more in it (``800x600``, ``QUEC483HET56``;
  known: the whole words of MiniLM's vocabulary), five consonants and nothing else (``KVJQBJJXCKB``), or
  has no two letters in a row (of any script); HTML tags and entities are taken out first.

Everything else goes to the model, slugs with words included (``Man_with_Horse_Head_Mask``), and so does
text longer than :data:`MAX_JUNK_CHARS`. Most captions have a plain word (a whitespace-bounded run of
letters) and are answered by one regex search; every pattern runs in time linear in the text's length.
"""

from __future__ import annotations

import re

from .caption_text import unicode_form, word_costs

#: Whole captions that mean "no value": pandas' default ``na_values`` (read_csv) plus ``undefined`` and ``nil``.
MISSING_MARKERS = frozenset(
    marker.casefold()
    for marker in (
        "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
        "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null", "undefined", "nil",
    )
)  # fmt: skip
_LONGEST_MARKER = max(map(len, MISSING_MARKERS))
#: Junk is short: longer text (a long URL runs to 2,000 characters) goes to the model without the test, so
#: that a megabyte-long caption costs the test nothing.
MAX_JUNK_CHARS = 4096
#: Extensions that make a token a file name: images, video, documents and web pages.
FILE_EXTENSIONS = (
    "jpg|jpeg|jpe|jfif|png|gif|webp|bmp|tif|tiff|svg|heic|heif|avif|ico|raw|cr2|nef|arw|dng|psd"
    "|mp4|mov|avi|webm|pdf|html|htm|php|asp|aspx|jsp"
)
#: Characters stripped from both ends of a token before it is judged.
_TOKEN_EDGES = "\"'()[]{}.,;:!?*"
#: Five or more Latin letters without a vowel (``KVJQBJJXCKB``): a code, not a word.
_NO_VOWEL_CODE = re.compile(r"[b-df-hj-np-tv-xzB-DF-HJ-NP-TV-XZ]{5,}")
#: Trailing punctuation a plain word may carry.
_WORD_END = r"[\])\"'.,;:!?]*(?!\S)"
#: A whitespace-bounded run of letters, perhaps quoted or punctuated, that is not a no-vowel code: a word, so not
#: junk (the fast path, one search in C: most captions are decided here).
_PLAIN_WORD = re.compile(rf"(?<!\S)[\"'(\[]?(?!{_NO_VOWEL_CODE.pattern}{_WORD_END})[^\W\d_]{{2,}}{_WORD_END}")
_FILE_NAME = re.compile(rf"\S*\.(?:{FILE_EXTENSIONS})(?:[?#&]\S*)?", re.IGNORECASE)
_NOT_A_WORD = re.compile(
    r"(?:https?|s?ftp|file|data|mailto):\S*"  # URLs with a scheme
    r"|www\d?\.\S*"  # URLs without one
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # e-mail addresses
    r"|[\w-]+(?:\.[\w-]+)*\.(?:[a-z]{2}|com|net|org|edu|gov|info|biz|shop|online|site)(?:/\S*)?"  # domains
    r"|(?:img|dsc[nf]?|dcim|pxl|vid|mvimg|pano|sam|gopr|dji)[_-]?\d\S*"  # camera file stems
    r"|[0-9a-f-]*\d[0-9a-f-]*",  # hashes, UUIDs and numbers
    re.IGNORECASE,
)
#: HTML tags and entities. ``[^<>]`` stops at the next bracket, so each ``<`` is scanned past once: linear.
_MARKUP = re.compile(r"<[^<>]*>|&(?:#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]{2,10});", re.IGNORECASE)
_LETTER_RUN = re.compile(r"[^\W\d_]+")


def is_web_junk(text: str) -> bool:
    """Whether ``text`` (a caption with visible content) is web junk (see the module docstring)."""
    if len(text) > MAX_JUNK_CHARS:
        return False
    text = unicode_form(text)
    stripped = text.strip()
    if len(stripped) <= _LONGEST_MARKER and stripped.casefold() in MISSING_MARKERS:
        return True
    if "<" not in text and "&" not in text and _PLAIN_WORD.search(text):
        return False
    tokens = _MARKUP.sub(" ", text).split()
    if len(tokens) == 1 and _FILE_NAME.fullmatch(tokens[0].strip(_TOKEN_EDGES)):
        return True
    return not any(_spells_a_word(token.strip(_TOKEN_EDGES)) for token in tokens)


def _spells_a_word(token: str) -> bool:
    """Whether a token holds a word: two letters in a row outside URLs, file names, hashes and codes."""
    if _NOT_A_WORD.fullmatch(token) or _FILE_NAME.fullmatch(token):
        return False
    runs = _LETTER_RUN.findall(token)
    if any(char.isdigit() for char in token):  # a code (``QUEC483HET56``) spells a word only through a known one
        known = word_costs()
        return any(len(run) > 2 and run.lower() in known for run in runs)
    return any(len(run) > 1 and not _NO_VOWEL_CODE.fullmatch(run) for run in runs)
