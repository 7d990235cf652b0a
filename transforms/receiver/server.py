"""The OTLP/HTTP receiver: `POST /v1/traces` and `POST /v1/logs`, answered as the OTLP
specification says.

The standard library's ThreadingHTTPServer (a thread per connection, HTTP/1.1 keep-alive)
serves it: every answer waits on an fsync, which a thread per connection does plainly, and it
adds no dependency (the ASGI servers in the environment come with the Dagster UI, which a light
install may leave out). At most `receiver_connections` are open (Connections): every read has a
deadline, and a connection slow to send its request gives its place to a new one; requests
read and decode within `receiver_memory_mb` (two MemoryBudgets: bodies being read, requests
being decoded; both in transforms.receiver.limits).

Each request is checked in the order of the specification's status codes: path (404) and
method (405), the bearer token when one is set (401), the media type (415: protobuf or JSON)
and content encoding (415: gzip or none), the size before and after gzip (413), the body
(400 when it does not decode). Its landing line then goes to the write queue, which one
writer thread empties: it writes everything queued, fsyncs once (a group commit) and wakes the
requests, which answer 200 with an ExportTraceServiceResponse (partial_success naming the
rejected spans). When the queue holds more than `receiver_queue_mb` the request is answered 503
with Retry-After and nothing is written; a write that fails (a full disk) is a 503 too.
"""

import contextlib
import hmac
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType
from typing import Any

from transforms.errors import InputError
from transforms.receiver import decode as otlp
from transforms.receiver.body import BUSY_MEMORY, RETRY_AFTER_S, Refused, read_body
from transforms.receiver.landing import LandingFiles, WriteQueue
from transforms.receiver.limits import (
    BODIES_SHARE,
    BODY_DEADLINE_S,
    IDLE_DEADLINE_S,
    MEMORY_WAIT_S,
    Connections,
    MemoryBudget,
)

PATH = otlp.TRACES.path
SERVED = "POST /v1/traces and /v1/logs"
WRITE_TIMEOUT_S = 30.0
DECODE_FACTOR = 8
"""What decoding takes per byte of a body (gunzipped), measured for an OTLP/JSON body (the
parsed request); a protobuf body takes less (the parsed message and the base64 line it is
kept as, decode.py). bench/RESULTS.md has the figures."""
DRAIN_S = 5.0
_BUSY_BODY = b'{"code":14,"message":"too many connections: retry after 1 s"}'
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: application/json"
         b"\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(_BUSY_BODY)) + _BUSY_BODY


@dataclass
class Counts:
    requests: int = 0
    spans: int = 0
    rejected_spans: int = 0
    log_records: int = 0
    rejected_log_records: int = 0
    refused: dict[int, int] = field(default_factory=dict)


