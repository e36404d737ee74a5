"""Every remote call ends: the timeouts, bounded retries and listing policy of each filesystem icc opens.

:func:`~.locations.location` opens every URL's filesystem with :func:`storage_options`:

- **S3** (s3fs, botocore): ``connect_timeout`` and ``read_timeout`` of :func:`timeout` seconds, botocore's
  ``standard`` retry mode with 2 attempts (a 5xx, a throttling answer, a dropped connection or a timeout is
  tried once more), and s3fs's own retries of timeouts and cut reads lowered from 5 to 2 (s3fs nests them:
  a read is at most ``2 x 2 x 2`` tries), so a server that stops answering ends a call, and the job, with
  one line after about 8 timeouts plus backoff (66 s measured with the default: a single file, a frozen
  server). Uploads are sent without ``Expect: 100-continue``, whose wait no timeout bounds
  (:func:`bounded` sets both on each filesystem a process uses: neither is an option of s3fs's);
- **HTTP(S)** (aiohttp): connecting and each read wait at most :func:`timeout` seconds (no retry);
- listings are never cached (``use_listings_cache=False``): what a job checks on a store is what is there
  now, also when other processes (``--workers``) or other jobs wrote it since.

The Hub (``hf://``) keeps huggingface_hub's own timeouts (``HF_HUB_DOWNLOAD_TIMEOUT``,
``HF_HUB_ETAG_TIMEOUT``) and bounded retries; other stores keep their filesystem's defaults.

``ICC_REMOTE_TIMEOUT`` (seconds) sets :func:`timeout`. What fsspec's own configuration gives a
filesystem (``fsspec.config.conf``, ``FSSPEC_S3_*`` and ``FSSPEC_HTTP_*`` variables) wins over these
defaults, key by key (``config_kwargs`` and ``client_kwargs`` are merged).
"""

from __future__ import annotations

import os
from typing import Any

from .errors import UserInputError

#: Seconds a remote call waits to connect, and for each answer, unless ``ICC_REMOTE_TIMEOUT`` says otherwise.
DEFAULT_TIMEOUT = 10.0
TIMEOUT_ENV = "ICC_REMOTE_TIMEOUT"
#: Tries of one S3 request by botocore (``standard`` mode: the first and one retry).
S3_ATTEMPTS = 2
#: Tries of a call by s3fs itself (its ``retries``: 5 by default, nested, so 25 tries of a read).
S3FS_TRIES = 2
_S3 = ("s3", "s3a")
_HTTP = ("http", "https")


def timeout() -> float:
    """Seconds a remote call may wait to connect or for an answer (``ICC_REMOTE_TIMEOUT``, else 10)."""
    given = os.environ.get(TIMEOUT_ENV)
    if not given:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(given)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise UserInputError(f"{TIMEOUT_ENV}={given} is not a number of seconds above 0")
    return seconds


def storage_options(protocol: str) -> dict[str, Any]:
    """The options icc opens ``protocol``'s filesystem with (see the module docstring)."""
    options: dict[str, Any] = {"use_listings_cache": False}
    if protocol in _S3:
        seconds = timeout()
        options["config_kwargs"] = {
            "connect_timeout": seconds,
            "read_timeout": seconds,
            "retries": {"max_attempts": S3_ATTEMPTS, "mode": "standard"},
        }
    elif protocol in _HTTP:
        import aiohttp  # fsspec's HTTP filesystem runs on it

        seconds = timeout()
        options["client_kwargs"] = {
            "timeout": aiohttp.ClientTimeout(total=None, sock_connect=seconds, sock_read=seconds)
        }
    return _under_fsspec_config(protocol, options)


def bounded(fs: Any) -> None:
    """Bound what the options cannot on an s3fs filesystem (the instance this process and thread use for
    icc's options): its own retries (:data:`S3FS_TRIES`, an attribute), and uploads without
    ``Expect: 100-continue`` (botocore adds it to every upload; the wait for the server's ``100 Continue``
    is bounded by no timeout, so an upload to a server that stopped answering would wait forever)."""
    if type(fs).__module__.split(".")[0] != "s3fs" or getattr(fs, "_icc_bounded", False):
        return
    fs.retries = min(fs.retries, S3FS_TRIES)
    try:
        events = fs.s3.meta.events  # the client (made here, without a request)
    except Exception:  # no client yet: its first call fails, in its own words
        return
    from botocore.handlers import add_expect_header

    events.unregister("before-call.s3", add_expect_header)
    fs._icc_bounded = True


def _under_fsspec_config(protocol: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` less what fsspec's configuration sets for ``protocol`` (explicit options would replace it)."""
    from fsspec.config import conf

    configured: dict[str, Any] = {}
    for name in _S3 if protocol in _S3 else _HTTP if protocol in _HTTP else (protocol,):
        configured.update(conf.get(name, {}))
    kept = {}
    for key, value in options.items():
        if key not in configured:
            kept[key] = value
        elif isinstance(value, dict) and isinstance(configured[key], dict):
            kept[key] = {**value, **configured[key]}
    return kept
