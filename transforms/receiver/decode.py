"""OTLP trace and log export requests as OTLP/JSON lines, and the answers the OTLP
specification asks for.

A request body is an `ExportTraceServiceRequest` (on /v1/traces) or an
`ExportLogsServiceRequest` (on /v1/logs) as protobuf (`application/x-protobuf`) or as OTLP/JSON
(`application/json`). Each becomes one line of a landing file, which `runlake ingest` reads as
kind otlp: an OTLP/JSON request is written as OTLP/JSON (`{"resourceSpans": [...]}` or
`{"resourceLogs": [...]}`, the collector file exporter's records), with trace and span ids as
lowercase hex; a protobuf request is kept as it came, base64 in `{"otlpProtobuf": ...,
"signal": "traces" | "logs"}`, and decoded by the ingest's workers (decoding it here was the
receiver's cost). A span whose trace or span id is missing, of the wrong length or all zeros, or
whose parent id is malformed, is rejected: left out of the line and counted in the answer's
`partial_success`; so is a log record whose trace or span id, when it has one, is malformed. A
body that does not decode is a `DecodeError` (400).
"""

import base64
import re
import zlib
from dataclasses import dataclass, field
from typing import Any

import orjson

from transforms.read import jsontext

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
MEDIA_TYPES = (PROTOBUF, JSON)
_HEX = {16: re.compile(r"[0-9a-fA-F]{32}"), 8: re.compile(r"[0-9a-fA-F]{16}")}
_SHOWN_REJECTIONS = 3


class DecodeError(ValueError):
    """The body is not an ExportTraceServiceRequest in the media type it was sent as."""


class TooLarge(ValueError):
    """The body, once gunzipped, is larger than the limit."""


@dataclass
class Decoded:
    """One request: its OTLP/JSON line (None when no span was accepted), the spans accepted and
    rejected, and why the first rejected ones were."""

    line: bytes | None
    accepted: int
    rejected: int = 0
    reasons: list[str] = field(default_factory=list)
    noun: str = "span"

    def error_message(self) -> str:
        if not self.rejected:
            return ""
        more = self.rejected - len(self.reasons)
        return (f"{self.rejected} {self.noun}{'s' if self.rejected != 1 else ''} rejected: "
                + "; ".join(self.reasons) + (f"; and {more} more" if more > 0 else ""))


def gunzip(body: bytes, limit: int) -> bytes:
    """A gzip body's contents, at most `limit` bytes (TooLarge above it: a small body can
    expand a thousandfold); every member of a multi-member body (RFC 1952), zero bytes after
    the last ignored; DecodeError when it is not gzip."""
    out = bytearray()
    rest = body
    try:
        while True:
            inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            out += inflate.decompress(rest, limit + 1 - len(out))
            if len(out) > limit:
                raise TooLarge(f"the body is larger than {limit} bytes once gunzipped")
            if not inflate.eof:
                raise DecodeError("the gzip body is truncated")
            rest = inflate.unused_data
            if not rest.strip(b"\0"):
                return bytes(out)
    except zlib.error as e:
        raise DecodeError(f"the body is not gzip: {e}") from None


def gunzipped_size(body: bytes) -> int:
    """The size a gzip body gives for its contents (its last member's ISIZE: the size modulo
    2**32, which gunzip checks), or the body's own size when it has no trailer."""
    return int.from_bytes(body[-4:], "little") if len(body) >= 18 else len(body)


@dataclass(frozen=True)
class Signal:
    """What one OTLP export path carries: its messages, its request's keys in OTLP/JSON and
    protobuf, and which of its items' ids are required."""

    path: str
    module: str
    """The protobuf module of its service's messages."""
    name: str
    """Its messages' stem: Export<name>ServiceRequest, Export<name>ServiceResponse,
    Export<name>PartialSuccess."""
    keys: tuple[str, str, str]
    """The OTLP/JSON keys of the resource list, a resource's scope list, a scope's items."""
    fields: tuple[str, str, str]
    """The same as protobuf field names."""
    noun: str
    """An item, as answers name it (span, log record)."""
    ids: tuple[tuple[str, str, int, bool], ...]
    """(OTLP/JSON key, protobuf field, bytes, required) of the item's ids."""
    rejected: str
    """The partial success's count of items rejected, as a protobuf field."""

    @property
    def request(self) -> str:
        return f"Export{self.name}ServiceRequest"

    def message(self, kind: str) -> Any:
        """The protobuf class Export<name><kind> (ServiceRequest, ServiceResponse,
        PartialSuccess), imported on first use."""
        import importlib

        return getattr(importlib.import_module(self.module), f"Export{self.name}{kind}")


