"""runlake serve under abuse: one exporter posting on a keep-alive connection for `--seconds`
while `--slow` connections are open (half send their request a byte every 2 s, half send
nothing; each connects again when closed), beside the same exporter alone (interleaved):
requests answered 200 per second, latency, answers other than 200 and the receiver's peak
memory. Then `--bombs` OTLP/JSON requests of a few hundred KiB of gzip that expand to about
15 MiB, sent at once and each retried after its Retry-After: the receiver's memory at rest, at
its peak and 3 s after the last answer.

    python bench/receiver_abuse.py [--slow 100] [--seconds 20] [--bombs 10] [--repeat 3]

The exporter's requests are bench/receiver.py's (GenAI spans encoded by the OpenTelemetry
SDK); a receiver is started per measure on a fresh landing folder and stopped with SIGTERM.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.receiver import RUNLAKE, TIMEOUT_S, listening, request_body  # noqa: E402


def _start(env_extra: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str, Path]:
    """A receiver on a fresh landing folder: (its process, its URL, the folder)."""
    landing = Path(tempfile.mkdtemp(prefix="runlake-bench-receiver-")) / "landing"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNLAKE_")}
    env.update(env_extra or {})
    served = subprocess.Popen([str(RUNLAKE), "serve", "--landing", str(landing), "--port", "0"],
                              stdout=subprocess.PIPE, text=True, env=env)
    assert served.stdout is not None
    return served, listening(served), landing


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
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=512, help="spans per request of the exporter")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--slow", type=int, default=100, help="slow connections")
    ap.add_argument("--seconds", type=float, default=20.0, help="how long the exporter sends")
    ap.add_argument("--bombs", type=int, default=10, help="compressed requests sent at once")
    ap.add_argument("--bomb-spans", type=int, default=40_000, help="spans in each compressed "
                    "request")
    abuse(ap.parse_args())


if __name__ == "__main__":
    main()
