"""Tokenization as packed arrays, in this process or in worker processes that scale with the cores.

A GPU scores captions several times faster than one Python call to a ``transformers`` tokenizer can
prepare them (on one H200: 215,796 captions/s forward-only against 17,919/s for ``tokenizer(captions)``,
``benchmarks/speed/results/gpu_end_to_end_cuda.json``). So the neural scorers tokenize with the raw Rust
``tokenizers.Tokenizer`` and get back two NumPy arrays per piece of text: the int32 ids of every caption
one after another, and each caption's length. The scoring process never handles per-token Python objects
(a worker reads each encoding's ids once, as ``tokenizers`` returns them, to pack them).

Captions travel to the workers as one UTF-8 buffer plus an int32 array of lengths (a string
buffer, not a pickled list of ``str``), and the ids come back as the two arrays. The workers
are child processes that import only this module (NumPy and ``tokenizers``, never torch), so
they start in a fraction of a second; one pool per tokenizer and size is kept for the rest of
the process.

A ``tokenizer.json`` may carry its own padding and truncation settings (all-MiniLM-L6-v2's pads
and truncates to 128): :meth:`TokenizerSpec.build` turns padding off and sets truncation to the
scorer's maximum explicitly, as the ``transformers`` call with ``truncation=True, max_length=...``
does, so the ids are the same.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import hashlib
import json
import os
import queue
import struct
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import chain
from typing import Any, BinaryIO

import numpy as np


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class TokenizerSpec:
    """What a worker needs to tokenize exactly as the scorer does: the tokenizer's JSON and the truncation.

    ``tokenizer_json`` is the loaded tokenizer's own serialization (what ``transformers`` set up, e.g. its
    post-processor), ``max_length`` the number of tokens kept (special tokens included).
    """

    tokenizer_json: str = field(repr=False)
    max_length: int
    truncation_side: str = "right"

    @classmethod
    def from_pretrained_tokenizer(cls, tokenizer: Any, max_length: int) -> TokenizerSpec:
        """The spec of a ``transformers`` fast tokenizer truncating at ``max_length``."""
        return cls(
            tokenizer.backend_tokenizer.to_str(), int(max_length), getattr(tokenizer, "truncation_side", "right")
        )

    @cached_property
    def key(self) -> str:
        """Identifies the tokenization (for sharing worker pools)."""
        digest = hashlib.sha256(self.tokenizer_json.encode("utf-8")).hexdigest()[:16]
        return f"{digest}:{self.max_length}:{self.truncation_side}"

    def build(self) -> Any:
        """A Rust tokenizer that truncates at ``max_length`` and never pads."""
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_str(self.tokenizer_json)
        tokenizer.no_padding()
        tokenizer.enable_truncation(self.max_length, stride=0, strategy="longest_first", direction=self.truncation_side)
        return tokenizer


@dataclass(frozen=True)
class PackedTokens:
    """Token ids of several captions: ``ids`` (int32) one caption after another, ``lengths`` (int32) how many each."""

    ids: np.ndarray
    lengths: np.ndarray

    def __len__(self) -> int:
        return len(self.lengths)

    @cached_property
    def starts(self) -> np.ndarray:
        """Where each caption's ids begin in ``ids`` (int64)."""
        starts = np.zeros(len(self.lengths), dtype=np.int64)
        np.cumsum(self.lengths[:-1], out=starts[1:])
        return starts

    @classmethod
    def concatenate(cls, parts: Sequence[PackedTokens]) -> PackedTokens:
        if len(parts) == 1:
            return parts[0]
        return cls(np.concatenate([part.ids for part in parts]), np.concatenate([part.lengths for part in parts]))

    @classmethod
    def from_lists(cls, token_ids: Sequence[Sequence[int]]) -> PackedTokens:
        """Packed from one list of ids per caption (a tokenizer call's ``input_ids``)."""
        lengths = np.fromiter(map(len, token_ids), dtype=np.int32, count=len(token_ids))
        ids = np.fromiter(chain.from_iterable(token_ids), dtype=np.int32, count=int(lengths.sum()))
        return cls(ids, lengths)