_SPAN_IDS = (("traceId", "trace_id", 16, True), ("spanId", "span_id", 8, True))
TRACES = Signal("/v1/traces", "opentelemetry.proto.collector.trace.v1.trace_service_pb2",
                "Trace", ("resourceSpans", "scopeSpans", "spans"),
                ("resource_spans", "scope_spans", "spans"), "span",
                (*_SPAN_IDS, ("parentSpanId", "parent_span_id", 8, False)), "rejected_spans")
LOGS = Signal("/v1/logs", "opentelemetry.proto.collector.logs.v1.logs_service_pb2",
              "Logs", ("resourceLogs", "scopeLogs", "logRecords"),
              ("resource_logs", "scope_logs", "log_records"), "log record",
              tuple((key, name, size, False) for key, name, size, _ in _SPAN_IDS),
              "rejected_log_records")
"""A log record's ids are optional: a record that names them belongs to that span; all zeros
is a record outside any span."""
SIGNALS = {s.path: s for s in (TRACES, LOGS)}


def decode(body: bytes, media_type: str, signal: Signal = TRACES) -> Decoded:
    """The request in `body` (already gunzipped) as an OTLP/JSON line."""
    if media_type == PROTOBUF:
        return _decode_protobuf(body, signal)
    try:
        # runlake's reading of JSON, as for a file: integers beyond 64 bits kept exact,
        # nesting up to jsontext.READ_DEPTH levels.
        request = jsontext.loads(body)
    except orjson.JSONDecodeError as e:
        raise DecodeError(f"the body is not JSON: {e}") from None
    top, middle, inner = signal.keys
    if not isinstance(request, dict):
        raise DecodeError(f"the body is not an {signal.request} (a JSON object)")
    resources = request.get(top, [])
    if not isinstance(resources, list):
        raise DecodeError(f"{top} is not a list")
    decoded = Decoded(None, 0, noun=signal.noun)
    kept_resources = []
    for i, rs in enumerate(resources):
        if not isinstance(rs, dict):
            raise DecodeError(f"{top}[{i}] is not an object")
        scopes = rs.get(middle, [])
        if not isinstance(scopes, list):
            raise DecodeError(f"{top}[{i}].{middle} is not a list")
        kept_scopes = []
        for j, ss in enumerate(scopes):
            items = ss.get(inner, []) if isinstance(ss, dict) else None
            if not isinstance(items, list):
                raise DecodeError(f"{top}[{i}].{middle}[{j}] is not an object with a "
                                  f"list of {inner}")
            kept = []
            for k, item in enumerate(items):
                problem = _check_ids(item, signal)
                if problem is None:
                    kept.append(item)
                    continue
                decoded.rejected += 1
                if len(decoded.reasons) < _SHOWN_REJECTIONS:
                    decoded.reasons.append(f"{top}[{i}].{middle}[{j}].{inner}[{k}]: {problem}")
            if kept:
                kept_scopes.append({**ss, inner: kept})
                decoded.accepted += len(kept)
        if kept_scopes:
            kept_resources.append({**rs, middle: kept_scopes})
    if kept_resources:
        # Written as a file's line would be: every digit of a large integer, and nesting
        # deeper than orjson writes.
        decoded.line = jsontext.dumps({top: kept_resources}).encode() + b"\n"
    return decoded


