"""What the receiver's tests share: a `runlake serve` process, posting to it, OTLP/JSON requests
and spans, and the files it landed."""

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from transforms import warehouse
from transforms.ingest import ingest
from transforms.receiver import decode as otlp

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


def ingested(landing: Path, home: Path) -> Any:
    """A connection to the warehouse an ingest of the landing folder made in `home`."""
    ingest([landing], home)
    return warehouse.connect(home)
