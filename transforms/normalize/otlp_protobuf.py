"""OTLP protobuf export requests as the OTLP/JSON records the OTLP reader reads.

`runlake serve` keeps a protobuf request as it came (transforms.receiver.decode): a landing line
`{"otlpProtobuf": "<base64 of the request>", "signal": "traces" | "logs"}`. The ingest's workers
decode it here, a field at a time over the parsed message: protobuf's generic
`MessageToDict` spent most of the receiver's time, and the records only need what the OTLP
reader uses. The records are OTLP/JSON as `MessageToDict` writes it, save that attributes are
plain objects (which the reader takes as they are), ids lowercase hex, and fields at their
default value (a zero time, an unspecified kind, an empty id) left out.
"""

import base64
import binascii
from typing import Any

SIGNALS = ("traces", "logs")


class NotARequest(ValueError):
    """The line's request does not decode."""


def value(v: Any) -> Any:
    """An AnyValue as a plain value (bytes as base64, as OTLP/JSON writes them)."""
    which = v.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [value(x) for x in v.array_value.values]
    if which == "kvlist_value":
        return attributes(v.kvlist_value.values)
    if which == "bytes_value":
        return base64.b64encode(v.bytes_value).decode()
    return getattr(v, which)


def attributes(kvs: Any) -> dict[str, Any]:
    return {kv.key: value(kv.value) for kv in kvs}


def _span(sp: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"traceId": sp.trace_id.hex(), "spanId": sp.span_id.hex(),
                           "name": sp.name, "attributes": attributes(sp.attributes)}
    if sp.parent_span_id:
        out["parentSpanId"] = sp.parent_span_id.hex()
    if sp.kind:
        out["kind"] = sp.kind
    if sp.start_time_unix_nano:
        out["startTimeUnixNano"] = sp.start_time_unix_nano
    if sp.end_time_unix_nano:
        out["endTimeUnixNano"] = sp.end_time_unix_nano
    status = sp.status
    out["status"] = {"code": status.code, **({"message": status.message}
                                             if status.message else {})}
    if sp.events:
        out["events"] = [{"name": e.name, "timeUnixNano": e.time_unix_nano,
                          "attributes": attributes(e.attributes)} for e in sp.events]
    return out


def _record(rec: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"attributes": attributes(rec.attributes)}
    if rec.time_unix_nano:
        out["timeUnixNano"] = rec.time_unix_nano
    if rec.observed_time_unix_nano:
        out["observedTimeUnixNano"] = rec.observed_time_unix_nano
    if rec.event_name:
        out["eventName"] = rec.event_name
    # A record outside any span has no ids (or all-zero ones).
    if rec.trace_id.strip(b"\0"):
        out["traceId"] = rec.trace_id.hex()
    if rec.span_id.strip(b"\0"):
        out["spanId"] = rec.span_id.hex()
    if rec.HasField("body"):
        out["body"] = value(rec.body)
    return out


def records(line: dict[str, Any]) -> dict[str, Any]:
    """The OTLP/JSON record of a landing line holding a protobuf request: `{"resourceSpans":
    [...]}` or `{"resourceLogs": [...]}`. NotARequest when it does not decode."""
    from google.protobuf.message import DecodeError

    signal = line.get("signal", "traces")
    if signal not in SIGNALS:
        raise NotARequest(f"signal {str(signal)[:30]!r} is not traces or logs")
    try:
        data = base64.b64decode(line["otlpProtobuf"], validate=True)
    except (binascii.Error, ValueError, TypeError):
        raise NotARequest("otlpProtobuf is not base64") from None
    try:
        if signal == "logs":
            from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
                ExportLogsServiceRequest,
            )

            logs = ExportLogsServiceRequest.FromString(data)
            return {"resourceLogs": [
                {"resource": {"attributes": attributes(rl.resource.attributes)},
                 "scopeLogs": [{"logRecords": [_record(r) for r in sl.log_records]}
                               for sl in rl.scope_logs]}
                for rl in logs.resource_logs]}
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        traces = ExportTraceServiceRequest.FromString(data)
    except DecodeError as e:
        raise NotARequest(f"otlpProtobuf is not an OTLP {signal} export request: {e}") from None
    return {"resourceSpans": [
        {"resource": {"attributes": attributes(rs.resource.attributes)},
         "scopeSpans": [{"spans": [_span(sp) for sp in ss.spans]} for ss in rs.scope_spans]}
        for rs in traces.resource_spans]}
