"""runlake serve's throughput: spans per second received and written, with 1 and with 8
concurrent OTLP/HTTP exporters on 127.0.0.1, and the receiver's peak memory.

    python bench/receiver.py [--spans 40960] [--batch 512] [--repeat 3] [--gzip]
                             [--baseline DIR]
    python bench/receiver.py --ingest [--spans 40960] [--batch 512] [--repeat 3]
    python bench/receiver.py --abuse [--slow 100] [--seconds 20] [--bombs 10] [--repeat 3]

Each exporter is a process posting `ExportTraceServiceRequest`s of `--batch` GenAI spans (an
invoke_agent span over chat and execute_tool spans, the attributes an instrumented agent sets),
encoded once by the OpenTelemetry SDK's own encoder, over one keep-alive connection, as the SDK's
OTLPSpanExporter does; the `--spans` are split between the exporters. A receiver is started per
measure on a fresh landing folder and stopped with SIGTERM. Received: spans acknowledged (200)
per second of wall time from the first request to the last answer; every 200 comes after the
request's fsync, so received is written, and the landing files are counted after the stop to
check it. Peak memory: the receiver's VmHWM. The load is bounded (the spans given, 120 s at
most per measure) and the run stops by itself. Configurations are interleaved; medians of
`--repeat` are printed, with the load average. With `--baseline DIR` (a checkout of an
earlier commit), that runlake's receiver is measured too, interleaved with this one.

With `--ingest`, what an ingest of the receiver's landing files takes instead: the same
requests as the lines written for protobuf (the request kept as it came) and as OTLP/JSON lines.

With `--abuse`, the receiver under abuse instead: one exporter posting on a keep-alive
connection for `--seconds` while `--slow` connections are open (half send their request a
byte every 2 s, half send nothing; each connects again when closed), beside the same exporter
alone (interleaved): requests answered 200 per second, latency, answers other than 200 and
the receiver's peak memory. Then `--bombs` OTLP/JSON requests of a few hundred KiB of gzip
that expand to about 15 MiB, sent at once and each retried after its Retry-After: the
receiver's memory at rest, at its peak and 3 s after the last answer.
"""

import argparse
import gzip as gz
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNLAKE = Path(sys.executable).parent / "runlake"
TIMEOUT_S = 120


