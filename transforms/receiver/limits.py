"""What keeps the receiver serving exporters whatever other clients do: a deadline for every
read (Connections), a place among the open connections only for a request being answered, and
a memory budget for the requests being read and decoded (MemoryBudget)."""

import contextlib
import socket
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

HEADERS_DEADLINE_S = 10.0
"""A new connection's request line and headers must all arrive within this, however they
trickle in."""
IDLE_DEADLINE_S = 60.0
"""A kept-alive connection's next request line and headers must all arrive within this of the
last answer."""
BODY_DEADLINE_S = 60.0
"""A request's body must all arrive within this of its headers."""
EVICTABLE_AFTER_S = 1.0
"""A connection still reading its request after this long gives its place to a new
connection when every place is taken: exporters send a request at once."""
MEMORY_WAIT_S = 5.0
"""How long a request waits for memory to decode in before it is answered 503."""
TRIM_FROM = 16 << 20
"""A request that held this much of the memory budget or more gives the memory it freed back to
the system when answered: freed in its thread's heap, it would not serve the next request's
decoding in another thread."""


@dataclass
class _Connection:
    since: float
    """When it began what it is doing (its connection, its last answer, its headers)."""
    deadline: float | None
    """When it is closed unless it has moved on (None: working on a whole request)."""
    reading: bool = True


class Connections:
    """The open connections, at most `limit`: each one's deadline for what it is reading,
    whatever rate its bytes come at, and a new connection's place taken from one that is slow
    to send its request when every place is taken. A connection holds on to its place only
    while its whole request is being answered: never for a request it has not sent yet."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[Any, _Connection] = {}
        self._lock = threading.Lock()

    def add(self, sock: Any) -> bool:
        """Take a place for a new connection (False: every place is answering a request)."""
        now = time.monotonic()
        with self._lock:
            if len(self._open) >= self.limit:
                slow = [(c.since, s) for s, c in self._open.items()
                        if c.reading and now - c.since >= EVICTABLE_AFTER_S]
                if not slow:
                    return False
                _, oldest = min(slow, key=lambda x: x[0])
                self._close(oldest)
            self._open[sock] = _Connection(now, now + HEADERS_DEADLINE_S)
            return True

    def remove(self, sock: Any) -> None:
        with self._lock:
            self._open.pop(sock, None)

    def reading(self, sock: Any, seconds: float, fresh: bool = True) -> None:
        """`sock` reads (its next request, or a body) for at most `seconds` from now."""
        now = time.monotonic()
        with self._lock:
            c = self._open.get(sock)
            if c is not None:
                c.reading, c.deadline = True, now + seconds
                if fresh:
                    c.since = now

    def working(self, sock: Any) -> None:
        """`sock` has sent its whole request: it keeps its place until it is answered."""
        with self._lock:
            c = self._open.get(sock)
            if c is not None:
                c.reading, c.deadline = False, None

    def close_overdue(self) -> None:
        now = time.monotonic()
        with self._lock:
            for sock in [s for s, c in self._open.items()
                         if c.deadline is not None and c.deadline <= now]:
                self._close(sock)

    def _close(self, sock: Any) -> None:
        """End what `sock` is reading: its thread sees the end of the stream (and, for a body,
        answers 408) and closes it."""
        c = self._open.pop(sock)
        c.deadline = None
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RD)


BODIES_SHARE = 4
"""Of the receiver's memory, bodies being read take a part of this many (a quarter), requests
being decoded the rest: two budgets, so that a request waiting to decode, which holds its body,
never keeps another from decoding (one budget for both let requests that had read their bodies
wait on each other until every one got 503)."""


class MemoryBudget:
    """The bytes that requests may take at once for one use (bodies being read, or requests
    being decoded). A request takes its share before it reads its body or decodes it, waits
    MEMORY_WAIT_S at most for it, and gives it back once answered; a request larger than the
    whole budget is taken when no other holds any. A large share given back returns the freed
    memory to the system (glibc's malloc_trim, TRIM_FROM): a burst of large requests does not
    keep the receiver large."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._cond = threading.Condition()

    def take(self, n: int, wait: float, mine: int = 0) -> bool:
        """Take `n` more bytes; `mine`: what the caller holds already (a request whose own
        share fills the budget takes more without waiting for itself)."""
        end = time.monotonic() + wait
        with self._cond:
            while self.used - mine > 0 and self.used + n > self.limit:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            self.used += n
            return True

    def give(self, n: int) -> None:
        with self._cond:
            self.used -= n
            self._cond.notify_all()
        if n >= TRIM_FROM:
            _trim()


def _trim() -> None:
    """Return freed heap memory to the system (glibc); nothing elsewhere."""
    trim = _MALLOC_TRIM[0] if _MALLOC_TRIM else None
    if trim is not None:
        trim(0)


def _malloc_trim() -> Any:
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


_MALLOC_TRIM = [_malloc_trim()] if sys.platform.startswith("linux") else []
