"""Nothing secret is recorded or printed: credentials in URLs are hidden wherever a URL is written or shown.

A URL can carry credentials: user info (``http://user:PASSWORD@host/pool.parquet``,
``ftp://user:PASSWORD@host/...``) or a signed query (a presigned S3 URL's ``X-Amz-Signature``,
``X-Amz-Credential`` and ``X-Amz-Security-Token``, GCS's ``X-Goog-Signature``, an Azure SAS ``sig``, any
``token``, ``key``, ``password`` ...). Two functions hide them:

- :func:`public_url` replaces them with ``***`` (``http://***@host/pool.parquet``,
  ``...?X-Amz-Signature=***``) in a URL or any text holding URLs, by their form alone, so the same URL is
  always recorded the same way, in any process: what ``_run.json``, every ``NAME.stats.json`` and the
  summaries hold;
- :func:`redact` does that and also hides every secret that a URL given to :func:`remember` carried,
  wherever it appears in the text: a storage library's error can quote a URL's user info out of its URL
  (s3fs names ``KEY:SECRET@bucket`` as an invalid bucket name). What is printed goes through it: every
  ``icc`` error, notice and summary line, tracebacks and log lines (:mod:`modeling_icc.cli.main`).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

#: ``scheme://USERINFO@``: the user info runs to the ``@`` (a password may hold ``/``, which ends a host).
_USER_INFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<info>[^\s/?#@'\"<>]*(?::[^\s@'\"<>]*)?)@")
#: A query parameter whose name says it holds a secret, up to its value.
_SECRET_QUERY = re.compile(
    r"(?P<name>[?&;][A-Za-z0-9_.\-]*(?:sig|token|secret|passw|pwd|credential|key|auth|session)[A-Za-z0-9_.\-]*=)"
    r"(?P<value>[^&#\s'\"<>]*)",
    re.IGNORECASE,
)
#: What stands for a hidden secret.
HIDDEN = "***"
#: Secrets shorter than this are hidden in their URLs only, not wherever the text holds them (a one-letter
#: password would blank every such letter of a message).
_SHORTEST_LOOSE_SECRET = 4

_remembered: set[str] = set()


def public_url(text: str) -> str:
    """``text`` (a URL, or text holding URLs) with every credential of its URLs replaced by ``***``."""
    if "://" not in text and "=" not in text:
        return text
    text = _USER_INFO.sub(lambda match: f"{match['scheme']}{HIDDEN}@" if match["info"] else match[0], text)
    return _SECRET_QUERY.sub(lambda match: f"{match['name']}{HIDDEN}" if match["value"] else match[0], text)


def has_user_info(url: str) -> bool:
    """Whether ``url`` carries user info (``scheme://USER[:PASSWORD]@...``)."""
    match = _USER_INFO.match(url)
    return match is not None and bool(match["info"])


def remember(url: str) -> None:
    """Keep the secrets ``url`` carries, so that :func:`redact` hides them wherever they appear."""
    for match in _USER_INFO.finditer(url):
        info = match["info"]
        secrets = [info, info.split(":", 1)[1]] if ":" in info else [info]
        _remembered.update(secret for secret in secrets if secret)
    _remembered.update(match["value"] for match in _SECRET_QUERY.finditer(url) if match["value"])
    _remembered.update(unquote(secret) for secret in list(_remembered))


def redact(text: object) -> str:
    """``text`` as it may be shown: :func:`public_url`, and every remembered secret replaced by ``***``."""
    shown = public_url(str(text))
    for secret in sorted(_remembered, key=len, reverse=True):  # a whole user info before its password
        if len(secret) >= _SHORTEST_LOOSE_SECRET or ":" in secret:
            shown = shown.replace(secret, HIDDEN)
    return shown
