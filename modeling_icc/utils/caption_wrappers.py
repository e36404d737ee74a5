"""Wrappers around a caption: markup, escaped characters and file-name parts that a scraper kept with the words.

Alt-text is often a caption inside something else: HTML tags (``Orchid Jungle<br>Hawaiian Dresses<br>``), BBCode
(``[b]red car[/b]``), escaped characters (``&quot;Keep Calm&quot;``, ``&amp;``), or a file name made of words
(``Fox Crochet Hat.jpg``, ``red-wool-coat-300x200.jpg?w=400``). :func:`strip_wrappers` takes the wrapper off and
keeps what it wraps, so that a model reads the words and not the wrapper, and an explanation never gives ``jpg``
as a reason. ICC's scorers read :func:`unwrap_caption` of each caption (``scoring/base.py``), before their own
normalization (:func:`~.caption_text.normalize_caption`), which their fits read as it is: the shipped models
stay what their fitting scripts produce. Decided per kind of wrapper (``docs/usage.md``, "Bad input"):

* **escaped characters** (``&amp;``, ``&#39;``, ``&eacute;``: an entity with its ``;``) are decoded, ``&amp;amp;``
  too; escaped markup (``&lt;b&gt;``) is markup, and goes as markup goes;
* **HTML tags** of the HTML element names (:data:`HTML_ELEMENTS`), comments and ``<!DOCTYPE ...>`` are taken out:
  a tag of an inline element (:data:`INLINE_ELEMENTS`: ``<b>``, ``<span>``, ...) leaves nothing, any other tag
  (``<br>``, ``<p>``, ``<img ...>``) a space, and a ``<script>`` or ``<style>`` element goes with its code.
  ``<3`` and ``<dog>`` are no tags and stay;
* **BBCode tags** of formatting and links (:data:`BBCODE_TAGS`: ``[b]``, ``[url=...]``, ``[img]``) leave a space;
  their content stays (``[img]`` holds a URL, which stays a URL). ``[Video]`` or ``[sic]`` are no such tags;
* **a platform's preamble** (:data:`PREAMBLE`) at the start of the caption: an automatic
  tagger's ``Image may contain:`` or ``May be an image of`` before its list of what the picture shows (CC3M keeps
  such lists as captions: ``image may contain : person , riding on a horse , horse and outdoor``), WordPress's
  ``This image has an empty alt attribute; its file name is`` before a file name; the list or the name stays
  (a preamble with nothing after it is no wrapper: it stays, and is judged as any text);
* **a file extension** (:data:`FILE_EXTENSIONS`: images, video, audio, documents, archives, web pages) is taken off
  the end of a token, with what an image host adds after it (``:large``, ``_large``, ``?w=400``, ``&maxh=400``, a
  second extension) and to the name before it (a ``-300x200`` or ``@2x`` size, ``-scaled``, a ``500px-``
  thumbnail prefix); a caption that ends in a file name loses a leading ``File:`` or ``Image:`` too. The name is
  what the file shows when its author named it (``Fox Crochet Hat``); what is left is judged like any caption,
  so a name that spells no word (``IMG_2034``, a hash) or only a placeholder (``image001``) is still web junk.
  Paths and URLs keep their extension: a URL is an address, not a name (``normalize_caption`` drops it, the
  web-junk rule calls it junk).

Every pattern takes time linear in the text's length: each tag or entity pattern stops at the next ``<``, ``[`` or
``&``, and a file-name token is found from its first character only.
"""

from __future__ import annotations

import html
import re

from .caption_text import unicode_form

