"""Web junk: alt-text that is no caption at all, which ICC's own scorers score 0.0 without reading it.

Scraped pools hold alt-text that describes nothing. :func:`web_junk_kind` recognises it by form, not by
meaning, so that the rule is the same for every model and language, and decides by kind, not by example
(``docs/usage.md``, "Bad input"; ``docs/quality.md``, "Web junk", for why each kind is what it is). A caption
is first taken out of its wrappers (:func:`~.caption_wrappers.strip_wrappers`: HTML and BBCode tags, escaped
characters, a tagger's preamble, a file name's extension and what an image host adds to it), as ICC's scorers
read it; it is web junk when what is left is

* **nothing**: markup alone (``<img src="x.jpg">``, ``<br/>``, ``&nbsp;``, ``&lt;img ...&gt;``);
* **a missing-value marker** (:data:`MISSING_MARKERS`: the strings pandas reads as NaN, ``undefined``, ``nil``);
* **a platform's note that there is no description** (:data:`BOILERPLATE`: ``No photo description
  available``, ``This image has an empty alt attribute``), at the start of the caption (a tagger's list after
  its preamble, ``Image may contain: 1 person``, is a caption: the preamble is a wrapper);
* **a placeholder**: words that name the picture's slot or a default file name, one of them at least a slot
  placeholder (:data:`SLOT_PLACEHOLDERS`: ``thumbnail``, ``image001``, ``Untitled-1``, ``Screen Shot 2019-05-02
  at 3.45.12 PM``) or an ordinary word beside an ID or an extension (:data:`ORDINARY_PLACEHOLDERS`:
  ``attachment-1234``, ``file.mp3``; ``video`` and ``file size`` alone are read, as the word and phrase they
  are); or an instruction to the reader first (:data:`READER_INSTRUCTIONS`, two words at least) that is a
  command (:data:`COMMANDS`: ``Zoom in``) or has its target (:data:`INSTRUCTION_TARGETS`: ``click here``, ``read
  more``; not ``go by the name of``); with nothing else but numbers, hexadecimal IDs, single Latin letters and
  :data:`SLOT_WORDS` (``no``, ``of``, ``larger``, ``stock``);
* **a dimension string** (``800x600``, ``1920 × 1080 px``), or **a file numbered, not named** (``1.jpg``);
* **no word**: no token (split at whitespace, quotes and brackets stripped) spells a word. A token spells a word
  when it is none of: a URL, a domain (:data:`TOP_LEVEL_DOMAINS`), an e-mail address, a path with a file name, a
  camera file stem (``IMG_2034``, ``DSC_0001``), a hash, UUID or other run of 8+ hexadecimal digits with a digit
  in it; and it holds a letter of a script in which one letter can be a word or that is written without spaces
  (:data:`_WORD_LETTER`: Han, kana, Hangul, Thai, Lao, Khmer, Myanmar, Tibetan, the Brahmic scripts,
  Ethiopic, ...), or two letters in a row that are not five consonants of a code (``KVJQBJJXCKB``), or, with
  digits, a known word of :data:`MIN_KNOWN_IN_CODE` letters or more that is no placeholder (MiniLM's
  vocabulary: ``iPhone12``), a part between separators of three letters or more with a vowel
  (``minion-decoracion2``) or the shape of a short name (:func:`_is_short_name`: ``747``, ``A380``, ``F-16``,
  ``R2-D2``, ``E=mc2``, ``H2O``; not ``41DHKD2S``, ``0.3289374709``, ``12345``, ``12:34:56``).

So a script without spaces is never junk for being short (``猫``, ``山``, ``한 개``), numbers of up to four digits
and short model names are read (a year, a route, an aircraft), and a descriptive file name is read without its
extension (``Fox Crochet Hat.jpg`` as ``Fox Crochet Hat``), while a URL stays junk whatever its path says.
Everything else goes to the model, slugs with words included (``Man_with_Horse_Head_Mask``), and so does text
longer than :data:`MAX_JUNK_CHARS`.

Most captions are decided by one regex search after a few substring tests (the fast path: a plain word, a
whitespace-bounded run of letters, that is none of the words placeholders, instructions, slot words and
preambles are made of). Every pattern runs in time linear in the text's length, and nothing here reads more than
:data:`MAX_JUNK_CHARS` characters (``tests/test_web_junk.py`` checks both by construction).
"""

from __future__ import annotations

import re