def request_body(batch: int, compress: bool) -> bytes:
    """One ExportTraceServiceRequest of `batch` spans, as the SDK's exporter encodes it."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    spans = []

    class Keep(SpanExporter):
        def export(self, batch_spans):  # type: ignore[no-untyped-def]
            spans.extend(batch_spans)
            return SpanExportResult.SUCCESS

    provider = TracerProvider(resource=Resource.create({"service.name": "bench-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(Keep()))
    tracer = provider.get_tracer("bench")
    run = 0
    while len(spans) < batch:
        with tracer.start_as_current_span("invoke_agent planner", attributes={
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"}):
            with tracer.start_as_current_span("chat gpt-4.1", attributes={
                    "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                    "gen_ai.request.model": "gpt-4.1", "gen_ai.response.model": "gpt-4.1",
                    "gen_ai.usage.input_tokens": 1200 + run, "gen_ai.usage.output_tokens": 80,
                    "gen_ai.response.finish_reasons": ["stop"]}):
                pass
            with tracer.start_as_current_span("execute_tool lookup", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup",
                    "gen_ai.tool.call.id": f"call_{run}"}):
                pass
        run += 1
    provider.shutdown()
    body = encode_spans(spans[:batch]).SerializePartialToString()
    return gz.compress(body) if compress else body


def exporter(url: str, body_file: str, requests_n: int, compress: bool) -> None:
    """One exporter process: post the body `requests_n` times on one connection (retrying a
    503 after its Retry-After, as the SDK does); exits non-zero on any other answer."""
    import requests

    body = Path(body_file).read_bytes()
    headers = {"Content-Type": "application/x-protobuf"}
    if compress:
        headers["Content-Encoding"] = "gzip"
    with requests.Session() as s:
        first = time.time()
        for _ in range(requests_n):
            while True:
                r = s.post(url, data=body, headers=headers, timeout=30)
                if r.status_code == 503:
                    time.sleep(float(r.headers.get("Retry-After", "1")))
                    continue
                if r.status_code != 200:
                    raise SystemExit(f"answer {r.status_code}: {r.text[:200]}")
                break
        print(f"{first} {time.time()}", flush=True)


def _peak_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def measure(n_exporters: int, spans: int, batch: int, body_file: Path,
            compress: bool, source: Path | None = None) -> tuple[float, float, int, float]:
    """(spans/s, MB/s written, spans counted in the landing files, receiver peak MB), of the
    receiver of this runlake or, with `source`, of the runlake in that folder (a checkout of an
    earlier commit: the baseline)."""
    per = max(1, spans // batch // n_exporters)
    with tempfile.TemporaryDirectory(prefix="runlake-bench-receiver-") as tmp:
        landing = Path(tmp) / "landing"
        env = {k: v for k, v in os.environ.items() if not k.startswith("RUNLAKE_")}
        if source is not None:
            env["PYTHONPATH"] = str(source)
        served = subprocess.Popen([str(RUNLAKE), "serve", "--landing", str(landing),
                                   "--port", "0"], stdout=subprocess.PIPE, text=True, env=env)
        assert served.stdout is not None
        url = _listening(served)
        start = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, __file__, "--exporter", url, str(body_file),
                                   str(per), "1" if compress else "0"], cwd=ROOT,
                                  stdout=subprocess.PIPE, text=True)
                 for _ in range(n_exporters)]
        spans_times: list[tuple[float, float]] = []
        try:
            for p in procs:
                out, _ = p.communicate(timeout=max(1.0, TIMEOUT_S - (time.perf_counter() - start)))
                if p.returncode == 0:
                    a, b = out.split()
                    spans_times.append((float(a), float(b)))
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            served.kill()
            raise SystemExit(f"{n_exporters} exporters did not finish in {TIMEOUT_S} s") from None
        # From the first request to the last answer (the exporters' start-up left out).
        elapsed = max(b for _, b in spans_times) - min(a for a, _ in spans_times) \
            if len(spans_times) == n_exporters else time.perf_counter() - start
        peak = _peak_kb(served.pid) / 1024
        served.send_signal(signal.SIGTERM)
        served.communicate(timeout=60)
        if any(p.returncode for p in procs):
            raise SystemExit("an exporter failed")
        files = sorted(landing.glob("*/*.otlp.jsonl"))
        written = sum(f.stat().st_size for f in files)
        counted = sum(_spans_in(f) for f in files)
        sent = per * n_exporters * batch
        if counted != sent:
            raise SystemExit(f"{sent} spans acknowledged, {counted} in the landing files")
        return sent / elapsed, written / elapsed / 1e6, counted, peak


def _spans_in(path: Path) -> int:
    """The spans of a landing file, whether its lines hold OTLP/JSON or a protobuf request."""
    import orjson

    from transforms.normalize.otlp_protobuf import records

    counted = 0
    for raw in path.read_bytes().splitlines():
        line = orjson.loads(raw)
        for rs in (records(line) if "otlpProtobuf" in line else line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                counted += len(ss["spans"])
    return counted


def ingest_speed(spans: int, batch: int, repeat: int) -> None:
    """What an ingest of the receiver's landing files takes: the same requests as the lines the
    receiver writes for protobuf (the request kept, base64) and as OTLP/JSON lines (what it
    wrote before, and writes for a JSON request), each ingested into a fresh home by a runlake
    process (one worker), interleaved; medians of `repeat`, with the process's peak RSS."""
    import base64
    import json
    import resource

    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from transforms.receiver import decode as otlp

    body = request_body(batch, False)
    as_json = MessageToDict(ExportTraceServiceRequest.FromString(body),
                            use_integers_for_enums=True)

    def hexed(o: object) -> None:
        if isinstance(o, dict):
            for k in ("traceId", "spanId", "parentSpanId"):
                if isinstance(o.get(k), str):
                    o[k] = base64.b64decode(o[k]).hex()
            for v in o.values():
                hexed(v)
        elif isinstance(o, list):
            for v in o:
                hexed(v)

    hexed(as_json)
    lines = {"protobuf": otlp.decode(body, otlp.PROTOBUF).line,
             "OTLP/JSON": otlp.decode(json.dumps(as_json).encode(), otlp.JSON).line}
    n = max(1, spans // batch)
    print(f"ingest of {n * batch:,} spans ({n} requests of {batch}); one worker; medians of "
          f"{repeat}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    results: dict[str, list[tuple[float, float, int]]] = {k: [] for k in lines}
    with tempfile.TemporaryDirectory(prefix="runlake-bench-ingest-") as tmp:
        for _ in range(repeat):
            for name, line in lines.items():  # interleaved
                assert line is not None
                root = Path(tmp) / name.replace("/", "-")
                f = root / "landing" / "2026-11-20" / "r.otlp.jsonl"
                f.parent.mkdir(parents=True, exist_ok=True)
                f.write_bytes(line * n)
                env = {k: v for k, v in os.environ.items() if not k.startswith("RUNLAKE_")}
                start = time.perf_counter()
                done = subprocess.run([str(RUNLAKE), "ingest", str(f), "--home",
                                       str(root / "home"), "--workers", "1"], env=env,
                                      capture_output=True, text=True)
                elapsed = time.perf_counter() - start
                if done.returncode != 0:
                    raise SystemExit(done.stderr[-2000:])
                peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
                results[name].append((n * batch / elapsed, elapsed, f.stat().st_size))
                import shutil

                shutil.rmtree(root)
        print("| landing lines | spans/s ingested | seconds | file MB |")
        print("|---|---:|---:|---:|")
        for name, rows in results.items():
            med = [statistics.median(r[i] for r in rows) for i in range(2)]
            print(f"| {name} | {med[0]:,.0f} | {med[1]:.1f} | {rows[0][2] / 1e6:.1f} |")
        print(f"peak RSS of the ingests: {peak / 1024:.0f} MB; load average after: "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def _start(env_extra: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str, Path]:
    """A receiver on a fresh landing folder: (its process, its URL, the folder)."""
    landing = Path(tempfile.mkdtemp(prefix="runlake-bench-receiver-")) / "landing"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNLAKE_")}
    env.update(env_extra or {})
    served = subprocess.Popen([str(RUNLAKE), "serve", "--landing", str(landing), "--port", "0"],
                              stdout=subprocess.PIPE, text=True, env=env)
    assert served.stdout is not None
    return served, _listening(served), landing


def _listening(served: subprocess.Popen[str]) -> str:
    """The URL the receiver listens on, from its `receiving OTLP/HTTP on URL into ...` line
    (the lines before it, such as where it writes, are skipped)."""
    assert served.stdout is not None
    for line in served.stdout:
        if "receiving" in line:
            return line.split(" on ", 1)[1].split(" into ", 1)[0]
    served.kill()
    raise SystemExit("the receiver did not start")


def _stop(served: subprocess.Popen[str], landing: Path) -> None:
    import shutil

    served.send_signal(signal.SIGTERM)
    served.communicate(timeout=60)
    shutil.rmtree(landing.parent, ignore_errors=True)


def _rss_kb(pid: int, key: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    return 0


def bomb(spans: int) -> bytes:
    """An OTLP/JSON request of `spans` chat spans with their own ids and token counts,
    gzipped at level 9: a small body that expands many times."""
    import orjson

    def span(i: int) -> dict[str, object]:
        return {"traceId": f"{i // 8 + 1:032x}", "spanId": f"{i + 1:016x}", "name": "chat gpt-4.1",
                "kind": 3, "startTimeUnixNano": "1795725567000000000",
                "endTimeUnixNano": "1795725568000000000",
                "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                               {"key": "gen_ai.request.model",
                                "value": {"stringValue": "gpt-4.1"}},
                               {"key": "gen_ai.usage.input_tokens",
                                "value": {"intValue": str(1000 + i % 7)}}]}

    body = orjson.dumps({"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "bench-agent"}}]},
        "scopeSpans": [{"scope": {"name": "bench"}, "spans": [span(i) for i in range(spans)]}]}]})
    return gz.compress(body, 9)


