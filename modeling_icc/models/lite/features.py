"""The lite model's features: what a caption's words and form say about its concreteness.

Each feature is documented in :data:`FEATURES`. Word features average human
norms over the caption's rated content words and phrases; form features flag
the cues of web text that no image shows (first/second person, questions,
"how to", prices, dates, URLs, product-listing and stock-photo boiler-plate).
:func:`analyze` computes them in one pass of pure Python (a few regexes, dict
lookups); with ``detail=True`` it also says which words carry which share of
each word-level feature, which is what makes the explanations add up exactly.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from itertools import islice

from ...utils.caption_text import normalize_caption
from ...utils.function_words import FUNCTION_WORDS
from ...utils.words import WORD_PATTERN
from .lexicon import Lexicon

#: Words past this many are ignored (a documented bound on work per caption).
MAX_WORDS = 256
#: Characters of a caption read (a documented bound on work per caption): the form cues and capitals are
#: looked for in the whole text read, so without a bound a megabyte-long caption took over a second. Real
#: captions, and the long descriptions of the held-out sets, are a few thousand characters at most.
MAX_CHARS = 65_536
#: Values used when a caption has no rated content word (the scales' midpoints).
NEUTRAL_CONCRETENESS = 3.0
NEUTRAL_VISUAL = 2.5

FIRST_SECOND_PERSON = frozenset(
    "i me my mine myself we us our ours ourselves you your yours yourself yourselves".split()
)
MODAL_VERBS = frozenset("can could would should will must may might shall ought".split())
#: Verbs that open imperative web text ("Get tips ...", "Learn how ...", "Save 20% ...").
IMPERATIVE_OPENERS = frozenset(
    """get learn discover find try buy shop save click check make keep take see watch read join sign
    download order visit explore follow subscribe share enjoy grab create start stop let talk meet""".split()
)
#: Words of visual scene layout and posture, counted per word ("a cat on a counter", "sitting").
SCENE_WORDS = frozenset(
    """on in at with near under behind beside above below over against inside outside along across
    next front top holding sitting standing walking lying looking wearing""".split()
)

_PATTERNS = re.compile(
    r"(?P<url>https?://|www\.|\.(?:com|org|net|jpe?g|png|gif|webp|html?|pdf)\b|@\w)"
    r"|(?P<price>[$£€¥₹]|\b(?:price|prices|sale|discount|shipping|cheap|deal|deals|coupon|usd|eur)\b)"
    r"|(?P<date>\b(?:january|february|march|april|june|july|august|september|october|november|december"
    r"|jan|feb|mar|apr|aug|sept|sep|oct|nov|dec|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|\b(?:19|20)\d\d\b)"
    r"|(?P<howto>^\s*(?:how|why|what|when|where|who|which|top|best)\b|\b(?:how to|ways to|tips|reasons|steps"
    r"|guide|ideas|things to|review|reviews|tutorial)\b|^\s*\d+\s+[a-z])"
    r"|(?P<stock>\bstock (?:photo|image|footage|photography|picture|illustration|vector)s?\b|\broyalty[- ]free\b"
    r"|\bvector\b|\billustrations?\b|\bisolated\b|\bclip ?art\b|\bbackground\b|\bclose[- ]?up\b|\bcloseup\b"
    r"|\b(?:photo|image|picture|portrait|view) of\b)"
    r"|(?P<product>\b(?:new|size|sizes|pcs|lot|model|pack|edition|brand|collection|series|inch|inches|cm|mm"
    r"|xl|xxl|men's|mens|women's|womens)\b)"
)
#: A product or SKU code (``xl-2000``, ``b07xyz``): 4+ letters, digits and hyphens from a word boundary to a
#: word boundary, with a digit and a letter ahead in the same run. It is read as one more (last) alternative
#: of :data:`_PATTERNS`, but found by :class:`_ProductCodes`: as a regex, its look-aheads would be retried from
#: every boundary of a long hyphenated run, in time quadratic in the run's length.
PRODUCT_CODE = r"\b(?=[a-z\-]*\d)(?=[\d\-]*[a-z])[a-z\d\-]{4,}\b"
_CODE_RUN = re.compile(r"[a-z\d\-]+")
_ALNUM_RUN = re.compile(r"[a-z\d]+")
_HYPHEN_RUN = re.compile(r"-+")
_BOUNDARY = re.compile(r"\b")
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[a-z]")
#: A letter and a digit with only hyphens between: a run that holds both holds such a pair (no pair, no code).
_LETTER_BY_DIGIT = re.compile(r"[a-z]-*\d|\d-*[a-z]")
_CAPITALIZED = re.compile(r"\b[A-Z]")
_QUESTION_OR_EXCLAMATION = re.compile(r"[?!]")


@dataclass(frozen=True)
class Feature:
    name: str
    description: str


#: Every feature, in model order, with what it measures.
FEATURES: tuple[Feature, ...] = (
    Feature("concreteness", "mean Brysbaert/Muraki/Glasgow concreteness (1-5) of rated content words and phrases"),
    Feature("visual", "mean Lancaster visual strength (0-5) of content words and phrases rated for it"),
    Feature(
        "coverage",
        "share of words that are English function words or rated single words (low: names, codes, other languages)",
    ),
    Feature("scene_words", "share of words that describe layout or posture (on, behind, sitting, wearing, ...)"),
    Feature("first_second_person", "share of words that are first/second person pronouns (I, my, you, our, ...)"),
    Feature("modal_verbs", "share of words that are modal verbs (can, would, should, ...)"),
    Feature("imperative", "caption opens with an imperative verb (get, learn, buy, click, ...)"),
    Feature("question_or_exclamation", "caption contains '?' or '!'"),
    Feature("how_to", "how-to, listicle or review phrasing ('how to', '7 reasons', 'tips', 'best ...')"),
    Feature("price", "currency symbols or price/sale/shipping words"),
    Feature("date", "month or weekday names, or a year 1900-2099"),
    Feature("url_or_file", "URLs, web domains, file names (.jpg, .png), @handles"),
    Feature("product_listing", "product-listing words (new, size, pcs, model, ...) or SKU-like letter-digit codes"),
    Feature("stock_photo", "stock-photo phrasing (stock photo, vector, isolated, background, close-up, photo of)"),
    Feature("capitalized", "share of words that start with a capital letter (titles, brands, listings)"),
    Feature("non_ascii_letters", "share of letters outside ASCII (other scripts and languages)"),
    Feature("log_length", "log(1 + number of words)"),
)
FEATURE_NAMES = tuple(feature.name for feature in FEATURES)
_PATTERN_FEATURES = {
    "url": "url_or_file",
    "price": "price",
    "date": "date",
    "howto": "how_to",
    "stock": "stock_photo",
    "product": "product_listing",
}


@dataclass
class WordShares:
    """Which words carry each word-level feature: ``shares[feature] = [(span, value), ...]``.

    A word-level feature is ``sum(values) / denominator``; spans are ``(start, end)``
    word indices (a phrase spans several words).
    """

    words: list[str]
    shares: dict[str, list[tuple[tuple[int, int], float]]] = field(default_factory=dict)
    denominators: dict[str, int] = field(default_factory=dict)


def text_read(text: str) -> str:
    """What lite reads of a caption as it comes: its first :data:`MAX_CHARS` characters, normalized (web noise
    removed, :func:`~modeling_icc.utils.caption_text.normalize_caption`)."""
    return normalize_caption(text[:MAX_CHARS])


def caption_features(text: str, lexicon: Lexicon) -> list[float]:
    """The feature values lite reads for a caption as it comes (:func:`text_read`), so the fit and the scorer
    read the same."""
    return analyze(text_read(text), lexicon)[0]


def analyze(text: str, lexicon: Lexicon, detail: bool = False) -> tuple[list[float], WordShares | None]:
    """Feature values of ``text`` in :data:`FEATURE_NAMES` order (and word shares if ``detail``)."""
    lowered = text.lower()
    if "\u2019" in lowered:
        lowered = lowered.replace("\u2019", "'")
    tokens = [word.group() for word in islice(WORD_PATTERN.finditer(lowered), MAX_WORDS)]  # not all, then 256
    n_words = len(tokens)
    denominator = max(n_words, 1)
    concreteness = lexicon.norms["concreteness"]
    visual = lexicon.norms["visual"]

    conc_sum = vis_sum = 0.0
    n_conc = n_vis = 0
    content: list[tuple[int, int, str]] = []
    for start, end, entry in lexicon.match(tokens):
        if end - start > 1 or entry not in FUNCTION_WORDS:
            content.append((start, end, entry))
            conc_sum += concreteness[entry]
            n_conc += 1
            if entry in visual:
                vis_sum += visual[entry]
                n_vis += 1
    n_known = sum(1 for token in tokens if token in concreteness or token in FUNCTION_WORDS)

    n_scene = sum(map(SCENE_WORDS.__contains__, tokens))
    n_person = sum(map(FIRST_SECOND_PERSON.__contains__, tokens))
    n_modal = sum(map(MODAL_VERBS.__contains__, tokens))
    flags = cue_flags(lowered)
    n_capitalized = len(_CAPITALIZED.findall(text))
    if text.isascii():
        non_ascii = 0.0
    else:
        letters = sum(1 for char in text if char.isalpha())
        non_ascii = sum(1 for char in text if ord(char) > 127 and char.isalpha()) / max(letters, 1)

    values = [
        conc_sum / n_conc if n_conc else NEUTRAL_CONCRETENESS,
        vis_sum / n_vis if n_vis else NEUTRAL_VISUAL,
        n_known / denominator,
        n_scene / denominator,
        n_person / denominator,
        n_modal / denominator,
        1.0 if tokens and tokens[0] in IMPERATIVE_OPENERS else 0.0,
        1.0 if _QUESTION_OR_EXCLAMATION.search(text) else 0.0,
        1.0 if "how_to" in flags else 0.0,
        1.0 if "price" in flags else 0.0,
        1.0 if "date" in flags else 0.0,
        1.0 if "url_or_file" in flags else 0.0,
        1.0 if "product_listing" in flags else 0.0,
        1.0 if "stock_photo" in flags else 0.0,
        min(n_capitalized / denominator, 1.0),
        non_ascii,
        math.log1p(n_words),
    ]
    if not detail:
        return values, None
    return values, _word_shares(tokens, content, lexicon, n_conc, n_vis)


def cue_flags(lowered: str) -> set[str]:
    """The form features whose cues occur in ``lowered``: matches of :data:`_PATTERNS` and product codes taken
    left to right without overlap, as by one pattern whose last alternative is :data:`PRODUCT_CODE`."""
    if _DIGIT.search(lowered) is None or _LETTER_BY_DIGIT.search(lowered) is None:  # the common, faster path
        return {_PATTERN_FEATURES[cue.lastgroup] for cue in _PATTERNS.finditer(lowered)}
    flags: set[str] = set()
    codes = _ProductCodes(lowered)
    position, cue = 0, _PATTERNS.search(lowered)
    while True:
        if cue is not None and cue.start() < position:
            cue = _PATTERNS.search(lowered, position)
        code_end = codes.next_match(position, cue.start() if cue is not None else len(lowered))
        if code_end is not None:
            flags.add("product_listing")
            position = code_end
        elif cue is not None:
            flags.add(_PATTERN_FEATURES[cue.lastgroup])
            position = cue.end()
        else:
            return flags


class _ProductCodes:
    """Where :data:`PRODUCT_CODE` matches in ``text``, asked left to right, in time linear in ``text``.

    Inside one run of code characters (letters, digits, hyphens) the code's conditions only get harder
    to meet further right (a digit, a letter and a word boundary 4+ characters on must lie ahead in the
    run), so only runs that hold a digit are looked at, each is measured once, and it is tried at its
    first word boundary past the position asked: if the code does not match there, it matches nowhere
    later in that run.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.run_end = 0
        self.live = False  # whether the measured run may still hold a match
        self.last_digit = self.last_letter = self.last_boundary = -1
        self.digit = self.digit_run = -1  # the next digit and where its run begins (-1: not looked for yet)

    def next_match(self, start: int, stop: int) -> int | None:
        """The end of the leftmost match that begins in ``[start, stop)``, else ``None``."""
        while start < stop:
            if start >= self.run_end:
                start = self._next_digit_run(start)
                if start >= stop:
                    return None
                self._measure(start)
            if not self.live:
                start = self.run_end
                continue
            at = self._first_boundary(start, min(self.run_end, stop))
            if at is None:
                start = self.run_end if self.run_end <= stop else stop
                continue
            self.live = False
            if self.last_digit >= at and self.last_letter >= at and self.last_boundary >= at + 4:
                return self.last_boundary
            start = self.run_end
        return None

    def _next_digit_run(self, start: int) -> int:
        """Where, at or after ``start``, the first run that holds a digit begins (``len(text)``: none).

        Remembered, so that asking again from further left costs nothing (cues between ``start`` and a
        far digit would otherwise make each question read the same stretch again)."""
        text = self.text
        if self.digit < start:
            found = _DIGIT.search(text, start)
            if found is None:
                self.digit = self.digit_run = len(text)
                return len(text)
            self.digit = begin = found.start()
            while begin > start and _is_code_character(text[begin - 1]):
                begin -= 1
            self.digit_run = begin
        return max(start, self.digit_run)

    def _measure(self, start: int) -> None:
        """Record the run from ``start``: its end, its last digit and letter, its last word boundary."""
        text = self.text
        self.run_end = end = _CODE_RUN.match(text, start).end()
        backwards = text[start:end][::-1]
        digit, letter = _DIGIT.search(backwards), _LETTER.search(backwards)
        self.last_digit = end - 1 - digit.start() if digit else -1
        self.last_letter = end - 1 - letter.start() if letter else -1
        if _BOUNDARY.match(text, end):
            self.last_boundary = end
        else:  # inside a run, boundaries lie between a hyphen and a letter or digit: the last block's start
            block = _HYPHEN_RUN if backwards[0] == "-" else _ALNUM_RUN
            self.last_boundary = end - block.match(backwards).end()
        self.live = True

    def _first_boundary(self, start: int, stop: int) -> int | None:
        """The first word boundary in ``[start, stop)`` (inside the measured run), else ``None``."""
        if _BOUNDARY.match(self.text, start):
            return start
        block = _HYPHEN_RUN if self.text[start] == "-" else _ALNUM_RUN
        end = block.match(self.text, start, stop).end()
        return end if end < stop else None