from .caption_text import unicode_form, word_costs
from .caption_wrappers import EXTENSION_PATTERN, FILE_EXTENSIONS, PREAMBLE_KINDS, strip_wrappers, trie_pattern

__all__ = ["FILE_EXTENSIONS", "MAX_JUNK_CHARS", "MISSING_MARKERS", "is_web_junk", "web_junk_kind"]

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
#: Words that name a picture's slot or a file nobody named, and nothing else: the slot (``image``,
#: ``thumbnail``), default and test names (``untitled``, ``placeholder``, ``foo``), what an app or a stock site
#: calls its files (``screenshot``, ``shutterstock``), and extensions said as words (``jpg``). With slot words
#: only around them they are junk (``Thumbnail``, ``Image 3 of 12``, ``No image available``).
SLOT_PLACEHOLDERS = frozenset(
    """image images img imgs photo photos foto fotos picture pictures pic pics pix thumbnail thumbnails bild bilder
    imagen immagine untitled unnamed noname placeholder foo foobar baz qux quux asdf lorem ipsum tmp screenshot
    screenshots alt alttext caption description tumblr fb whatsapp shutterstock istock istockphoto pexels unsplash
    pixabay depositphotos dreamstime noimage sku asin ean upc isbn jpg jpeg png gif webp svg bmp tif tiff heic pdf
    mp3 mp4 html htm php""".split()
)
#: Ordinary words that name a file or a slot only beside an ID or a slot placeholder (``attachment-1234``,
#: ``Sample image``); alone or with slot words they are read, as the words and phrases they also are (``video``,
#: ``file size``, ``new media``: the word and phrase benchmarks hold them).
ORDINARY_PLACEHOLDERS = frozenset(
    """thumb thumbs unknown default dummy temp spacer bitmap blob sample example test testing attachment attachments
    file files document
    documents doc docs archive download downloads upload uploads snapshot media gallery slideshow video videos
    scan scans capture clipboard blank ref""".split()
)
PLACEHOLDER_WORDS = SLOT_PLACEHOLDERS | ORDINARY_PLACEHOLDERS
#: Words that tell a reader what to do. One of :data:`COMMANDS` first, with more words from these sets, is junk
#: (``click here``, ``Zoom in``); one of the rest first is junk only with a second instruction or one of
#: :data:`INSTRUCTION_TARGETS` (``read more``, ``add to cart``, ``Tap to zoom``), for those lead ordinary phrases
#: too (``go by the name of``, ``play with``, ``add to``). One alone (``Watch``, ``Play``) or after other words
#: (``new in the shop``) is read, as it may name what is shown.
COMMANDS = frozenset("click zoom enlarge subscribe loading".split())
READER_INSTRUCTIONS = COMMANDS | frozenset(
    """tap expand read learn see view watch play open buy shop order add visit go continue share like follow pin tweet
    load next previous prev skip""".split()
)
#: What an instruction points at on a web page, which makes it one (``more``, ``here``, ``cart``).
INSTRUCTION_TARGETS = frozenset(
    """here more now cart basket bag wishlist link page site website button details info information larger full
    fullsize size reading this gallery slideshow video videos""".split()
)
#: Words that may stand beside a placeholder or an instruction without making it a caption.
SLOT_WORDS = frozenset(
    """the a an of in on at by for to from with and or no not this that it its my your our his her their here
    there now more less all full large larger small smaller big bigger original size fullsize resolution high
    low hd hq res quality new old copy final edit edited version cropped crop resized px pixels am pm text design
    title found available unavailable missing broken error coming soon yet currently please wait details info
    information page link site website button icon logo banner header background cover preview reading
    featured main product item stock royalty free vector screen shot cart basket has is empty attribute name may
    be contain contains""".split()
)
#: Generic and common new top-level domains that make ``name.tld`` a domain (two-letter ones are countries).
TOP_LEVEL_DOMAINS = tuple(
    """com net org edu gov mil int info biz name pro mobi asia travel xyz top shop online site store club icu vip
    live app tech fun space website blog dev art design cloud life world today news studio media photo
    photography pics pictures gallery link click email digital agency company network group global social""".split()
)
#: A platform's note that a picture has no alt-text, at the start of the caption.
BOILERPLATE = re.compile(
    r"(?:no (?:photo |image |picture |alt )?(?:description|text) (?:is )?available"
    r"|this image has an empty alt attribute|(?:there is )?no alt text)",
    re.IGNORECASE,
)
#: Kinds of web junk, as :func:`web_junk_kind` names them.
KIND_MARKUP = "a wrapper with nothing in it"
KIND_MISSING = "a missing-value marker"
KIND_BOILERPLATE = "a platform's note of no description"
KIND_PLACEHOLDER = "a placeholder"
KIND_DIMENSIONS = "a dimension string"
KIND_NUMBERED_FILE = "a file numbered, not named"
KIND_NO_WORD = "no word"
#: The most characters, in up to three parts of at most two letter or digit runs, of a short name with digits.
MAX_NAME_CHARS = 6
MAX_NAME_DIGITS = 4
MAX_NAME_LETTERS = 3
#: The shortest known word that makes a code with digits a word (``iPhone12``): shorter ones turn up in random
#: codes by chance (``QUEC483HET56``).
MIN_KNOWN_IN_CODE = 4
#: The fewest digits in a row that make an ordinary placeholder a file's name (``attachment-1234``, not
#: ``file 13``).
MIN_ID_DIGITS = 3

