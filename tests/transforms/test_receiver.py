"""`runlake serve`: the OTLP/HTTP receiver, its answers, its landing files and what an ingest of
them gives."""

import base64
import gzip
import json
import os
import socket
import subprocess
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.transforms.receiving import (
    RUNLAKE,
    TOKEN,
    Served,
    ingested,
    json_request,
    json_span,
    landed,
    post,
)
from transforms import warehouse
from transforms.ingest import ingest
from transforms.normalize import otlp_protobuf
from transforms.receiver import decode as otlp


@pytest.fixture
def landing(tmp_path: Path) -> Path:
    return tmp_path / "landing"


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


@pytest.mark.parametrize("size", [b"-1", b"+5", b"0x10", b"1_0", b" ", b"FFFFFFFFFFFFFFFFFFFF"])
def test_a_chunk_size_that_is_not_plain_hex_is_refused_at_once(landing: Path,
                                                               size: bytes) -> None:
    """Every chunk size of a chunked body is a non-negative hex number within the body limit:
    anything else is answered 400 (or 413) at once, while the client still holds the
    connection open, and nothing of it is buffered (a size of -1 read until the client
    closed)."""

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
    con = ingested(landing, tmp_path / "home")
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
