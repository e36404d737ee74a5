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

from ...utils.caption_text import normalize_caption
from ...utils.function_words import FUNCTION_WORDS
from ...utils.words import WORD_PATTERN
from .lexicon import Lexicon

#: Words past this many are ignored (a documented bound on work per caption).
MAX_WORDS = 256
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
    r"|xl|xxl|men's|mens|women's|womens)\b|\b(?=[a-z\-]*\d)(?=[\d\-]*[a-z])[a-z\d\-]{4,}\b)"
)
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


def caption_features(text: str, lexicon: Lexicon) -> list[float]:
    """The feature values lite reads for a caption as it comes: of its normalized text (web noise removed,
    :func:`~modeling_icc.utils.caption_text.normalize_caption`), so the fit and the scorer read the same."""
    return analyze(normalize_caption(text), lexicon)[0]


def analyze(text: str, lexicon: Lexicon, detail: bool = False) -> tuple[list[float], WordShares | None]:
    """Feature values of ``text`` in :data:`FEATURE_NAMES` order (and word shares if ``detail``)."""
    lowered = text.lower()
    if "\u2019" in lowered:
        lowered = lowered.replace("\u2019", "'")
    tokens = WORD_PATTERN.findall(lowered)[:MAX_WORDS]
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
    flags = {_PATTERN_FEATURES[match.lastgroup] for match in _PATTERNS.finditer(lowered)}
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