def measure_bombs(n: int, body: bytes) -> tuple[float, float, float, float]:
    """`n` copies of `body` sent at once (each retried after its Retry-After): (receiver RSS
    at rest MB, peak MB, MB 3 s after the last answer, seconds until every one was answered
    200)."""
    import requests

    served, url, landing = _start()
    try:
        rest = _rss_kb(served.pid) / 1024
        codes: list[int] = []

        def send() -> None:
            with requests.Session() as s:
                while True:
                    r = s.post(url, data=body, timeout=60, headers={
                        "Content-Type": "application/json", "Content-Encoding": "gzip"})
                    if r.status_code != 503:
                        codes.append(r.status_code)
                        return
                    time.sleep(float(r.headers.get("Retry-After", "1")))

        start = time.perf_counter()
        senders = [threading.Thread(target=send) for _ in range(n)]
        for t in senders:
            t.start()
        for t in senders:
            t.join(TIMEOUT_S)
        took = time.perf_counter() - start
        if codes != [200] * n:
            raise SystemExit(f"answers {codes}: not {n} × 200")
        peak = _rss_kb(served.pid, "VmHWM") / 1024
        time.sleep(3)
        after = _rss_kb(served.pid) / 1024
    finally:
        _stop(served, landing)
    return rest, peak, after, took