def encode_packed(tokenizer: Any, texts: list[str]) -> PackedTokens:
    """``texts`` tokenized by a Rust ``tokenizers.Tokenizer`` (special tokens added), packed."""
    encode = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)  # _fast: no offsets (tokenizers >= 0.21)
    return PackedTokens.from_lists([encoding.ids for encoding in encode(texts, add_special_tokens=True)])


@lru_cache(maxsize=8)
def built_tokenizer(spec: TokenizerSpec) -> Any:
    """``spec.build()``, once per process."""
    return spec.build()


def pack_texts(texts: Sequence[str]) -> tuple[str, np.ndarray]:
    """``texts`` as one string and the int32 length of each (in code points): cheap to send to a process."""
    return "".join(texts), np.fromiter(map(len, texts), dtype=np.int32, count=len(texts))


def unpack_texts(data: str, lengths: np.ndarray) -> list[str]:
    ends = np.cumsum(lengths, dtype=np.int64).tolist()
    return [data[start:end] for start, end in zip([0, *ends[:-1]], ends, strict=True)]


# -- worker processes -------------------------------------------------------------------------------
#
# Workers are plain child processes (``python -m modeling_icc.scoring.tokenize_workers``) that read
# requests from stdin and answer on stdout, in order. Unlike multiprocessing's spawn and forkserver,
# they never re-run the caller's main script (so no ``if __name__ == "__main__"`` guard is needed), and
# unlike fork they do not inherit a parent holding CUDA and torch's threads.
#
# A request is a header (caption count, bytes of text) followed by the int32 code-point lengths and
# the UTF-8 text of the joined captions; an answer is a header (caption count, token count) followed
# by the int32 lengths and ids. The first message to a worker is its spec as JSON.

_HEADER = struct.Struct("<QQ")
#: The caption count of an answer that carries an error message instead of ids.
_FAILED = 2**64 - 1


def _read_exact(stream: BinaryIO, size: int) -> bytes | None:
    data = stream.read(size)
    return data if len(data) == size else None


def _send(stream: BinaryIO, first: int, payload: bytes, *parts: bytes) -> None:
    stream.write(_HEADER.pack(first, len(payload)))
    for part in parts:
        stream.write(part)
    stream.write(payload)
    stream.flush()


def worker_main(stdin: BinaryIO, stdout: BinaryIO) -> None:
    """A worker's loop: read the spec, then answer every request until stdin closes."""
    header = _read_exact(stdin, _HEADER.size)
    if header is None:
        return
    settings = json.loads(_read_exact(stdin, _HEADER.unpack(header)[1]))
    tokenizer = TokenizerSpec(**settings).build()
    while (header := _read_exact(stdin, _HEADER.size)) is not None:
        count, size = _HEADER.unpack(header)
        lengths = np.frombuffer(_read_exact(stdin, 4 * count), dtype=np.int32)
        texts = unpack_texts(_read_exact(stdin, size).decode("utf-8", errors="surrogatepass"), lengths)
        try:
            packed = encode_packed(tokenizer, texts)
        except Exception as error:  # answered, so the caller raises it and the worker lives on
            _send(stdout, _FAILED, f"{type(error).__name__}\n{error}".encode("utf-8", errors="replace"))
            continue
        _send(stdout, len(packed), packed.ids.tobytes(), packed.lengths.tobytes())


