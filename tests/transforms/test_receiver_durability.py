"""`runlake serve` loses nothing it acknowledged: files a killed receiver left open, a full write
queue, a refused write, kill -9, and many SDK senders at once, each span once in the lake."""

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.transforms.receiving import ROOT, Served, ingested, json_request, json_span, landed, post
from transforms.receiver import decode as otlp
from transforms.receiver.landing import LandingFiles, WriteQueue
from transforms.receiver.server import Receiver


@pytest.fixture
def landing(tmp_path: Path) -> Path:
    return tmp_path / "landing"


def test_files_a_killed_receiver_left_open_are_closed(landing: Path) -> None:
    """Recovery keeps the complete lines of a temporary file, cuts the half-written last one,
    removes a file with no complete line, and renames: the walk of an ingest never saw them."""
    day = landing / "2026-11-26"
    day.mkdir(parents=True)
    (day / ".otlp-20261126T101010-1-00001.otlp.jsonl.part").write_bytes(b'{"a":1}\n{"b":')
    (day / ".otlp-20261126T101011-1-00002.otlp.jsonl.part").write_bytes(b'{"half')
    files = LandingFiles(landing, 1 << 20, 60)
    assert files.start() == [day / "otlp-20261126T101010-1-00001.otlp.jsonl"]
    assert (day / "otlp-20261126T101010-1-00001.otlp.jsonl").read_bytes() == b'{"a":1}\n'
    assert sorted(p.name for p in day.iterdir()) == ["otlp-20261126T101010-1-00001.otlp.jsonl"]
    # A second receiver on the same folder is refused while the first holds it.
    with pytest.raises(Exception, match="another runlake serve"):
        LandingFiles(landing, 1 << 20, 60).start()
    files.append(b"x\n", now=1795725567.0)  # 2026-11-26
    files.append(b"y\n", now=1795725567.0 + 86400)  # the next UTC day: a new file
    files.stop()
    assert [p.parent.name for p in files.closed] == ["2026-11-26", "2026-11-27"]
    assert [p.read_bytes() for p in files.closed] == [b"x\n", b"y\n"]
    assert landed(landing)[1] == []


def test_a_full_write_queue_answers_503_with_retry_after(landing: Path) -> None:
    """While the writer is held, a request beyond the queue's bound is answered 503 with
    Retry-After at once, and the held one is answered 200 once written."""
    release = threading.Event()

    class Held(LandingFiles):
        def append(self, data: bytes | list[bytes], now: float | None = None) -> None:
            release.wait(30)
            super().append(data, now)

    files = Held(landing, 1 << 20, 60)
    files.start()
    queue = WriteQueue(files, max_bytes=300)
    server = Receiver(("127.0.0.1", 0), queue, None, 1 << 20, 8, 64 << 20)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    try:
        body = json_request([json_span("a" * 32, f"{i:016x}") for i in range(1, 2)])
        first: list[Any] = []
        t = threading.Thread(target=lambda: first.append(post(url, body, otlp.JSON)))
        t.start()  # taken by the writer, held
        time.sleep(0.3)
        second: list[Any] = []
        t2 = threading.Thread(target=lambda: second.append(post(url, body, otlp.JSON)))
        t2.start()  # queued: the queue holds one line now
        time.sleep(0.3)
        code, text, headers = post(url, body, otlp.JSON)  # beyond 300 bytes
        assert code == 503 and headers["Retry-After"] == "1"
        assert json.loads(text)["code"] == 14
        release.set()
        t.join(10)
        t2.join(10)
        assert first[0][0] == 200 and second[0][0] == 200
    finally:
        server.shutdown()
        queue.stop()
        server.server_close()
    closed, parts = landed(landing)
    assert parts == [] and sum(len(p.read_bytes().splitlines()) for p in closed) == 2


