"""`runlake serve` within its limits: slow and idle connections do not keep an exporter out, and
highly compressed requests, at once or waiting to decode, stay in the memory bound."""

import gzip
import socket
import threading
import time
from pathlib import Path

import pytest

from tests.transforms.receiving import Served, json_request, json_span, post
from transforms.receiver import decode as otlp


@pytest.fixture
def landing(tmp_path: Path) -> Path:
    return tmp_path / "landing"


def _vm(pid: int, key: str) -> int:
    """A process's VmHWM or VmRSS in MiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split(f"{key}:", 1)[1].split()[0]) // 1024


def _trickle(url: str, stop: threading.Event, closed: list[float]) -> None:
    """A client that sends its request line a byte a second, and notes when the receiver
    closed the connection."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    started = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=30) as s:
        for byte in b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n":
            if stop.is_set():
                return
            try:
                s.sendall(bytes([byte]))
                s.settimeout(1.0)
                if s.recv(1 << 16) == b"":
                    closed.append(time.monotonic() - started)
                    return
            except TimeoutError:
                continue
            except OSError:
                closed.append(time.monotonic() - started)
                return


@pytest.mark.slow
def test_slow_clients_do_not_keep_an_exporter_out(landing: Path) -> None:
    """Twenty connections that send their request a byte a second, against 8 places: an
    exporter that connects after them is answered 200 at once (a slow connection gives up its
    place), and no slow connection is kept beyond the deadline for its headers, however its
    bytes trickle in."""
    served = Served(landing, {"RUNLAKE_RECEIVER_CONNECTIONS": "8"})
    stop = threading.Event()
    closed: list[float] = []
    slow = [threading.Thread(target=_trickle, args=(served.url, stop, closed), daemon=True)
            for _ in range(20)]
    try:
        for t in slow:
            t.start()
        time.sleep(2.5)  # the slow connections are older than EVICTABLE_AFTER_S (1 s)
        body = json_request([json_span("a" * 32, "b" * 16)])
        for _ in range(3):
            code, _text, _h = post(served.url, body, otlp.JSON)
            assert code == 200
        for t in slow:
            t.join(20)
        # Closed by HEADERS_DEADLINE_S (10 s) at the latest; 20 s of trickle if not.
        assert len(closed) == 20
        assert max(closed) < 13
    finally:
        stop.set()
        served.stop()


def _bomb(spans: int) -> bytes:
    """An OTLP/JSON request of `spans` alike spans, gzipped: about 250 KiB that expand to
    about 17 MiB."""
    one = json_span("a" * 32, "b" * 16, **{"gen_ai.operation.name": "chat"})
    return gzip.compress(json_request([one] * spans), 9)


@pytest.mark.slow
def test_compressed_requests_at_once_stay_in_the_memory_bound(landing: Path) -> None:
    """Eight requests of 250 KiB that decode to 17 MiB each, sent at once (each retried after
    its Retry-After, as exporters do): all are written, the receiver's peak memory stays under
    300 MiB (eight decoded at once took 1.7 GiB), and it gives the memory back afterwards."""
    body = _bomb(40_000)
    assert len(body) < 400_000
    served = Served(landing)
    try:
        pid = served.proc.pid
        base = _vm(pid, "VmRSS")
        answers: list[int] = []

        def export() -> None:
            for _ in range(60):
                code, _t, headers = post(served.url, body, otlp.JSON,
                                         {"Content-Encoding": "gzip"})
                if code != 503:
                    answers.append(code)
                    return
                time.sleep(float(headers.get("Retry-After", "1")))
            answers.append(503)

        senders = [threading.Thread(target=export) for _ in range(8)]
        for t in senders:
            t.start()
        for t in senders:
            t.join(180)
        assert answers == [200] * 8
        peak, after = _vm(pid, "VmHWM"), _vm(pid, "VmRSS")
        assert peak < 300, (base, peak, after)
        assert after < base + 100, (base, peak, after)
    finally:
        said = served.stop()
    assert "320,000 spans written" in said


@pytest.mark.slow
def test_requests_that_wait_to_decode_do_not_hold_each_other_off(landing: Path) -> None:
    """With 16 MiB for requests (4 for bodies being read, 12 for decoding), a body whose
    decoding needs more than the whole budget is decoded alone rather than refused, and three
    bodies that arrive together are each decoded in turn: every one is answered 200 at its
    first try."""
    served = Served(landing, {"RUNLAKE_RECEIVER_MEMORY_MB": "16"})
    one = json_span("a" * 32, "b" * 16, **{"gen_ai.operation.name": "chat"})
    big = json_request([one] * 6_500)  # about 1.7 MiB: 8 times that is more than 12 MiB
    assert len(big) > 1.6 * 2**20
    try:
        assert post(served.url, big, otlp.JSON)[0] == 200
        codes: list[int] = []
        senders = [threading.Thread(target=lambda: codes.append(
            post(served.url, big, otlp.JSON)[0])) for _ in range(3)]
        for t in senders:
            t.start()
        for t in senders:
            t.join(60)
        assert codes == [200, 200, 200]
    finally:
        served.stop()