def _slow_client(url: str, stop: threading.Event, trickle: bool) -> None:
    """A connection that sends its request line a byte every 2 s (`trickle`) or nothing at
    all, connecting again whenever the receiver closes it, until `stop`."""
    import socket

    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    line = b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
    while not stop.is_set():
        try:
            with socket.create_connection((host, int(port)), timeout=2) as s:
                i = 0
                while not stop.is_set():
                    if trickle and i < len(line):
                        s.sendall(line[i:i + 1])
                        i += 1
                    try:
                        if s.recv(1 << 16) == b"":
                            break  # closed by the receiver: connect again
                    except TimeoutError:
                        continue
        except OSError:
            time.sleep(0.1)


def measure_slow(n_slow: int, seconds: float, body: bytes) -> tuple[float, float, float, int,
                                                                   float]:
    """One exporter posting `body` (protobuf) on one keep-alive connection for `seconds`, while
    `n_slow` connections (half a byte every 2 s, half silent) are open: (requests/s answered
    200, median and 99th percentile latency ms, answers other than 200, receiver peak MB)."""
    import requests

    served, url, landing = _start()
    stop = threading.Event()
    slow = [threading.Thread(target=_slow_client, args=(url, stop, i % 2 == 0), daemon=True)
            for i in range(n_slow)]
    try:
        for t in slow:
            t.start()
        time.sleep(3 if n_slow else 0)  # every slow connection open and older than a second
        latencies: list[float] = []
        other = 0
        end = time.perf_counter() + seconds
        with requests.Session() as s:
            while time.perf_counter() < end:
                t0 = time.perf_counter()
                try:
                    r = s.post(url, data=body, timeout=30,
                               headers={"Content-Type": "application/x-protobuf"})
                    ok = r.status_code == 200
                except requests.RequestException:
                    ok = False
                if ok:
                    latencies.append((time.perf_counter() - t0) * 1000)
                else:
                    other += 1
                    time.sleep(1)  # as the SDK does after a 503
        peak = _rss_kb(served.pid, "VmHWM") / 1024
    finally:
        stop.set()
        _stop(served, landing)
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else 0.0
    return (len(latencies) / seconds, statistics.median(latencies) if latencies else 0.0, p99,
            other, peak)