#: Characters stripped from both ends of a token before it is judged.
_TOKEN_EDGES = "\"'()[]{}.,;:!?*"
#: Five or more Latin letters without a vowel (``KVJQBJJXCKB``): a code, not a word.
_NO_VOWEL_CODE = re.compile(r"[b-df-hj-np-tv-xzB-DF-HJ-NP-TV-XZ]{5,}")
#: Trailing punctuation a plain word may carry.
_WORD_END = r"[\])\"'.,;:!?]*(?!\S)"
#: Letters of the scripts in which one letter (a syllable or a character) can be a word, or words are written
#: without spaces: Brahmic scripts, Thai, Lao, Tibetan, Myanmar, Hangul, Ethiopic, Cherokee, Canadian
#: syllabics, Khmer, Tai Tham, CJK radicals and ideographs, kana, Bopomofo, Yi.
_WORD_LETTER = re.compile(
    "(?=[^\\W\\d_])["
    "\u0900-\u0dff\u0e00-\u0eff\u0f00-\u0fff\u1000-\u109f\u1100-\u11ff\u1200-\u139f\u13a0-\u13ff\u1400-\u167f"
    "\u1780-\u17ff\u19e0-\u19ff\u1a20-\u1aaf\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3038-\u303c"
    "\u3040-\u30ff\u3100-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7ff"
    "\uf900-\ufaff\U00020000-\U0003134f]"
)
_NOT_A_WORD = re.compile(
    r"(?:[a-z][a-z0-9+.-]*:)?//\S*|(?:data|mailto|file):\S*"  # URLs with a scheme, or protocol-relative
    r"|www\d?\.\S*|localhost(?:[:/]\S*)?"  # URLs without one
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # e-mail addresses
    rf"|[\w-]+(?:\.[\w-]+)*\.(?:[a-z]{{2}}|{trie_pattern(TOP_LEVEL_DOMAINS)})(?:/\S*)?"  # domains
    r"|_?(?:img|imag|mg|dsc[nf]?|dcim|pxl|vid|mvimg|pano|sam|gopr|gh|gx|dji)[_-]?\d\S*"  # camera file stems
    rf"|\S*\.{EXTENSION_PATTERN}(?![^\W_])\S*"  # paths with a file name (a bare name lost its extension)
    r"|(?=[0-9a-f-]{8})[0-9a-f-]*\d[0-9a-f-]*",  # hashes, UUIDs and other hexadecimal ids
    re.IGNORECASE,
)
_DIMENSIONS = re.compile(r"\d{1,5}\s*[x×X*]\s*\d{1,5}(?:\s*(?:px|pixels))?", re.IGNORECASE)
#: A file name with no letter in its name (``1.jpg``, ``2019-05-02_1234.png``): numbered, not named.
_NUMBERED_FILE = re.compile(rf"[\W\d_]+\.{EXTENSION_PATTERN}(?![^\W_])\S*", re.IGNORECASE)
_LETTER_RUN = re.compile(r"[^\W\d_]+")
_DIGIT_RUN = re.compile(r"\d+")
_ALNUM_PART = re.compile(r"[^\W_]+")
_KIND_RUN = re.compile(r"\d+|[^\W\d_]+")
_VOWEL = re.compile(r"[aeiouyAEIOUY]|[^\x00-\x7f]")
_SCREEN_SHOT = re.compile(r"screen\s+shot")
_PATH = re.compile(rf"\S*\.{EXTENSION_PATTERN}(?![^\W_])\S*", re.IGNORECASE)
#: An ID in hexadecimal digits: eight or more, a digit among them (lower case).
_HEX_ID = re.compile(r"(?=[0-9a-f]{8})[0-9a-f]*\d[0-9a-f]*")
#: Words the fast path does not decide on: those of placeholders, and those a preamble may take away.