#: Extensions that make a token a file name, by kind: images, video, audio, documents, archives, web pages.
FILE_EXTENSIONS = (
    "jpg jpeg jpe jfif pjpeg png apng gif webp bmp tif tiff svg svgz heic heif avif ico cr2 cr3 nef arw dng orf rw2 "
    "psd xcf mp4 m4v mov avi wmv flv mkv webm mpg mpeg 3gp mp3 wav flac aac ogg oga m4a wma aiff opus "
    "pdf doc docx odt rtf txt xls xlsx ods csv ppt pptx odp epub zip rar 7z tgz gz bz2 dmg exe apk iso "
    "html htm xhtml shtml php asp aspx jsp cgi"
).split()
#: HTML's element names (the living standard's, the obsolete ones still found in scraped text, and SVG's).
HTML_ELEMENTS = (
    "a abbr address area article aside audio b base bdi bdo big blink blockquote body br button canvas caption "
    "center cite code col colgroup data datalist dd del details dfn dialog div dl dt em embed fieldset figcaption "
    "figure font footer form h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe img input ins kbd label legend "
    "li link main map mark marquee menu meta meter nav nobr noscript object ol optgroup option output p param "
    "picture pre progress q rp rt ruby s samp script section select slot small source span strike strong style "
    "sub summary sup table tbody td template textarea tfoot th thead time title tr track tt u ul var video wbr "
    "acronym applet basefont dir frame frameset noframes svg math path g circle rect ellipse line polygon "
    "polyline defs use symbol image"
).split()
#: Elements that do not break a line: their tags leave nothing between the words they touch.
INLINE_ELEMENTS = frozenset(
    "a abbr b bdi bdo big cite code data dfn em font i ins kbd mark nobr q s samp small span strike strong sub sup "
    "time tt u var wbr del".split()
)
#: BBCode tags of formatting and links (phpBB's and vBulletin's); ``*`` is a list item.
BBCODE_TAGS = (
    "b i u s strike sup sub img url email quote code size color colour font center left right justify align "
    "indent list * hr table tr td spoiler highlight h1 h2 h3 h4 h5 h6"
).split()


def trie_pattern(words: list[str] | tuple[str, ...]) -> str:
    """A regex alternation of ``words`` written as a trie (``j(?:p(?:e(?:g)?|g)|fif)``): the engine tries one
    branch per first character instead of every word, so a word list costs a few steps per position."""
    words = sorted(set(words))
    if words == [""]:
        return ""
    optional = "" in words
    heads: dict[str, list[str]] = {}
    for word in words:
        if word:
            heads.setdefault(word[0], []).append(word[1:])
    branches = [re.escape(head) + trie_pattern(tails) for head, tails in heads.items()]
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    if optional:
        body = f"(?:{body})?" if len(branches) > 1 or len(body) > 1 else f"{body}?"
    return body


#: :data:`FILE_EXTENSIONS` as one pattern.
EXTENSION_PATTERN = trie_pattern(FILE_EXTENSIONS)
#: What a platform writes before the text it generated: an automatic tagger's list (Facebook, Instagram) or the
#: file name WordPress gives for an empty alt attribute; found at the start of the caption.
#: What a tagger says the picture "may be" (``May be an image of``, ``May be a close-up of``).
PREAMBLE_KINDS = (
    "image", "photo", "picture", "graphic", "illustration", "cartoon", "drawing", "painting", "screenshot", "meme",
    "close-up", "closeup", "selfie", "text", "art", "black-and-white photo", "twitter screenshot",
)  # fmt: skip
PREAMBLE = re.compile(
    r"\s*(?:image may contain|may be (?:an? )?"
    + trie_pattern(PREAMBLE_KINDS)
    + r"\b(?: of)?|this image has an empty alt attribute;? its file name is)\s*:?\s*",
    re.IGNORECASE,
)
#: Decoding rounds for escaped characters: ``&amp;lt;`` needs two. Bounded, so the work stays linear.
MAX_DECODING_ROUNDS = 3