@pytest.mark.slow
def test_sdk_senders_in_several_processes_give_every_span_once(landing: Path,
                                                                tmp_path: Path) -> None:
    """Four processes send GenAI traces at once through the OpenTelemetry SDK's OTLP/HTTP
    exporter (protobuf, gzip), two spans a request: each trace's chat and tool spans reach the
    receiver before their invoke_agent parent, in other requests, and (files closed at 2 KiB)
    in other files. The ingest gives every span once, every LLM call with its tokens, and the
    agent each sender named, never its service.name."""
    served = Served(landing, {"RUNLAKE_RECEIVER_FILE_MB": "0.002"})
    senders, runs = 4, 25
    try:
        procs = [subprocess.Popen([sys.executable, "-m", "tests.otel_sender", served.url,
                                   str(s), str(runs), "2"], cwd=ROOT, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for s in range(senders)]
        for p in procs:
            out, err = p.communicate(timeout=180)
            assert p.returncode == 0 and out.strip() == f"exported {runs * 3}", err
    finally:
        said = served.stop()
    assert f"{senders * runs * 3:,} spans written" in said
    closed, parts = landed(landing)
    assert parts == [] and len(closed) > senders
    con = ingested(landing, tmp_path / "home")
    try:
        assert con.execute("SELECT count(*), count(DISTINCT span_id) FROM spans").fetchall() == [
            (senders * runs * 3, senders * runs * 3)]
        # Spans of one trace in different files: the trace's agent reaches them all.
        split = con.execute("SELECT count(*) FROM (SELECT trace_id FROM spans GROUP BY trace_id "
                            "HAVING count(DISTINCT source_file) > 1)").fetchone()
        assert split is not None and split[0] > 0
        # sum over runs r = 0..24 of (100 + r) = 2500 + 300 = 2800 input tokens per sender;
        # 25 × 10 = 250 output tokens per sender.
        assert con.execute(
            "SELECT agent, count(*), sum(input_tokens), sum(output_tokens), min(model) "
            "FROM llm_calls GROUP BY agent ORDER BY agent").fetchall() == [
            (f"agent-{s}", runs, 2800, 250, "gpt-4.1") for s in range(senders)]
        assert con.execute("SELECT DISTINCT agent FROM spans WHERE agent LIKE 'service-%'"
                           ).fetchall() == []
        assert con.execute("SELECT count(*) FROM quarantine").fetchone() == (0,)
    finally:
        con.close()


@pytest.mark.slow
def test_kill_9_loses_nothing_acknowledged(landing: Path, tmp_path: Path) -> None:
    """Four threads post requests of 5 spans while the receiver is killed with SIGKILL; a new
    receiver closes the files the killed one left open. Every span of every request answered 200
    is in the ingest; what was not answered may be there once more, never half."""
    served = Served(landing)
    acked: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def send(worker: int) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            ids = [f"{worker:04x}{n:08x}{k:04x}" for k in range(5)]
            body = json_request([json_span(f"{worker + 1:032x}", i,
                                           attributes_pad="x" * 2000) for i in ids])
            try:
                code = post(served.url, body, otlp.JSON)[0]
            except (OSError, http.client.HTTPException):
                return  # the receiver is gone (killed mid-answer)
            if code == 200:
                with lock:
                    acked.extend(ids)

    threads = [threading.Thread(target=send, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    while True:
        with lock:
            if len(acked) >= 500:
                break
        time.sleep(0.01)
    served.proc.send_signal(signal.SIGKILL)
    served.proc.wait(30)
    stop.set()
    for t in threads:
        t.join(30)
    closed, parts = landed(landing)
    assert parts, "the kill left no file open: the test did not kill mid-stream"
    again = Served(landing)
    assert again.before == [f"closed {len(parts)} file{'s' if len(parts) > 1 else ''} a stopped "
                            "receiver left open\n"]
    assert again.stop().startswith("stopped: 0 requests")
    closed, parts = landed(landing)
    assert parts == []
    con = ingested(landing, tmp_path / "home")
    try:
        have = {r[0] for r in con.execute("SELECT span_id FROM spans").fetchall()}
        assert con.execute("SELECT count(*) FROM quarantine").fetchone() == (0,)
    finally:
        con.close()
    assert len(acked) >= 500 and set(acked) <= have


def test_a_refused_write_leaves_no_empty_landing_file(landing: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """On a full disk every write is refused (the request gets 503): the file opened for it
    holds no line, and it is removed when closed, neither renamed into the landing folder as
    an empty file nor counted as a file written."""
    import errno

    files = LandingFiles(landing, max_bytes=1 << 20, max_seconds=3600)
    files.start()
    real_write = os.write

    def full(fd: int, data: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    for _ in range(3):
        with pytest.raises(OSError):
            files.append(b'{"resourceSpans": []}\n')
        files.close()
    monkeypatch.setattr(os, "write", real_write)
    files.append(b'{"resourceSpans": []}\n')
    files.stop()
    closed, parts = landed(landing)
    assert parts == [] and files.closed == closed and len(closed) == 1
    assert closed[0].read_bytes() == b'{"resourceSpans": []}\n'