_UNDECIDED_WORDS = (
    PLACEHOLDER_WORDS
    | READER_INSTRUCTIONS
    | INSTRUCTION_TARGETS
    | SLOT_WORDS
    | {word for kind in PREAMBLE_KINDS for word in re.findall(r"[a-z]+", kind)}
)
#: A whitespace-bounded run of letters, perhaps quoted or punctuated, that is not a no-vowel code: a word, so not
#: junk unless it is one of :data:`_UNDECIDED_WORDS` (the fast path: one search in C decides most captions).
_PLAIN_WORD = re.compile(rf"(?<!\S)[\"'(\[]?(?!{_NO_VOWEL_CODE.pattern}{_WORD_END})([^\W\d_]{{2,}}){_WORD_END}")
#: :data:`_UNDECIDED_WORDS` as written in lower case, capitalized and in capitals: one lookup for most words.
_UNDECIDED_SPELLINGS = frozenset(
    spelling for word in _UNDECIDED_WORDS for spelling in (word, word.capitalize(), word.upper())
)


def is_web_junk(text: str) -> bool:
    """Whether ``text`` (a caption with visible content) is web junk (see the module docstring)."""
    return web_junk_kind(text) is not None


def web_junk_kind(text: str) -> str | None:
    """What kind of web junk ``text`` is (``KIND_*``, ``"no word"`` followed by what its tokens are), or ``None``
    for a caption that goes to the model."""
    if len(text) > MAX_JUNK_CHARS:
        return None
    text = unicode_form(text).strip()
    if len(text) <= _LONGEST_MARKER and text.casefold() in MISSING_MARKERS:
        return KIND_MISSING
    if _has_a_plain_word(text):
        return None
    return _judge(text)


def _has_a_plain_word(text: str) -> bool:
    """The fast path: whether ``text`` (no markup in it) has a plain word that is no placeholder, slot word,
    instruction or word of a preamble; such a caption is never junk (:func:`_judge` agrees, as
    ``tests/test_web_junk.py`` checks)."""
    return "<" not in text and "&" not in text and "[" not in text and _has_a_decided_word(text)


def _has_a_decided_word(text: str) -> bool:
    """Whether ``text`` has a plain word that is none of :data:`_UNDECIDED_WORDS` (in any case)."""
    word = _PLAIN_WORD.search(text)
    while word is not None:
        letters = word.group(1)
        if letters not in _UNDECIDED_SPELLINGS and letters.lower() not in _UNDECIDED_WORDS:
            return True
        word = _PLAIN_WORD.search(text, word.end())
    return False


def _judge(text: str) -> str | None:
    """:func:`web_junk_kind` of ``text`` (in its Unicode form, stripped, no marker), without the fast path."""
    cleaned = unicode_form(strip_wrappers(text)).strip()
    if not cleaned:
        return KIND_MARKUP
    if cleaned is not text and len(cleaned) <= _LONGEST_MARKER and cleaned.casefold() in MISSING_MARKERS:
        return KIND_MISSING
    if BOILERPLATE.match(cleaned):
        return KIND_BOILERPLATE
    if _has_a_decided_word(cleaned):  # the fast path again, on the text without its wrappers: a caption
        return None
    if _is_placeholder(cleaned, file_name=_PATH.search(text) is not None):
        return KIND_PLACEHOLDER
    if _DIMENSIONS.fullmatch(cleaned):
        return KIND_DIMENSIONS
    if _NUMBERED_FILE.fullmatch(text):
        return KIND_NUMBERED_FILE
    kinds = []
    for token in cleaned.split():
        token = token.strip(_TOKEN_EDGES)
        if _spells_a_word(token):
            return None
        kinds.append(_token_kind(token))
    return f"{KIND_NO_WORD} ({', '.join(dict.fromkeys(kinds))})"