_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_TAG = re.compile(
    rf"<(?=[/!?A-Za-z])(?:(/?)({trie_pattern(HTML_ELEMENTS)})(?![\w:-])[^<>]*|!--[^<>]*--|![A-Za-z][^<>]*|\?[A-Za-z][^<>]*\?)>",
    re.IGNORECASE,
)
#: A script or style element: its content is code, not text. ``[^<]*``: it stops at the next ``<``.
_CODE_ELEMENT = re.compile(r"<(script|style)\b[^<>]*>[^<]*</\1\s*>", re.IGNORECASE)
_BBCODE = re.compile(rf"\[/?{trie_pattern(BBCODE_TAGS)}(?:=[^\[\]]*)?\]", re.IGNORECASE)
_EXTENSION = re.compile(rf"\.(?=[A-Za-z0-9]){EXTENSION_PATTERN}(?![^\W_])", re.IGNORECASE)
#: A token with a file extension after at least one character of its own. ``(?<!\S)``: it is looked for from a
#: token's first character only, so each character is read a bounded number of times.
_FILE_TOKEN = re.compile(rf"(?<!\S)[^\s]+?\.(?=[A-Za-z0-9]){EXTENSION_PATTERN}(?![^\W_])\S*", re.IGNORECASE)
#: What an image host or a CMS adds to a name: a ``-300x200`` or ``_1024x768`` size, WordPress's ``-scaled`` and
#: ``-e1589384758123`` (an edited copy), ``@2x``.
_NAME_SIZE = re.compile(r"(?:[-_]\d{2,4}[xX]\d{2,4})?(?:-scaled)?(?:-e\d{10,13})?(?:@\d(?:\.\d)?x)?$")
_THUMBNAIL_PREFIX = re.compile(r"^\d{2,4}px-(?=.)")
_NAMESPACE = re.compile(r"^(?:File|Image|Datei|Fichier|Archivo|Bild):\s*(?=\S)", re.IGNORECASE)
#: Punctuation that ends a sentence or a bracket after a file name, kept: ``see dog.jpg.`` -> ``see dog.``.
_TRAILING = ".,;:!?)]}\"'»"
_SPACES = re.compile(r"\s{2,}")


def has_wrapper(text: str) -> bool:
    """Whether :func:`strip_wrappers` may change ``text`` (a few substring tests, a regex search when ``text``
    has a dot, and a match at its start)."""
    if "<" in text or "&" in text or ("[" in text and "]" in text):
        return True
    if "." in text and _EXTENSION.search(text) is not None:
        return True
    return PREAMBLE.match(text) is not None


def strip_wrappers(text: str) -> str:
    """``text`` without its wrappers (see the module docstring), spaces collapsed; ``text`` itself when it has
    none. Decoded characters may stand outside the caller's Unicode form."""
    if not has_wrapper(text):
        return text
    out = text
    for _ in range(MAX_DECODING_ROUNDS):
        if "&" not in out:
            break
        decoded = _ENTITY.sub(_decode, out)
        if decoded == out:
            break
        out = decoded
    if "<" in out:
        out = _TAG.sub(_tag_gap, _CODE_ELEMENT.sub(" ", out))
    if "[" in out:
        out = _BBCODE.sub(" ", out)
    preamble = PREAMBLE.match(out)
    if preamble is not None and any(char.isalnum() for char in out[preamble.end() :]):
        out = out[preamble.end() :]  # a preamble with nothing after it is no wrapper
    named = False
    if "." in out:
        last = out.rsplit(None, 1)[-1] if out.strip() else ""
        file_name = _FILE_TOKEN.fullmatch(last)
        named = file_name is not None and _file_stem(file_name) != last
        out = _FILE_TOKEN.sub(_file_stem, out)
    if out == text:
        return text
    out = _SPACES.sub(" ", out).strip()
    return _NAMESPACE.sub("", out) if named else out


def unwrap_caption(text: str) -> str:
    """What ICC's scorers read of a caption: ``text`` without its wrappers (:func:`strip_wrappers`), in the
    Unicode form; ``text`` itself when it has none, or when nothing but a wrapper is left (web junk, which they
    score 0.0 without reading)."""
    form = unicode_form(text)
    stripped = strip_wrappers(form)
    if stripped is form or not any(char.isalnum() for char in stripped):
        return text
    return unicode_form(stripped)


def _decode(match: re.Match) -> str:
    decoded = html.unescape(match.group())
    return " " if decoded == "\xa0" else decoded


def _tag_gap(match: re.Match) -> str:
    name = match.group(2)
    return "" if name is not None and name.lower() in INLINE_ELEMENTS else " "


def _file_stem(match: re.Match) -> str:
    """A file-name token as the name it carries: extension, host suffix and size parts taken off, the punctuation
    after it kept. Paths and URLs (``/``, ``\\``, ``www.``) are left as they are."""
    token = match.group()
    if "/" in token or "\\" in token or token[:4].lower() == "www.":
        return token
    extension = _EXTENSION.search(token, 1)
    if extension is None:  # cannot happen: the token matched with one
        return token
    stem = _THUMBNAIL_PREFIX.sub("", _NAME_SIZE.sub("", token[: extension.start()]))
    rest = token[extension.end() :]
    tail = rest[len(rest.rstrip(_TRAILING)) :]
    return stem + tail if stem.strip(".-_") else token
