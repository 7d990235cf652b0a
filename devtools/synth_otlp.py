"""Synthetic agent runs as OpenTelemetry sends them: devtools.synth's spans in the OTLP/JSON
of the collector's file exporter (the GenAI semantic conventions), and whole nights of an agent
traced with OpenTelemetry only (spans, span events and evaluation log records, no run lines)."""

import contextlib
import json
import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any


def _otlp_value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}  # OTLP/JSON writes 64-bit integers as strings
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [_otlp_value(x) for x in v]}}
    return {"stringValue": v if isinstance(v, str) else json.dumps(v)}


def _kv(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _otlp_value(v)} for k, v in attrs.items() if v is not None]


def _parts(msg: dict[str, Any]) -> list[dict[str, Any]]:
    """A log_request chat message as OTel GenAI `{role, parts}`."""
    parts: list[dict[str, Any]] = []
    if msg.get("role") == "tool":
        text = "".join(b.get("text", "") for b in msg.get("content") or []
                       if isinstance(b, dict) and b.get("type") == "text")
        return [{"type": "tool_call_response", "id": msg.get("tool_call_id"), "response": text}]
    for b in msg.get("content") or []:
        if b.get("type") == "text":
            parts.append({"type": "text", "content": b.get("text", "")})
        elif b.get("type") == "thinking":
            parts.append({"type": "reasoning", "content": b.get("thinking", "")})
        else:
            parts.append(b)
    for c in msg.get("tool_calls") or []:
        args = c["function"]["arguments"]
        with contextlib.suppress(TypeError, ValueError):
            args = json.loads(args)
        parts.append({"type": "tool_call", "id": c.get("id"), "name": c["function"]["name"],
                      "arguments": args})
    return parts


def to_otlp(spans: list[dict[str, Any]]) -> dict[str, Any]:
    """Spans of `make_spans` as the OTel collector's file exporter writes them: one
    `resourceSpans` record, LLM calls in the GenAI conventions (operation chat, provider,
    model, usage, max_tokens, finish reasons, input/output messages as parts, error.type).
    What the conventions have no attribute for (price, prompt name and version, a partial
    response's WARNING status) is left out, as an OTel SDK would."""
    out = []
    for s in spans:
        attrs = dict(s.get("attributes") or {})
        lr = s.get("log_request")
        if lr:
            max_tokens = (lr.get("parameters") or {}).get("max_tokens")
            attrs.update({
                "gen_ai.operation.name": "chat", "gen_ai.provider.name": lr["provider"],
                "gen_ai.request.model": lr["model"],
                "gen_ai.request.max_tokens": max_tokens,
                "gen_ai.request.temperature": (lr.get("parameters") or {}).get("temperature"),
                "gen_ai.usage.input_tokens": lr["input_tokens"],
                "gen_ai.usage.output_tokens": lr["output_tokens"],
                "gen_ai.response.finish_reasons": [
                    "length" if max_tokens and lr["output_tokens"] >= max_tokens else "stop"],
                "gen_ai.input.messages": json.dumps(
                    [{"role": m["role"], "parts": _parts(m)} for m in lr["input"]["messages"]]),
                "gen_ai.output.messages": json.dumps(
                    [{"role": m["role"], "parts": _parts(m)} for m in lr["output"]["messages"]]),
                "error.type": lr.get("error_type") if lr.get("status") == "ERROR" else None})
        status = s["status"]["status_code"].removeprefix("StatusCode.")
        message = (lr or {}).get("error_message") if status == "ERROR" else None
        out.append({
            "traceId": s["context"]["trace_id"], "spanId": s["context"]["span_id"],
            **({"parentSpanId": s["parent_id"]} if s.get("parent_id") else {}),
            "name": f"chat {lr['model']}" if lr else s["name"],
            "kind": {"INTERNAL": 1, "SERVER": 2, "CLIENT": 3}[s["kind"].removeprefix(
                "SpanKind.")],
            "startTimeUnixNano": str(s["start_time"]), "endTimeUnixNano": str(s["end_time"]),
            "attributes": _kv(attrs),
            "status": {"code": {"UNSET": 0, "OK": 1, "ERROR": 2}[status],
                       **({"message": message} if message else {})}})
    resource = spans[0]["resource"]["attributes"] if spans else {}
    return {"resourceSpans": [{"resource": {"attributes": _kv(resource)}, "scopeSpans": [
        {"scope": {"name": "runlake.synth"}, "spans": out}]}]}


@dataclass(frozen=True)
class TraceRun:
    """One run of a trace-only agent: what its evaluations say, and whether its root crashed."""

    case: str
    passed: bool
    crashed: bool = False
    run_id: str | None = None
    """Set as the root span's run_id attribute (its children carry none); else the trace id."""