class _Worker:
    """One child process, a thread writing its requests and a thread reading its answers."""

    def __init__(self, spec: TokenizerSpec) -> None:
        env = {
            **os.environ,
            # One thread per worker: the workers are the parallelism.
            "RAYON_NUM_THREADS": "1",
            "TOKENIZERS_PARALLELISM": "false",
            # The child imports this package as the parent did (also from a source checkout).
            "PYTHONPATH": os.pathsep.join(path for path in sys.path if path),
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        self.outstanding: deque[Future] = deque()
        self.requests: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self.alive = True
        settings = json.dumps(dataclasses.asdict(spec)).encode("utf-8")
        self.requests.put((0, settings, b""))
        self._writer = threading.Thread(target=self._write, daemon=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._writer.start()
        self._reader.start()

    def submit(self, texts: Sequence[str]) -> Future:
        future: Future = Future()
        data, lengths = pack_texts(texts)
        payload = data.encode("utf-8", errors="surrogatepass")
        with self._lock:  # answers come in request order
            if not self.alive:
                future.set_exception(RuntimeError(f"a tokenizer worker process exited (code {self.process.poll()})"))
                return future
            self.outstanding.append(future)
            self.requests.put((len(lengths), payload, lengths.tobytes()))
        return future

    def _write(self) -> None:
        try:
            while (request := self.requests.get()) is not None:
                count, payload, lengths = request
                _send(self.process.stdin, count, payload, lengths)
        except (BrokenPipeError, OSError):
            pass  # the reader reports the exit
        finally:
            with contextlib.suppress(OSError):
                self.process.stdin.close()

    def _read(self) -> None:
        stdout = self.process.stdout
        while (header := _read_exact(stdout, _HEADER.size)) is not None:
            count, size = _HEADER.unpack(header)
            if count == _FAILED:
                name, message = _read_exact(stdout, size).decode("utf-8").split("\n", 1)
                error = TypeError if name == "TypeError" else ValueError  # TypeError: not text (as in this process)
                self.outstanding.popleft().set_exception(error(f"tokenizing failed in a worker: {message}"))
                continue
            lengths = np.frombuffer(_read_exact(stdout, 4 * count), dtype=np.int32)
            ids = np.frombuffer(_read_exact(stdout, size), dtype=np.int32)
            self.outstanding.popleft().set_result(PackedTokens(ids, lengths))
        code = self.process.wait()
        with self._lock:
            self.alive = False
            while self.outstanding:
                self.outstanding.popleft().set_exception(
                    RuntimeError(f"a tokenizer worker process exited (code {code}) before answering")
                )

    def close(self) -> None:
        self.requests.put(None)
        self._writer.join()
        self._reader.join()


class TokenizerPool:
    """``workers`` processes tokenizing with one spec; :meth:`submit` returns a future of :class:`PackedTokens`."""

    def __init__(self, spec: TokenizerSpec, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"a tokenizer pool needs at least one worker, got {workers}")
        self.spec, self.workers = spec, workers
        self._workers = [_Worker(spec) for _ in range(workers)]

    def submit(self, texts: Sequence[str]) -> Future:
        """Tokenize ``texts`` on the least busy worker."""
        return min(self._workers, key=lambda worker: len(worker.outstanding)).submit(texts)

    @property
    def alive(self) -> bool:
        return all(worker.alive for worker in self._workers)

    def shutdown(self) -> None:
        for worker in self._workers:
            worker.close()


_POOLS: dict[tuple[str, int], TokenizerPool] = {}


def tokenizer_pool(spec: TokenizerSpec, workers: int, *, start: bool = True) -> TokenizerPool | None:
    """The process's pool for ``spec`` with ``workers`` processes (``start=False``: only if already running).

    A pool one of whose processes died (its callers got the error) is replaced by a new one.
    """
    key = (spec.key, workers)
    if key in _POOLS and not _POOLS[key].alive:
        _POOLS.pop(key).shutdown()
    if key not in _POOLS and start:
        _POOLS[key] = TokenizerPool(spec, workers)
    return _POOLS.get(key)


@atexit.register
def shutdown_pools() -> None:
    """Stop every tokenizer worker of this process (they are started again when needed)."""
    while _POOLS:
        _, pool = _POOLS.popitem()
        pool.shutdown()


if __name__ == "__main__":
    # Answers go to the original stdout; anything else printed goes to stderr.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    worker_main(sys.stdin.buffer, answers)
