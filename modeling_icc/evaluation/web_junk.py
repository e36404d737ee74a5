"""The ``web_junk`` benchmark: alt-text that is no caption, which a filter at 0.5 should not keep.

Junk, by kind (label 0): the LAION-400M alt-texts of the shipped sample that are one URL or one image file
name, as scraped; real image URLs, their file names and their hosts from the CC3M validation split; and
generated junk (seeded): camera file names, HTML remnants, missing-value markers, punctuation and emoji,
hashes, dimension strings and numbers, and the kinds of :func:`~.web_junk_cases.generated_junk` (default file
names, image-host names, markup and escapes, placeholders and reader instructions, platform notes, addresses
and paths, IDs and codes). Real captions (label 1): the 303 dev captions, a seeded sample of CC3M validation
captions, and the short captions written for the rule (:func:`~.web_junk_cases.short_real_captions`: one word,
names and models, other scripts, captions inside a wrapper). Each scorer's row gives, per kind, the fraction
of texts that score at least :data:`KEEP_THRESHOLD` (kept by ``icc filter --threshold 0.5``); NaN scores are
not kept.

Read the junk rows for what they are: the forms that :mod:`modeling_icc.utils.web_junk` recognises, written
together with that rule, so ICC's scorers keep almost none of them by construction. Two kinds are file names
as scraped: a file name whose name says what it shows (``red-wool-coat.jpg``) is, by decision, a caption with
a wrapper, read without its extension, so a filter keeps some of those; the others (camera names, hashes,
default names) are junk. The figures that can fail are the real captions' (a rule that zeroed real captions
would show there) and the baselines'.
"""

from __future__ import annotations

import string
from urllib.parse import urlsplit

import numpy as np

from ..utils.shipped_data import cc3m_image_urls, cc3m_stability_sample, dev_split, laion_junk_texts
from ..utils.web_junk import MISSING_MARKERS
from .data import WEB_JUNK, BenchmarkSet
from .web_junk_cases import PER_JUNK_KIND, generated_junk, short_real_captions

#: The keep rule whose kept fractions the benchmark reports (``icc filter --threshold 0.5``).
KEEP_THRESHOLD = 0.5
#: Seed of every draw and generated string.
JUNK_SEED = 0
#: Texts drawn or generated per kind of junk.
PER_KIND = 100
#: Distinct CC3M captions drawn as real captions (the noise-stability sample of this size and seed).
REAL_CC3M = 1000
#: Kinds of file names as scraped: a descriptive one is read without its extension (a caption in a wrapper), so a
#: filter keeps some of these; every other junk kind is junk by the rule's kinds.
FILE_NAME_KINDS = ("LAION: one URL or file name", "CC3M image file names")
#: Kinds whose texts are real captions (label 1); every other kind is junk (label 0).
REAL_KINDS = ("captions: dev split", "captions: CC3M", *short_real_captions())

_CAMERA_PREFIXES = ("IMG_", "IMG-", "DSC_", "DSC", "DSCN", "DSCF", "PXL_", "GOPR", "DJI_", "P", "_MG_", "SAM_")
_EXTENSIONS = ("jpg", "JPG", "jpeg", "png", "PNG", "gif", "webp", "heic", "CR2", "NEF")
_HTML = (
    '<img src="{name}">',
    '<img src="{name}" alt="">',
    "<br>",
    "<br/>",
    "<p></p>",
    "&nbsp;",
    '<a href="{url}"></a>',
    '<div class="{word}"></div>',
    "<span>&amp;</span>",
    "&lt;&gt;",
    '<img src=x onerror="{word}()">',
    "</li><li>",
)
_SYMBOLS = (*".,!?-_*~#|/:;…•·°+=", "\U0001f4f7", "\u2764\ufe0f", "\u2728", "\U0001f60d", "\u2b50")


def _choice(rng: np.random.Generator, items: list[str] | tuple[str, ...], n: int) -> list[str]:
    distinct = list(dict.fromkeys(items))
    picked = rng.choice(len(distinct), size=min(n, len(distinct)), replace=False)
    return [distinct[index] for index in sorted(picked)]