def _is_placeholder(text: str, *, file_name: bool) -> bool:
    """Only placeholder words (a slot placeholder among them, or an ordinary one beside an ID or in a
    ``file_name``: ``file.mp3``), or a reader's instruction with its target, besides slot words, numbers, IDs and
    single Latin letters in codes (each token read part by part: ``photo-1505740420928-5e560c06d30e``)."""
    slot_placeholders = ordinary_placeholders = commands = targets = words = 0
    led = command = identified = False  # led: an instruction is the first word
    for part in _ALNUM_PART.findall(_SCREEN_SHOT.sub("screenshot", text.lower())):
        if part.isdigit() or _HEX_ID.fullmatch(part):
            identified = identified or len(part) >= MIN_ID_DIGITS or not part.isdigit()
            continue
        identified = identified or any(len(run) >= MIN_ID_DIGITS for run in _DIGIT_RUN.findall(part))
        single_letters = False
        for run in _LETTER_RUN.findall(part):
            if run in SLOT_PLACEHOLDERS:
                slot_placeholders += 1
            elif run in ORDINARY_PLACEHOLDERS:
                ordinary_placeholders += 1
            elif run in READER_INSTRUCTIONS:
                if words == 0:
                    led, command = True, run in COMMANDS
                else:
                    commands += run in COMMANDS
            elif run in INSTRUCTION_TARGETS:
                targets += 1
            elif run not in SLOT_WORDS:
                if len(run) > 1 or not run.isascii():
                    return False
                single_letters = True
                continue
            words += 1
        if single_letters and _is_short_name([part]):
            return False  # a name: ``photo of R2-D2``
    if slot_placeholders or (ordinary_placeholders and (identified or file_name)):
        return True
    return led and words > 1 and (command or commands > 0 or targets > 0 or ordinary_placeholders > 0)


def _spells_a_word(token: str) -> bool:
    """Whether a token holds a word (see the module docstring)."""
    if not token or _NOT_A_WORD.fullmatch(token):
        return False
    if _WORD_LETTER.search(token):
        return True
    if any(char.isdigit() for char in token):
        known = word_costs()
        if any(_is_known_word(run, known) for run in _LETTER_RUN.findall(token)):
            return True
        parts = _ALNUM_PART.findall(token)
        if any(_is_word_part(part) for part in parts):
            return True
        return _is_short_name(parts)
    return any(len(run) > 1 and not _NO_VOWEL_CODE.fullmatch(run) for run in _LETTER_RUN.findall(token))


def _is_known_word(run: str, known: dict[str, float]) -> bool:
    """Whether a run of letters in a code is a known word, no placeholder (``iPhone12``, not ``photo-1505``)."""
    if len(run) < MIN_KNOWN_IN_CODE:
        return False
    lowered = run.lower()
    return lowered in known and lowered not in PLACEHOLDER_WORDS


def _is_word_part(part: str) -> bool:
    """Whether a part of a token with digits, between separators, is a word: three letters or more with a vowel,
    no placeholder (``minion-decoracion2``, not ``FB_IMG_1612345678901``)."""
    return len(part) > 2 and part.isalpha() and bool(_VOWEL.search(part)) and part.lower() not in PLACEHOLDER_WORDS


def _is_short_name(parts: list[str]) -> bool:
    """Whether the letter-and-digit parts of a token are shaped like a short name with digits: at most three
    parts and :data:`MAX_NAME_CHARS` characters, each part one or two runs (``A380``, ``mc2``; three when the
    part is three characters: ``H2O``), no run of more than :data:`MAX_NAME_DIGITS` digits or
    :data:`MAX_NAME_LETTERS` letters (``6ELSAU`` is a code)."""
    if not parts or len(parts) > 3 or sum(map(len, parts)) > MAX_NAME_CHARS:
        return False
    if len(parts) == 3 and all(part.isdigit() for part in parts):
        return False  # a date, a time, a version: 12:34:56, 1.2.3
    for part in parts:
        runs = _KIND_RUN.findall(part)
        if len(runs) > 2 and not (len(runs) == 3 and len(part) <= 3):
            return False
        if any(len(run) > (MAX_NAME_DIGITS if run.isdigit() else MAX_NAME_LETTERS) for run in runs):
            return False
    return True


def _token_kind(token: str) -> str:
    """What a token that spells no word is, in a few words (for explanations)."""
    if not any(char.isalnum() for char in token):
        return "symbols"
    if _NOT_A_WORD.fullmatch(token) is None:
        return "a code" if any(char.isalpha() for char in token) else "a number"
    lowered = token.lower()
    if "//" in lowered or lowered.startswith(("www", "data:", "mailto:", "file:", "localhost")):
        return "a URL"
    if "@" in token:
        return "an e-mail address"
    if _PATH.fullmatch(token):
        return "a path"
    if _HEX_ID.fullmatch(lowered.replace("-", "")):
        return "a hash or ID"
    if "." in token:
        return "a domain"
    return "a camera file name"
