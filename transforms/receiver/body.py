"""A request's body as HTTP/1.1 frames it (a Content-Length, or chunks), read within the
receiver's body limit and the bodies' memory budget. What the receiver does not take is a
Refused: the status and message to answer with, after which the connection closes (the rest of
the body is not read)."""

import re
from collections.abc import Callable
from email.message import Message
from io import BufferedIOBase

from transforms.receiver.limits import BODY_DEADLINE_S

RETRY_AFTER_S = 1
"""What a 503 asks the client to wait before it retries, in seconds."""

BUSY_MEMORY = ("the receiver is decoding as much as its memory allows "
               "(RUNLAKE_RECEIVER_MEMORY_MB): retry later")

CHUNK_LINE_BYTES = 1026
"""The longest chunk-size line read (hex digits, extensions, CRLF) before it is malformed."""

_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
"""A chunk size of a chunked body: hex digits only (the body limit bounds their sum)."""


class Refused(Exception):  # noqa: N818 - a refusal, not an error of runlake's
    """A body the receiver does not take: answered `code` with `message` (and `headers`)."""

    def __init__(self, code: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.headers = headers


def read_body(rfile: BufferedIOBase, headers: Message, limit: int,
              take: Callable[[int], bool]) -> bytes:
    """The request body, at most `limit` bytes; `take(n)` reserves `n` bytes of memory before
    they are read (False: none is free). Raises Refused: 411 without a length, 400 for a bad
    length or chunk, 413 over the limit, 503 without the memory, 408 when the bytes did not
    all arrive (the read deadline passed, or the client went away)."""
    if "chunked" in (headers.get("Transfer-Encoding") or "").lower():
        return _chunked(rfile, limit, take)
    raw = headers.get("Content-Length")
    if raw is None:
        raise Refused(411, "a Content-Length (or a chunked body) is required")
    try:
        length = int(raw)
        if length < 0:
            raise ValueError
    except ValueError:
        raise Refused(400, f"Content-Length {raw[:20]!r} is not a size") from None
    if length > limit:
        raise Refused(413, f"the body has {length} bytes, more than the {limit} the receiver "
                      "takes (RUNLAKE_RECEIVER_MAX_BODY_MB)")
    return _read(rfile, length, take)


def _read(rfile: BufferedIOBase, n: int, take: Callable[[int], bool]) -> bytes:
    if not take(n):
        raise Refused(503, BUSY_MEMORY, {"Retry-After": str(RETRY_AFTER_S)})
    try:
        data = rfile.read(n)
    except OSError:  # a socket timeout, a reset
        data = b""
    if len(data) < n:
        raise _timed_out()
    return data


def _timed_out() -> Refused:
    return Refused(408, f"the body did not arrive within {BODY_DEADLINE_S:.0f} s")


def _line(rfile: BufferedIOBase, limit: int) -> bytes:
    """A line of a chunked body, at most `limit` bytes (b"" when the connection ended)."""
    try:
        return rfile.readline(limit)
    except OSError:
        return b""


def _chunked(rfile: BufferedIOBase, limit: int, take: Callable[[int], bool]) -> bytes:
    parts: list[bytes] = []
    size = 0
    while True:
        line = _line(rfile, CHUNK_LINE_BYTES)
        if not line:  # the body ended (its deadline passed, or the client went away)
            raise _timed_out()
        digits = line.split(b";", 1)[0].strip()
        if not _CHUNK_SIZE.fullmatch(digits):
            # Only hex digits: int() would also take -1 (read to the end), +5 or 0x10.
            raise Refused(400, "a malformed chunked body (a chunk size is hex digits)")
        n = int(digits, 16)
        if n == 0:
            while _line(rfile, CHUNK_LINE_BYTES) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(parts)
        size += n
        if size > limit:
            raise Refused(413, f"the body is larger than the {limit} bytes the receiver takes "
                          "(RUNLAKE_RECEIVER_MAX_BODY_MB)")
        parts.append(_read(rfile, n, take))
        if _line(rfile, 3) not in (b"\r\n", b"\n"):
            raise Refused(400, "a malformed chunked body (a chunk is longer than its size)")