def _decode_protobuf(body: bytes, signal: Signal) -> Decoded:
    """A protobuf request kept as it came: its items' ids checked on the parsed message, those
    that fail left out (the request written again without them, a rare case), and the request
    written as one line `{"otlpProtobuf": "<base64>", "signal": "traces" | "logs"}`, which the
    ingest's workers decode (transforms.normalize.otlp_protobuf). Decoding every span into
    OTLP/JSON here took the receiver's time (bench/RESULTS.md)."""
    from google.protobuf.message import DecodeError as ProtobufDecodeError

    try:
        message = signal.message("ServiceRequest").FromString(body)
    except ProtobufDecodeError as e:
        raise DecodeError(f"the body is not an {signal.request}: {e}") from None
    top, middle, inner = signal.keys
    resources_field, scopes_field, items_field = signal.fields
    decoded = Decoded(None, 0, noun=signal.noun)
    rejected: list[tuple[Any, int]] = []
    for i, rs in enumerate(getattr(message, resources_field)):
        for j, ss in enumerate(getattr(rs, scopes_field)):
            items = getattr(ss, items_field)
            for k, item in enumerate(items):
                problem = _raw_problem(item, signal)
                if problem is None:
                    decoded.accepted += 1
                    continue
                rejected.append((items, k))
                decoded.rejected += 1
                if len(decoded.reasons) < _SHOWN_REJECTIONS:
                    decoded.reasons.append(f"{top}[{i}].{middle}[{j}].{inner}[{k}]: {problem}")
    if rejected:
        for items, k in reversed(rejected):  # from the back: each index stays right
            del items[k]
        body = message.SerializeToString()
    if decoded.accepted:
        decoded.line = (b'{"otlpProtobuf":"' + base64.b64encode(body) + b'","signal":"'
                        + signal.path.rsplit("/", 1)[1].encode() + b'"}\n')
    return decoded


def _raw_problem(item: Any, signal: Signal) -> str | None:
    """Why a protobuf item is rejected, else None: the rules `_check_ids` applies to OTLP/JSON
    (an id missing, of the wrong length or all zeros; a malformed link id), on its bytes."""
    for key, field_name, size, required in signal.ids:
        value = getattr(item, field_name)
        if not value and not required:
            continue
        if len(value) != size:
            return f"{key} is not {size} bytes"
        if not value.strip(b"\0") and signal is not LOGS:  # a record's zeros: outside spans
            return f"{key} is all zeros"
    if signal is TRACES:
        for n, link in enumerate(item.links):
            for key, field_name, size, _ in _SPAN_IDS:
                if len(getattr(link, field_name)) != size:
                    return f"links[{n}].{key} is not a {size}-byte id"
    return None


def _check_ids(span: Any, signal: Signal) -> str | None:
    """Check an OTLP/JSON item's ids and write them as lowercase hex in place; the problem,
    else None."""
    if not isinstance(span, dict):
        return "not an object"
    for key, _, size, required in signal.ids:
        value = span.get(key)
        if value in (None, "") and not required:
            continue
        hexed = _hex(value, size)
        if hexed is None:
            return f"{key} {jsontext.dumps(value)[:40]} is not {size * 2} hex digits"
        if hexed.strip("0") == "":
            if signal is LOGS:  # a record outside any span: its ids unset
                span.pop(key)
                continue
            return f"{key} is all zeros"
        span[key] = hexed
    links = span.get("links")
    if isinstance(links, list):
        for n, link in enumerate(links):
            if not isinstance(link, dict):
                continue
            for key, _, size, _ in _SPAN_IDS:
                hexed = _hex(link.get(key), size)
                if hexed is None:
                    return f"links[{n}].{key} is not a {size}-byte id"
                link[key] = hexed
    return None


def _hex(value: Any, size: int) -> str | None:
    """An id of `size` bytes as lowercase hex, else None."""
    return value.lower() if isinstance(value, str) and _HEX[size].fullmatch(value) else None


def export_response(decoded: Decoded, media_type: str, signal: Signal = TRACES) -> bytes:
    """The 200 answer: an ExportTraceServiceResponse (ExportLogsServiceResponse), with
    `partial_success` when items were rejected (empty otherwise, as the specification asks)."""
    if media_type == JSON:
        if not decoded.rejected:
            return b"{}"
        first, *rest = signal.rejected.split("_")  # OTLP/JSON's lowerCamelCase
        rejected_key = first + "".join(w.title() for w in rest)
        return orjson.dumps({"partialSuccess": {rejected_key: str(decoded.rejected),
                                                "errorMessage": decoded.error_message()}})
    answer = signal.message("ServiceResponse")()
    if decoded.rejected:
        answer.partial_success.CopyFrom(signal.message("PartialSuccess")(
            **{signal.rejected: decoded.rejected}, error_message=decoded.error_message()))
    return bytes(answer.SerializeToString())


def status(code: int, message: str, media_type: str) -> bytes:
    """An error answer's body: a `google.rpc.Status` (code, message) in the request's media
    type (JSON for a request of another type). Written by hand: field 1 is a varint, field 2
    a length-delimited string; the package defining Status is not needed for two fields."""
    if media_type != PROTOBUF:
        return orjson.dumps({"code": code, "message": message})
    text = message.encode()
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)