def junk_kinds(seed: int = JUNK_SEED) -> dict[str, list[str]]:
    """The junk texts by kind (see the module docstring), in a fixed order for a given seed."""
    rng = np.random.default_rng(seed)
    urls = cc3m_image_urls()
    names = [urlsplit(url).path.rsplit("/", 1)[-1] for url in urls]
    names = [name for name in names if "." in name.strip(".")]
    hosts = [urlsplit(url).hostname or "" for url in urls]
    words = [word for name in names for word in name.split(".")[0].replace("_", "-").split("-") if word.isalpha()]

    def camera_name() -> str:
        prefix, extension = rng.choice(_CAMERA_PREFIXES), rng.choice(_EXTENSIONS)
        return f"{prefix}{rng.integers(0, 100_000):04d}.{extension}"

    def html() -> str:
        template = str(rng.choice(_HTML))
        return template.format(name=rng.choice(names), url=rng.choice(urls), word=rng.choice(words))

    def symbols() -> str:
        return "".join(rng.choice(_SYMBOLS, size=int(rng.integers(1, 9))))

    def code() -> str:
        kind = int(rng.integers(0, 5))
        if kind == 0:  # an MD5 or SHA-1 in hex
            return rng.bytes(int(rng.choice((16, 20)))).hex()
        if kind == 1:  # a UUID
            hexed = rng.bytes(16).hex()
            return "-".join((hexed[:8], hexed[8:12], hexed[12:16], hexed[16:20], hexed[20:]))
        if kind == 2:  # dimensions
            return f"{rng.integers(16, 4096)}{rng.choice(('x', 'X', '×', ' x '))}{rng.integers(16, 4096)}"
        if kind == 3:  # a float, as a scraper writes a number
            return repr(float(rng.random()))
        return "".join(rng.choice(list(string.ascii_uppercase + string.digits), size=int(rng.integers(6, 13))))

    markers = sorted(MISSING_MARKERS)
    return {
        "LAION: one URL or file name": laion_junk_texts(),
        "CC3M image URLs": _choice(rng, urls, PER_KIND),
        "CC3M image file names": _choice(rng, names, PER_KIND),
        "CC3M image hosts": _choice(rng, hosts, PER_KIND),
        "camera file names": [camera_name() for _ in range(PER_KIND)],
        "HTML remnants": [html() for _ in range(PER_KIND)],
        "missing-value markers": markers
        + [marker.upper() for marker in markers]
        + [marker.title() for marker in markers],
        "punctuation and emoji": [symbols() for _ in range(PER_KIND)],
        "hashes, dimensions, numbers": [code() for _ in range(PER_KIND)],
        **generated_junk(seed),
    }


def web_junk_benchmark(seed: int = JUNK_SEED) -> BenchmarkSet:
    """Junk (label 0) and real captions (label 1), each text tagged with its kind."""
    kinds = junk_kinds(seed)
    kinds[REAL_KINDS[0]] = [row["caption"] for row in dev_split("all")]
    kinds[REAL_KINDS[1]] = cc3m_stability_sample(REAL_CC3M, seed)
    kinds.update(short_real_captions())
    texts = [text for texts in kinds.values() for text in texts]
    groups = tuple(kind for kind, texts in kinds.items() for _ in texts)
    real = sum(len(kinds[kind]) for kind in REAL_KINDS)
    return BenchmarkSet(
        name=WEB_JUNK,
        title=f"Web junk ({len(texts) - real} junk alt-texts, {real} real captions)",
        texts=texts,
        labels=np.array([1.0 if group in REAL_KINDS else 0.0 for group in groups]),
        label_name="real caption (1) or junk (0)",
        source="modeling_icc/data/laion_alttext_junk.tsv (LAION-400M), the CC3M validation split's URLs and "
        "captions, the dev split, and generated junk and short captions (modeling_icc/evaluation/web_junk.py, "
        "web_junk_cases.py)",
        selection=f"{PER_KIND} per drawn or generated kind ({PER_JUNK_KIND} per kind of web_junk_cases.py), seed "
        f"{seed}; CC3M captions: the noise-stability sample of {REAL_CC3M}",
        data_id=WEB_JUNK,
        groups=groups,
        keep_threshold=KEEP_THRESHOLD,
    )