def _is_code_character(char: str) -> bool:
    """Whether ``char`` is a code character: a-z, a hyphen or a decimal digit of any script (a pattern's ``\\d``)."""
    return char == "-" or "a" <= char <= "z" or char.isdecimal()


def _word_shares(
    tokens: list[str], content: list[tuple[int, int, str]], lexicon: Lexicon, n_conc: int, n_vis: int
) -> WordShares:
    concreteness = lexicon.norms["concreteness"]
    visual = lexicon.norms["visual"]
    shares = WordShares(words=tokens)
    shares.shares["concreteness"] = [((s, e), concreteness[x]) for s, e, x in content]
    shares.denominators["concreteness"] = n_conc
    shares.shares["visual"] = [((s, e), visual[x]) for s, e, x in content if x in visual]
    shares.denominators["visual"] = n_vis
    word_sets = {"scene_words": SCENE_WORDS, "first_second_person": FIRST_SECOND_PERSON, "modal_verbs": MODAL_VERBS}
    shares.shares["coverage"] = [
        ((i, i + 1), 1.0 if token in concreteness or token in FUNCTION_WORDS else 0.0) for i, token in enumerate(tokens)
    ]
    for name, vocabulary in word_sets.items():
        shares.shares[name] = [((i, i + 1), 1.0) for i, token in enumerate(tokens) if token in vocabulary]
    for name in ("coverage", *word_sets):
        # The words themselves (not max(n, 1) as in the value): with no words, no word carries the feature.
        shares.denominators[name] = len(tokens)
    return shares
