"""runlake serve's throughput: spans per second received and written, with 1 and with 8
concurrent OTLP/HTTP exporters on 127.0.0.1, and the receiver's peak memory.

    python bench/receiver.py [--spans 40960] [--batch 512] [--repeat 3] [--gzip]
                             [--baseline DIR]
    python bench/receiver.py --ingest [--spans 40960] [--batch 512] [--repeat 3]

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

`python bench/receiver_abuse.py` measures the receiver under abuse (slow connections,
compressed requests).
"""

import argparse
import gzip as gz
import os
import signal
import statistics
import subprocess
import sys
import tempfile
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
        url = listening(served)
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


def listening(served: subprocess.Popen[str]) -> str:
    """The URL the receiver listens on, from its `receiving OTLP/HTTP on URL into ...` line
    (the lines before it, such as where it writes, are skipped)."""
    assert served.stdout is not None
    for line in served.stdout:
        if "receiving" in line:
            return line.split(" on ", 1)[1].split(" into ", 1)[0]
    served.kill()
    raise SystemExit("the receiver did not start")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--exporter":
        exporter(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == "1")
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spans", type=int, default=40_960, help="spans sent per measure")
    ap.add_argument("--batch", type=int, default=512, help="spans per request")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gzip", action="store_true", help="gzip the requests")
    ap.add_argument("--baseline", type=Path, help="a folder holding another runlake's source "
                    "(a checkout of an earlier commit): its receiver is measured too, "
                    "interleaved, as the baseline")
    ap.add_argument("--ingest", action="store_true", help="measure the ingest of the "
                    "receiver's landing lines (protobuf kept, and OTLP/JSON) instead")
    args = ap.parse_args()
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