class Receiver(ThreadingHTTPServer):
    """The HTTP server with what its handlers share."""

    daemon_threads = True  # an idle keep-alive connection never holds the exit
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], queue: WriteQueue, token: str | None,
                 max_body: int, connections: int, memory_bytes: int) -> None:
        self.queue = queue
        self.token = token
        self.max_body = max_body
        self.counts = Counts()
        self.stopping = False
        self.connections = Connections(connections)
        self.bodies = MemoryBudget(memory_bytes // BODIES_SHARE)
        self.memory = MemoryBudget(memory_bytes - memory_bytes // BODIES_SHARE)
        self._lock = threading.Lock()
        self._in_flight = 0
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, Handler)

    def service_actions(self) -> None:
        """Between accepts (every poll interval): close what is past its deadline."""
        self.connections.close_overdue()

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.connections.add(request):
            self.refused(503)
            with contextlib.suppress(OSError):
                request.sendall(_BUSY)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.connections.remove(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.remove(request)

    def refused(self, code: int) -> None:
        with self._lock:
            self.counts.refused[code] = self.counts.refused.get(code, 0) + 1

    def busy(self, delta: int) -> None:
        with self._lock:
            self._in_flight += delta

    def drain(self, seconds: float) -> None:
        """Wait up to `seconds` for requests being answered."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            with self._lock:
                if self._in_flight == 0:
                    return
            time.sleep(0.02)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = IDLE_DEADLINE_S
    server: Receiver
    server_version = "runlake-receiver"
    _answered = 0
    _held: tuple[int, int] = (0, 0)
    """The bytes of the bodies' and the decoding's memory budgets this request holds."""

    def handle_one_request(self) -> None:
        if self._answered:  # kept alive: the next request within IDLE_DEADLINE_S
            self.server.connections.reading(self.connection, IDLE_DEADLINE_S)
        try:
            super().handle_one_request()
        finally:
            self._answered += 1
            self._give()

    def _take(self, n: int, wait: float, body: bool = False) -> bool:
        """Take `n` bytes of the bodies' budget (`body`) or the decoding's."""
        budget, at = (self.server.bodies, 0) if body else (self.server.memory, 1)
        if not budget.take(n, wait, self._held[at]):
            return False
        self._held = (self._held[0] + n, self._held[1]) if body else \
            (self._held[0], self._held[1] + n)
        return True

    def _give(self) -> None:
        (bodies, decoding), self._held = self._held, (0, 0)
        if bodies:
            self.server.bodies.give(bodies)
        if decoding:
            self.server.memory.give(decoding)

    def version_string(self) -> str:
        """The Server header: the receiver's name, not the Python that runs it."""
        return self.server_version

    def handle_expect_100(self) -> bool:
        """`Expect: 100-continue`: a request without the token is answered 401 before its
        body is asked for (the 100 Continue went out before the token was checked)."""
        if not self._authorized():
            self.close_connection = True
            self._refuse_token(self._answer_as())
            return False
        return bool(super().handle_expect_100())

    def _answer_as(self) -> str:
        media = self.headers.get_content_type()
        return media if media in otlp.MEDIA_TYPES else otlp.JSON

    def _authorized(self) -> bool:
        token = self.server.token
        if token is None:
            return True
        scheme, _, value = self.headers.get("Authorization", "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(),
                                                                  token.encode())

    def _refuse_token(self, answer_as: str) -> None:
        self._answer(401, "missing or wrong bearer token", answer_as,
                     {"WWW-Authenticate": 'Bearer realm="runlake"'})

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass  # one line per request would drown the terminal; counts are printed at the end

    def do_POST(self) -> None:  # noqa: N802 - the base class's name
        self.server.busy(+1)
        try:
            self._export()
        finally:
            self.server.busy(-1)

    def do_GET(self) -> None:  # noqa: N802
        self._other()

    do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_GET  # noqa: N815

    def _other(self) -> None:
        self.close_connection = True  # any body was not read
        path = self.path.split("?", 1)[0]
        if path in otlp.SIGNALS:
            self._answer(405, f"only POST is served on {path}", otlp.JSON, {"Allow": "POST"})
        else:
            self._answer(404, f"not found: the receiver serves {SERVED}", otlp.JSON)

    def _export(self) -> None:
        signal = otlp.SIGNALS.get(self.path.split("?", 1)[0])
        if signal is None:
            self.close_connection = True
            self._answer(404, f"not found: the receiver serves {SERVED}", otlp.JSON)
            return
        media = self.headers.get_content_type()
        answer_as = self._answer_as()
        if not self._authorized():
            self.close_connection = True
            self._refuse_token(answer_as)
            return
        if media not in otlp.MEDIA_TYPES:
            self.close_connection = True
            self._answer(415, f"unsupported media type {media!r}: send application/x-protobuf "
                         "or application/json", answer_as)
            return
        encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding not in ("gzip", "identity"):
            self.close_connection = True
            self._answer(415, f"unsupported Content-Encoding {encoding[:30]!r}: send gzip or "
                         "none", answer_as)
            return
        self.server.connections.reading(self.connection, BODY_DEADLINE_S)
        body = self._body(answer_as)
        if body is None:
            return
        self.server.connections.working(self.connection)
        # The memory to decode in: the gunzipped size (as the gzip trailer gives it, checked
        # once gunzipped) times DECODE_FACTOR.
        size = min(otlp.gunzipped_size(body), self.server.max_body) if encoding == "gzip" \
            else len(body)
        if not self._take(size * DECODE_FACTOR, MEMORY_WAIT_S):
            self._busy_memory(answer_as)
            return
        try:
            if encoding == "gzip":
                body = otlp.gunzip(body, self.server.max_body)
                if len(body) > size and not self._take((len(body) - size) * DECODE_FACTOR, 0):
                    self._busy_memory(answer_as)
                    return
            decoded = otlp.decode(body, media, signal)
        except otlp.TooLarge as e:
            self._answer(413, str(e), answer_as)
            return
        except otlp.DecodeError as e:
            self._answer(400, str(e)[:300], answer_as)
            return
        if decoded.line is not None:
            ticket = self.server.queue.submit(decoded.line)
            if ticket is None:
                self._answer(503, "the write queue is full: retry later", answer_as,
                             {"Retry-After": str(RETRY_AFTER_S)})
                return
            if not ticket.done.wait(WRITE_TIMEOUT_S) or ticket.error is not None:
                self._answer(503, ticket.error or "the write took too long: retry later",
                             answer_as, {"Retry-After": str(RETRY_AFTER_S)})
                return
        with self.server._lock:
            self.server.counts.requests += 1
            if signal is otlp.LOGS:
                self.server.counts.log_records += decoded.accepted
                self.server.counts.rejected_log_records += decoded.rejected
            else:
                self.server.counts.spans += decoded.accepted
                self.server.counts.rejected_spans += decoded.rejected
        self._send(200, otlp.export_response(decoded, media, signal), media)

    def _busy_memory(self, answer_as: str) -> None:
        self._answer(503, BUSY_MEMORY, answer_as, {"Retry-After": str(RETRY_AFTER_S)})

    def _body(self, answer_as: str) -> bytes | None:
        """The request body (None once refused: answered, and the connection closed)."""
        try:
            return read_body(self.rfile, self.headers, self.server.max_body,
                             lambda n: self._take(n, MEMORY_WAIT_S, body=True))
        except Refused as refused:
            self.close_connection = True
            self._answer(refused.code, refused.message, answer_as, refused.headers)
            return None

    def _answer(self, code: int, message: str, media: str,
                headers: dict[str, str] | None = None) -> None:
        self.server.refused(code)
        # google.rpc codes: 3 invalid argument, 16 unauthenticated, 14 unavailable, 5 not found
        rpc = {400: 3, 401: 16, 404: 5, 405: 12, 408: 4, 411: 3, 413: 8, 415: 3,
               503: 14}.get(code, 2)
        self._send(code, otlp.status(rpc, message, media), media, headers)

    def _send(self, code: int, body: bytes, media: str,
              headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(code)
            self.send_header("Content-Type", media)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            self.close_connection = True  # the client went away


def serve(landing: Path, host: str, port: int, token: str | None, *, max_body: int,
          queue_bytes: int, connections: int, file_bytes: int, file_seconds: float,
          memory_bytes: int, say: Callable[[str], None]) -> Counts:
    """Serve until SIGTERM or Ctrl-C, then close the landing files; the counts of what was
    received. `say` prints a line (the address once listening, the files a killed receiver
    left open, the totals at the end)."""
    files = LandingFiles(landing, file_bytes, file_seconds)
    recovered = files.start()
    try:
        queue = WriteQueue(files, queue_bytes)
    except BaseException:
        files.stop()
        raise
    try:
        server = Receiver((host, port), queue, token, max_body, connections, memory_bytes)
    except OSError as e:
        queue.stop()
        raise InputError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        # shutdown() waits for serve_forever to return: from another thread, and at any moment
        # (before serve_forever starts, it returns at once).
        threading.Thread(target=server.shutdown, daemon=True).start()

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        _listen(server, landing, token, recovered, say)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.stopping = True
        server.socket.close()  # no new connection; those open are answered or dropped
        queue.stop()
        server.drain(DRAIN_S)
        server.server_close()
    c = server.counts
    refused = ", ".join(f"{n} × {code}" for code, n in sorted(c.refused.items()))
    def n(count: int, noun: str) -> str:
        return f"{count:,} {noun if count == 1 else noun + 's'}"

    say(f"stopped: {n(c.requests, 'request')}, {n(c.spans, 'span')} written in "
        f"{n(len(files.closed), 'file')}, {n(c.rejected_spans, 'span')} rejected"
        + (f"; {n(c.log_records, 'log record')} written, {c.rejected_log_records:,} rejected"
           if c.log_records or c.rejected_log_records else "")
        + (f"; refused {refused}" if refused else ""))
    return c


def _listen(server: Receiver, landing: Path, token: str | None, recovered: list[Path],
            say: Callable[[str], None]) -> None:
    if recovered:
        say(f"closed {len(recovered)} file{'s' if len(recovered) != 1 else ''} a stopped "
            f"receiver left open")
    bound = server.server_address
    host_shown = str(bound[0])
    shown = f"[{host_shown}]" if ":" in host_shown else host_shown
    base = f"http://{shown}:{bound[1]!s}"
    say(f"receiving OTLP/HTTP on {base}{PATH} into {landing} (logs: {base}{otlp.LOGS.path})"
        + (" (bearer token required)" if token else ""))
    server.serve_forever(poll_interval=0.25)


def is_loopback(host: str) -> bool:
    """Whether `host` names the loopback only (127.0.0.0/8, ::1, localhost)."""
    import ipaddress

    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
