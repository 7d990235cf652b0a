"""`runlake serve`: the OTLP/HTTP receiver, its answers, its landing files and what an ingest of
them gives."""

import base64
import gzip
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from transforms import warehouse
from transforms.ingest import ingest
from transforms.normalize import otlp_protobuf
from transforms.receiver import decode as otlp
from transforms.receiver.landing import LandingFiles, WriteQueue
from transforms.receiver.server import Receiver

RUNLAKE = Path(sys.executable).parent / "runlake"
ROOT = Path(__file__).resolve().parents[2]
TOKEN = "s3cret-token-of-the-tests"


class Served:
    """A `runlake serve` process and its URL."""

    def __init__(self, landing: Path, env: dict[str, str] | None = None,
                 args: tuple[str, ...] = (), landing_option: bool = True,
                 cwd: Path | None = None) -> None:
        self.landing = landing
        full = {k: v for k, v in os.environ.items() if not k.startswith("RUNLAKE_")}
        full.update(env or {})
        where = ["--landing", str(landing)] if landing_option else []
        self.proc = subprocess.Popen(
            [str(RUNLAKE), "serve", *where, "--port", "0", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full, cwd=cwd)
        assert self.proc.stdout is not None
        self.before: list[str] = []  # what it said before it listened
        first = ""
        self.landing_line = ""  # where it writes, said first
        for line in self.proc.stdout:
            first = line
            if "receiving OTLP/HTTP on" in line:
                break
            if line.startswith("landing folder: ") and not self.landing_line:
                self.landing_line = line
                continue
            self.before.append(line)
        if "receiving OTLP/HTTP on" not in first:
            raise AssertionError(f"the receiver did not start: {first}{self.proc.stderr.read()}")
        self.url = first.split(" on ", 1)[1].split(" into ", 1)[0]

    def stop(self) -> str:
        """SIGTERM; what it printed after its first line."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=60)
        assert self.proc.returncode in (0, -9), err
        return out + err


@pytest.fixture
def landing(tmp_path: Path) -> Path:
    return tmp_path / "landing"


def post(url: str, body: bytes, media: str = otlp.PROTOBUF,
         headers: dict[str, str] | None = None) -> tuple[int, bytes, dict[str, str]]:
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": media, **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers)


def json_request(spans: list[dict[str, Any]], service: str = "svc") -> bytes:
    return json.dumps({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name",
                                     "value": {"stringValue": service}}]},
        "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]}).encode()


def json_span(trace: str, span_id: str, parent: str | None = None, **attrs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": trace, "spanId": span_id, "name": "op", "kind": 1,
        "startTimeUnixNano": "1795725567000000000", "endTimeUnixNano": "1795725568000000000",
        "attributes": [{"key": k, "value": {"stringValue": v} if isinstance(v, str)
                        else {"intValue": str(v)}} for k, v in attrs.items()]}
    if parent:
        out["parentSpanId"] = parent
    return out


def landed(landing: Path) -> tuple[list[Path], list[Path]]:
    """(closed files, temporary files) under the landing folder."""
    return (sorted(landing.glob("*/*.otlp.jsonl")), sorted(landing.glob("*/.*.part")))


# -- in process: the decoder, the files, the queue --------------------------------------------


def test_protobuf_is_kept_and_bad_spans_are_rejected() -> None:
    """A protobuf request is written as it came (base64), without the spans rejected: a span
    with a 3-byte trace id or an all-zero span id is left out and counted in partial_success,
    the others are kept; the ingest's decoding gives their ids as OTLP/JSON's hex."""
    req = ExportTraceServiceRequest()
    scope = req.resource_spans.add().scope_spans.add()
    for trace, span_id, parent in ((bytes(range(1, 17)), bytes(range(1, 9)), b""),
                                   (b"abc", bytes(range(1, 9)), b""),
                                   (bytes(range(1, 17)), bytes(8), b""),
                                   (bytes(range(1, 17)), bytes(range(2, 10)),
                                    bytes(range(1, 9)))):
        s = scope.spans.add(trace_id=trace, span_id=span_id, parent_span_id=parent, name="x")
        s.attributes.add(key="n", value={"int_value": 7})
    got = otlp.decode(req.SerializeToString(), otlp.PROTOBUF)
    assert (got.accepted, got.rejected) == (2, 2)
    assert got.error_message() == (
        "2 spans rejected: resourceSpans[0].scopeSpans[0].spans[1]: traceId is not 16 bytes; "
        "resourceSpans[0].scopeSpans[0].spans[2]: spanId is all zeros")
    assert got.line is not None and got.line.endswith(b"\n")
    line = json.loads(got.line)
    assert line["signal"] == "traces"
    kept = ExportTraceServiceRequest.FromString(base64.b64decode(line["otlpProtobuf"]))
    assert [s.span_id for s in kept.resource_spans[0].scope_spans[0].spans] == [
        bytes(range(1, 9)), bytes(range(2, 10))]
    spans = otlp_protobuf.records(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert [(s["traceId"], s["spanId"], s.get("parentSpanId")) for s in spans] == [
        ("0102030405060708090a0b0c0d0e0f10", "0102030405060708", None),
        ("0102030405060708090a0b0c0d0e0f10", "0203040506070809", "0102030405060708")]
    assert spans[0]["attributes"] == {"n": 7}
    # Without a rejected span, the bytes written are the request's own.
    whole = ExportTraceServiceRequest()
    whole.resource_spans.add().scope_spans.add().spans.add(
        trace_id=bytes(range(1, 17)), span_id=bytes(range(1, 9)), name="x")
    body = whole.SerializeToString()
    assert base64.b64decode(json.loads(otlp.decode(body, otlp.PROTOBUF).line or b"")[
        "otlpProtobuf"]) == body
    answer = ExportTraceServiceResponse.FromString(otlp.export_response(got, otlp.PROTOBUF))
    assert answer.partial_success.rejected_spans == 2
    assert answer.partial_success.error_message == got.error_message()
    ok = otlp.decode(json_request([json_span("AB" * 16, "cd" * 8)]), otlp.JSON)
    assert ok.rejected == 0 and otlp.export_response(ok, otlp.JSON) == b"{}"
    assert json.loads(ok.line or b"")["resourceSpans"][0]["scopeSpans"][0]["spans"][0][
        "traceId"] == "ab" * 16


def test_status_is_a_google_rpc_status() -> None:
    """The error body in protobuf: field 1 (varint code), field 2 (message): 08 03 12 02 'hi'."""
    assert otlp.status(3, "hi", otlp.PROTOBUF) == b"\x08\x03\x12\x02hi"
    assert otlp.status(300, "", otlp.PROTOBUF) == b"\x08\xac\x02\x12\x00"  # 300 = 0b10_0101100
    assert json.loads(otlp.status(14, "later", otlp.JSON)) == {"code": 14, "message": "later"}


def test_a_gzip_bomb_stops_at_the_limit() -> None:
    bomb = gzip.compress(b"\0" * 5_000_000)
    assert len(bomb) < 10_000
    with pytest.raises(otlp.TooLarge):
        otlp.gunzip(bomb, 1_000_000)
    with pytest.raises(otlp.DecodeError):
        otlp.gunzip(b"not gzip", 1_000_000)
    with pytest.raises(otlp.DecodeError):
        otlp.gunzip(bomb[:-20], 10_000_000)
    assert otlp.gunzip(gzip.compress(b"abc"), 3) == b"abc"


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


# -- a receiver process ----------------------------------------------------------------------


@pytest.mark.slow
def test_bad_requests_get_their_status_and_the_receiver_stays_up(landing: Path) -> None:
    served = Served(landing, {"RUNLAKE_RECEIVER_TOKEN": TOKEN,
                              "RUNLAKE_RECEIVER_MAX_BODY_MB": "0.01"})  # 10,485 bytes
    url = served.url
    auth = {"Authorization": f"Bearer {TOKEN}"}
    good = json_request([json_span("a" * 32, "b" * 16)])
    try:
        assert post(url, good, otlp.JSON)[0] == 401
        assert post(url, good, otlp.JSON, {"Authorization": "Bearer wrong-token-wrong-token"}
                    )[0] == 401
        assert post(url, good, otlp.JSON, {"Authorization": f"Basic {TOKEN}"})[0] == 401
        cases = [
            (b"\xff\xff\xff", otlp.PROTOBUF, {}, 400),  # not an ExportTraceServiceRequest
            (b"{not json", otlp.JSON, {}, 400),
            (b"[1, 2]", otlp.JSON, {}, 400),
            (b'{"resourceSpans": 3}', otlp.JSON, {}, 400),
            (good, "text/plain", {}, 415),
            (good, "application/xml", {}, 415),
            (good, otlp.JSON, {"Content-Encoding": "br"}, 415),
            (b"x" * 20_000, otlp.JSON, {}, 413),
            (gzip.compress(b" " * 50_000), otlp.JSON, {"Content-Encoding": "gzip"}, 413),
            (b"not gzip", otlp.JSON, {"Content-Encoding": "gzip"}, 400),
        ]
        for body, media, headers, want in cases:
            code, text, got_headers = post(url, body, media, {**auth, **headers})
            assert code == want, (body[:30], media, headers, code, text)
            assert got_headers["Content-Type"] in (otlp.JSON, otlp.PROTOBUF)
        assert post(url.replace("/v1/traces", "/v1/metrics"), good, otlp.JSON, auth)[0] == 404
        # Still up: the good request is taken, gzip or not, and a rejected span is counted.
        assert post(url, good, otlp.JSON, auth)[:2] == (200, b"{}")
        code, text, _ = post(url, gzip.compress(good), otlp.JSON,
                             {**auth, "Content-Encoding": "gzip"})
        assert (code, text) == (200, b"{}")
        code, text, _ = post(url, json_request([json_span("zz", "b" * 16)]), otlp.JSON, auth)
        assert code == 200 and json.loads(text)["partialSuccess"]["rejectedSpans"] == "1"
    finally:
        said = served.stop()
    assert "2 spans written" in said and "1 span rejected" in said
    assert "refused 5 × 400, 3 × 401, 1 × 404, 2 × 413, 3 × 415" in said
    closed, parts = landed(landing)
    assert parts == [] and len(closed) == 1
    assert len(closed[0].read_bytes().splitlines()) == 2


@pytest.mark.slow
def test_it_will_not_listen_beyond_the_loopback_without_a_token(landing: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNLAKE_")}
    done = subprocess.run([str(RUNLAKE), "serve", "--landing", str(landing), "--host", "0.0.0.0",
                           "--port", "0"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "RUNLAKE_RECEIVER_TOKEN" in done.stderr
    assert not landing.exists()


def test_without_landing_it_asks_for_one_and_says_where_it_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`runlake serve` with neither --landing nor RUNLAKE_LANDING refuses to start, saying how
    to name a folder (the settings' default landing folder is the samples', which live traces
    would mix with), and writes nothing. Named by RUNLAKE_LANDING, it says first where it
    writes, as an absolute path, and what chose it; the folder the Dagster pipeline reads
    (Settings().landing) is that one, and an ingest of it finds the spans."""
    from transforms.read.landing import files_by_day
    from transforms.settings import Settings

    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNLAKE_")}
    refused = subprocess.run([str(RUNLAKE), "serve", "--port", "0"], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "say where to write what arrives: --landing DIR, or RUNLAKE_LANDING=DIR" in \
        refused.stderr
    assert "Traceback" not in refused.stderr and not list(tmp_path.iterdir())
    chosen = tmp_path / "chosen"
    served = Served(chosen, {"RUNLAKE_LANDING": "chosen"}, landing_option=False, cwd=tmp_path)
    try:
        assert served.landing_line == (
            f"landing folder: {chosen} (RUNLAKE_LANDING); the Dagster landing sensor reads it "
            f"when RUNLAKE_LANDING names it, and `runlake ingest {chosen}` reads what "
            "arrived\n")
        assert post(served.url, json_request([json_span("a" * 32, "b" * 16)]), otlp.JSON)[0] \
            == 200
    finally:
        said = served.stop()
    assert said.startswith("stopped: 1 request, 1 span written in 1 file")
    monkeypatch.chdir(tmp_path)
    for var in [v for v in os.environ if v.startswith("RUNLAKE_")]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("RUNLAKE_LANDING", "chosen")
    by_day = files_by_day(Settings().landing)
    [files] = by_day.values()
    assert [f.path.resolve().parent.parent for f in files] == [chosen]
    report = ingest([chosen], tmp_path / "home")
    assert report.rows["spans"] == 1


def _ingest(landing: Path, home: Path) -> Any:
    ingest([landing], home)
    return warehouse.connect(home)


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
    con = _ingest(landing, tmp_path / "home")
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
    con = _ingest(landing, tmp_path / "home")
    try:
        have = {r[0] for r in con.execute("SELECT span_id FROM spans").fetchall()}
        assert con.execute("SELECT count(*) FROM quarantine").fetchone() == (0,)
    finally:
        con.close()
    assert len(acked) >= 500 and set(acked) <= have


@pytest.mark.parametrize("size", [b"-1", b"+5", b"0x10", b"1_0", b" ", b"FFFFFFFFFFFFFFFFFFFF"])
def test_a_chunk_size_that_is_not_plain_hex_is_refused_at_once(landing: Path,
                                                               size: bytes) -> None:
    """Every chunk size of a chunked body is a non-negative hex number within the body limit:
    anything else is answered 400 (or 413) at once, while the client still holds the
    connection open, and nothing of it is buffered (a size of -1 read until the client
    closed)."""
    import socket

    served = Served(landing)
    try:
        host, port = served.url.split("//", 1)[1].split("/", 1)[0].split(":")
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                      b"\r\nTransfer-Encoding: chunked\r\n\r\n" + size + b"\r\n" + b"x" * 4096)
            answer = s.recv(4096)  # the connection stays open: the answer must come anyway
        assert answer.split(b" ", 2)[1] in (b"400", b"413"), answer[:80]
    finally:
        said = served.stop()
    assert "Traceback" not in said


def _nested_attribute_request(levels: int, big: int) -> bytes:
    """A JSON request of one span with an attribute nested 3 x `levels` deep and an intValue
    written as a bare number (as some exporters do)."""
    deep = '{"arrayValue": {"values": [' * levels + '{"stringValue": "x"}' + "]}}" * levels
    plain = json_span("ab" * 16, "cd" * 8)
    del plain["attributes"]
    span = json.dumps(plain)[:-1] + (
        f', "attributes": [{{"key": "big", "value": {{"intValue": {big}}}}}, '
        f'{{"key": "deep", "value": {deep}}}]}}')
    return (b'{"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": ['
            + span.encode() + b"]}]}]}")


def test_json_requests_are_read_as_a_file_is() -> None:
    """The receiver reads OTLP/JSON by runlake's rule for files: an integer beyond 64 bits
    keeps every digit (orjson made it 1.2345678901234568e+29), nesting deeper than orjson
    writes is written whole (it raised, and the connection closed without an answer), nesting
    deeper than any reader reads is a 400; an all-zero parentSpanId is refused."""
    big = 123456789012345678901234567890
    got = otlp.decode(_nested_attribute_request(100, big), otlp.JSON)
    assert got.accepted == 1 and got.line is not None
    assert f'"intValue":{big}'.encode() in got.line
    assert got.line.count(b'"arrayValue"') == 100 and got.line.endswith(b"\n")
    with pytest.raises(otlp.DecodeError):
        otlp.decode(_nested_attribute_request(400, big), otlp.JSON)
    zero = otlp.decode(json_request([json_span("ab" * 16, "cd" * 8, parent="0" * 16)]),
                       otlp.JSON)
    assert (zero.accepted, zero.rejected) == (0, 1)
    assert "parentSpanId is all zeros" in zero.error_message()


def test_a_deeply_nested_request_gets_an_answer(landing: Path, tmp_path: Path) -> None:
    served = Served(landing)
    big = 123456789012345678901234567890
    try:
        assert post(served.url, _nested_attribute_request(100, big), otlp.JSON)[:2] == \
            (200, b"{}")
        assert post(served.url, _nested_attribute_request(400, big), otlp.JSON)[0] == 400
    finally:
        said = served.stop()
    assert "Traceback" not in said and "1 span written" in said
    con = _ingest(landing, tmp_path / "home")
    try:
        (attributes,) = con.execute("SELECT attributes FROM spans").fetchone() or ("",)
        assert con.execute("SELECT count(*) FROM quarantine").fetchone() == (0,)
    finally:
        con.close()
    assert f'"big":{big}' in attributes and attributes.count("[") == 100


def test_a_gzip_body_of_several_members_is_read_whole() -> None:
    """RFC 1952 allows several gzip members one after another (what `cat a.gz b.gz` gives):
    each is read, the body limit counts them all, and bytes after the last that are not a
    member are refused."""
    a, b = b'{"resourceSpans": [', b"]}"
    assert otlp.gunzip(gzip.compress(a) + gzip.compress(b), 1000) == a + b
    assert otlp.gunzip(gzip.compress(a) + gzip.compress(b) + b"\0\0", 1000) == a + b
    with pytest.raises(otlp.TooLarge):
        otlp.gunzip(gzip.compress(b"x" * 600) + gzip.compress(b"y" * 600), 1000)
    with pytest.raises(otlp.DecodeError):
        otlp.gunzip(gzip.compress(a) + b"trailing", 1000)
    with pytest.raises(otlp.DecodeError):
        otlp.gunzip(gzip.compress(a)[:-3], 1000)


def test_the_token_is_checked_before_the_body_is_asked_for(landing: Path) -> None:
    """`Expect: 100-continue` without the token gets 401 at once (no 100 Continue first), with
    it 100 and then the answer; the Server header names the receiver, not its Python."""
    import socket

    served = Served(landing, {"RUNLAKE_RECEIVER_TOKEN": TOKEN})
    body = json_request([json_span("a" * 32, "b" * 16)])
    host, port = served.url.split("//", 1)[1].split("/", 1)[0].split(":")
    head = (b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Expect: 100-continue\r\nContent-Length: " + str(len(body)).encode() + b"\r\n")
    try:
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(head + b"\r\n")
            first = s.recv(4096)
        assert first.startswith(b"HTTP/1.1 401"), first[:80]
        assert b"Python" not in first and b"Server: runlake-receiver\r\n" in first
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(head + f"Authorization: Bearer {TOKEN}\r\n\r\n".encode())
            assert s.recv(4096).startswith(b"HTTP/1.1 100")
            s.sendall(body)
            assert s.recv(4096).startswith(b"HTTP/1.1 200")
    finally:
        said = served.stop()
    assert "1 span written" in said


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


@pytest.mark.slow
def test_logs_are_received_as_traces_are(landing: Path) -> None:
    """POST /v1/logs: the token, the status codes and the answer's partial_success (a record
    with a malformed span id is left out), gzip, and the records written, protobuf kept as it
    came and OTLP/JSON as OTLP/JSON, which an ingest reads into scores."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
        ExportLogsServiceRequest,
        ExportLogsServiceResponse,
    )

    served = Served(landing, {"RUNLAKE_RECEIVER_TOKEN": TOKEN})
    logs = served.url.replace("/v1/traces", "/v1/logs")
    auth = {"Authorization": f"Bearer {TOKEN}"}
    evaluation = [{"key": "gen_ai.evaluation.name", "value": {"stringValue": "judge"}},
                  {"key": "gen_ai.evaluation.score.label", "value": {"stringValue": "fail"}}]
    as_json = json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [
        {"timeUnixNano": "1795725567000000000", "eventName": "gen_ai.evaluation.result",
         "traceId": "ab" * 16, "spanId": "cd" * 8, "attributes": evaluation},
        {"timeUnixNano": "1795725567000000000", "spanId": "zz"}]}]}]}).encode()
    req = ExportLogsServiceRequest()
    rec = req.resource_logs.add().scope_logs.add().log_records.add(
        time_unix_nano=1795725567000000000, event_name="gen_ai.evaluation.result",
        trace_id=bytes(range(1, 17)), span_id=bytes(range(1, 9)))
    rec.attributes.add(key="gen_ai.evaluation.name", value={"string_value": "tone"})
    rec.attributes.add(key="gen_ai.evaluation.score.value", value={"double_value": 0.5})
    try:
        assert post(logs, as_json, otlp.JSON)[0] == 401
        assert post(logs, b"\xff\xff", otlp.PROTOBUF, auth)[0] == 400
        assert post(logs, as_json, "text/plain", auth)[0] == 415
        code, text, _ = post(logs, gzip.compress(as_json), otlp.JSON,
                             {**auth, "Content-Encoding": "gzip"})
        assert code == 200
        assert json.loads(text)["partialSuccess"]["rejectedLogRecords"] == "1"
        code, text, _ = post(logs, req.SerializeToString(), otlp.PROTOBUF, auth)
        assert code == 200
        assert not ExportLogsServiceResponse.FromString(text).HasField("partial_success")
    finally:
        said = served.stop()
    assert "2 log records written, 1 rejected" in said, said
    closed, _ = landed(landing)
    ingest(closed, landing.parent / "home")
    con = warehouse.connect(landing.parent / "home")
    try:
        rows = con.execute("SELECT name, value, label, trace_id, span_id, source FROM scores "
                           "ORDER BY name").fetchall()
    finally:
        con.close()
    assert rows == [
        ("judge", None, "fail", "ab" * 16, "cd" * 8, "log_record"),
        ("tone", 0.5, None, bytes(range(1, 17)).hex(), bytes(range(1, 9)).hex(), "log_record")]