def abuse(args: argparse.Namespace) -> None:
    """The receiver under abuse: an exporter beside `--slow` slow or idle connections (and
    beside none, interleaved), and `--bombs` highly compressed requests sent at once."""
    body = request_body(args.batch, False)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; medians of "
          f"{args.repeat}")
    rows: dict[int, list[tuple[float, float, float, int, float]]] = {0: [], args.slow: []}
    for _ in range(args.repeat):
        for n in rows:  # interleaved
            rows[n].append(measure_slow(n, args.seconds, body))
    print(f"\nOne exporter, {args.batch} spans a request (protobuf), for {args.seconds:.0f} s:")
    print("| slow or idle connections open | requests/s answered 200 | median ms | p99 ms | "
          "answers other than 200 | receiver peak RSS MB |")
    print("|---|---|---|---|---|---|")
    for n, got in rows.items():
        med = [statistics.median(r[i] for r in got) for i in range(5)]
        print(f"| {n} | {med[0]:.1f} | {med[1]:.0f} | {med[2]:.0f} | {med[3]:.0f} | "
              f"{med[4]:.0f} |")
    big = bomb(args.bomb_spans)
    expanded = len(gz.decompress(big))
    bombs = [measure_bombs(args.bombs, big) for _ in range(args.repeat)]
    med = [statistics.median(r[i] for r in bombs) for i in range(4)]
    print(f"\n{args.bombs} requests at once, each {len(big) / 1024:.0f} KiB of gzip that expand "
          f"to {expanded / 2**20:.1f} MiB ({args.bomb_spans:,} spans, OTLP/JSON):")
    print("| receiver RSS at rest MB | peak RSS MB | RSS 3 s after MB | s until all answered "
          "200 |")
    print("|---|---|---|---|")
    print(f"| {med[0]:.0f} | {med[1]:.0f} | {med[2]:.0f} | {med[3]:.1f} |")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--exporter":
        exporter(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == "1")
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spans", type=int, default=40_960, help="spans sent per measure")
    ap.add_argument("--batch", type=int, default=512, help="spans per request")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gzip", action="store_true", help="gzip the requests")
    ap.add_argument("--abuse", action="store_true", help="measure the receiver beside slow "
                    "connections and under compressed requests instead of its throughput")
    ap.add_argument("--slow", type=int, default=100, help="with --abuse: slow connections")
    ap.add_argument("--seconds", type=float, default=20.0, help="with --abuse: how long the "
                    "exporter sends")
    ap.add_argument("--bombs", type=int, default=10, help="with --abuse: compressed requests "
                    "sent at once")
    ap.add_argument("--bomb-spans", type=int, default=40_000, help="with --abuse: spans in "
                    "each compressed request")
    ap.add_argument("--baseline", type=Path, help="a folder holding another runlake's source "
                    "(a checkout of an earlier commit): its receiver is measured too, "
                    "interleaved, as the baseline")
    ap.add_argument("--ingest", action="store_true", help="measure the ingest of the "
                    "receiver's landing lines (protobuf kept, and OTLP/JSON) instead")
    args = ap.parse_args()
    if args.abuse:
        abuse(args)
        return
    if args.ingest:
        ingest_speed(args.spans, args.batch, args.repeat)
        return
    with tempfile.TemporaryDirectory() as tmp:
        body_file = Path(tmp) / "request.bin"
        body_file.write_bytes(request_body(args.batch, args.gzip))
        print(f"{args.spans} spans per measure, {args.batch} a request "
              f"({body_file.stat().st_size / 1024:.0f} KiB, protobuf"
              f"{', gzip' if args.gzip else ''}); medians of {args.repeat}; load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        sources: dict[str, Path | None] = {"this runlake": None}
        if args.baseline is not None:
            sources["baseline"] = args.baseline.resolve()
        results: dict[tuple[str, int], list[tuple[float, float, int, float]]] = {
            (s, n): [] for s in sources for n in (1, 8)}
        for _ in range(args.repeat):
            for n in (1, 8):  # interleaved
                for s, source in sources.items():
                    results[s, n].append(measure(n, args.spans, args.batch, body_file,
                                                 args.gzip, source))
        print("| receiver | exporters | spans/s received = written | MB/s written | "
              "spans in files | receiver peak RSS MB |")
        print("|---|---|---|---|---|---|")
        for (s, n), rows in results.items():
            med = [statistics.median(r[i] for r in rows) for i in range(4)]
            print(f"| {s} | {n} | {med[0]:,.0f} | {med[1]:.1f} | {rows[0][2]:,} | "
                  f"{med[3]:.0f} |")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