def trace_only_night(rng: random.Random, agent: str, model: str, day: date,
                     runs_: list[TraceRun]) -> list[dict[str, Any]]:
    """The OTLP/JSON records an agent traced with OpenTelemetry only sends in a night: per run
    a `resourceSpans` record (an invoke_agent root naming the agent and the test case, two chat
    spans with tokens, an execute_tool span); then one `resourceLogs` record of the runs'
    `gen_ai.evaluation.result` log records. Every run is graded on `resolution` (label pass or
    fail): as a log record parented to the root for even positions, as a span event on the
    root for odd ones; and on `helpfulness`, a number without a label (which decides nothing).
    A crashed run's root has status ERROR and no evaluation."""
    records: list[dict[str, Any]] = []
    logs: list[dict[str, Any]] = []
    base = datetime(day.year, day.month, day.day, 2, 0, tzinfo=UTC)
    resource = _kv({"service.name": f"{agent}-service", "telemetry.sdk.language": "python"})
    for i, run in enumerate(runs_):
        trace_id = f"{rng.getrandbits(128):032x}"
        root_id = f"{rng.getrandbits(64):016x}"
        start = int((base + timedelta(minutes=7 * i)).timestamp() * 1e9)
        runtime = rng.randint(3_000, 12_000) * 1_000_000
        end = start + runtime
        verdict = "pass" if run.passed else "fail"
        explanation = ("the ticket was routed to the right queue" if run.passed
                       else "routed the outage ticket to billing")
        evaluation = {"gen_ai.evaluation.name": "resolution",
                      "gen_ai.evaluation.score.value": 1.0 if run.passed else 0.0,
                      "gen_ai.evaluation.score.label": verdict,
                      "gen_ai.evaluation.explanation": explanation}
        helpfulness = {"gen_ai.evaluation.name": "helpfulness",
                       "gen_ai.evaluation.score.value": float(rng.randint(2, 5))}
        events = []
        if not run.crashed and i % 2 == 1:
            events.append({"name": "gen_ai.evaluation.result", "timeUnixNano": str(end),
                           "attributes": _kv(evaluation)})
        root = {
            "traceId": trace_id, "spanId": root_id, "name": f"invoke_agent {agent}", "kind": 1,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
            "attributes": _kv({"gen_ai.operation.name": "invoke_agent",
                               "gen_ai.agent.name": agent, "test_case_id": run.case,
                               "run_id": run.run_id}),
            "events": events,
            "status": ({"code": 2, "message": "TimeoutError: the ticket API did not answer "
                        "in 30 s"} if run.crashed else {"code": 1})}
        spans = [root]
        step = runtime // 4
        for k in range(2):
            inp, out = rng.randint(900, 2400), rng.randint(60, 300)
            spans.append({
                "traceId": trace_id, "spanId": f"{rng.getrandbits(64):016x}",
                "parentSpanId": root_id, "name": f"chat {model}", "kind": 3,
                "startTimeUnixNano": str(start + step * (2 * k)),
                "endTimeUnixNano": str(start + step * (2 * k + 1)),
                "attributes": _kv({"gen_ai.operation.name": "chat",
                                   "gen_ai.provider.name": "openai",
                                   "gen_ai.request.model": model,
                                   "gen_ai.response.id": f"chatcmpl-{trace_id[:12]}-{k}",
                                   "gen_ai.usage.input_tokens": inp,
                                   "gen_ai.usage.output_tokens": out,
                                   "gen_ai.response.finish_reasons": ["stop"]}),
                "status": {"code": 0}})
        spans.append({
            "traceId": trace_id, "spanId": f"{rng.getrandbits(64):016x}",
            "parentSpanId": root_id, "name": "execute_tool lookup_ticket", "kind": 1,
            "startTimeUnixNano": str(start + step), "endTimeUnixNano": str(start + 2 * step),
            "attributes": _kv({"gen_ai.operation.name": "execute_tool",
                               "gen_ai.tool.name": "lookup_ticket"}),
            "status": {"code": 2 if run.crashed else 0}})
        records.append({"resourceSpans": [{"resource": {"attributes": resource}, "scopeSpans": [
            {"scope": {"name": "runlake.synth"}, "spans": spans}]}]})
        if run.crashed:
            continue
        later = str(end + 1_000_000_000)
        graded = [helpfulness] if i % 2 == 1 else [evaluation, helpfulness]
        logs.extend({"timeUnixNano": later, "observedTimeUnixNano": later,
                     "eventName": "gen_ai.evaluation.result", "traceId": trace_id,
                     "spanId": root_id, "severityNumber": 9, "attributes": _kv(e)}
                    for e in graded)
    if logs:
        records.append({"resourceLogs": [{"resource": {"attributes": resource}, "scopeLogs": [
            {"scope": {"name": "runlake.synth.evaluations"}, "logRecords": logs}]}]})
    return records
