"""`langfuse`: a Langfuse trace export `{trace, observations}`, written as span JSONL.

One CreateSpansBulk line per trace: ids, parents and times as exported, the OTel attributes
and resource attributes from `metadata`, and for GENERATION observations a log_request
(model, provider from gen_ai.provider.name / gen_ai.system / llm.provider, input and output
messages from the framework's shape, `inputUsage`/`outputUsage` tokens, `totalCost`); its
scores as `gen_ai.evaluation.result` events (the scores table), on the observation they score.
"""

import json
from pathlib import Path
from typing import Any

from transforms.importers import FORMATS
from transforms.importers.common import Importer, Lines, json_object, unix_ns
from transforms.normalize.span_fields import ALIASES


def matches(doc: Any) -> bool:
    return isinstance(doc, dict) and (
        "observations" in doc or ("trace" in doc and "observations" in doc.get("trace", {})))


_ROLES = ("system", "user", "assistant", "tool")
_TEXT_TYPES = ("text", "input_text", "output_text")


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        out = []
        for b in content:
            if isinstance(b, dict) and b.get("type") in _TEXT_TYPES and isinstance(
                    b.get("text"), str):
                out.append({"type": "text", "text": b["text"]})
            elif isinstance(b, dict):
                out.append(b)
            elif isinstance(b, str):
                out.append({"type": "text", "text": b})
        return out
    return [] if content is None else [{"type": "text", "text": json.dumps(content)}]


def _chat(value: Any, role: str) -> list[dict[str, Any]]:
    """The messages of a Langfuse observation's input or output, whatever the framework's
    shape: role/content lists, {messages}, chat completions {choices}, responses {output};
    anything else is one `role` message holding its text."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return [{"role": role, "content": _blocks(value)}]
        if isinstance(parsed, (list, dict)):
            return _chat(parsed, role)
        return [{"role": role, "content": _blocks(value)}]
    if isinstance(value, list):
        msgs = [{"role": m["role"], "content": _blocks(m.get("content"))} for m in value
                if isinstance(m, dict) and m.get("role") in _ROLES]
        return msgs or ([{"role": role, "content": _blocks(json.dumps(value))}] if value
                        else [])
    if isinstance(value, dict):
        if isinstance(value.get("messages"), list):
            return _chat(value["messages"], role)
        choices = value.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            return _chat([choices[0].get("message")], role)
        if isinstance(value.get("output"), list):
            return _chat(value["output"], role)
        if value.get("role") in _ROLES:
            return _chat([value], role)
        return [{"role": role, "content": _blocks(json.dumps(value))}]
    return []


def convert(src: Path, doc: Any, agent: str | None, model: str | None
            ) -> tuple[Lines, list[str]]:
    trace = doc.get("trace") or {}
    service = agent or trace.get("name") or src.stem
    spans = []
    for o in doc.get("observations") or []:
        meta = json_object(o.get("metadata"))
        attrs = dict(meta.get("attributes") or {})
        attrs["langfuse.observation.type"] = o.get("type")
        res_attrs = dict(meta.get("resourceAttributes") or {})
        res_attrs.setdefault("service.name", service)
        error = o.get("level") == "ERROR"
        span: dict[str, Any] = {
            "name": o.get("name") or o.get("type") or "observation",
            "context": {"trace_id": o.get("traceId") or trace.get("id"), "span_id": o.get("id"),
                        "trace_state": ""},
            "kind": "SpanKind.CLIENT" if o.get("type") == "GENERATION" else "SpanKind.INTERNAL",
            "parent_id": o.get("parentObservationId"),
            "start_time": unix_ns(o.get("startTime")),
            "end_time": unix_ns(o.get("endTime")) or unix_ns(o.get("startTime")),
            "status": {"status_code": "StatusCode.ERROR" if error else "StatusCode.OK",
                       **({"description": o.get("statusMessage")} if error else {})},
            "attributes": attrs,
            "resource": {"attributes": res_attrs, "schema_url": ""}}
        if o.get("type") == "GENERATION":
            provider = next((attrs[k] for k in ALIASES["provider"]
                             if isinstance(attrs.get(k), str)), "unknown")
            usage = o.get("usageDetails") or {}
            span["log_request"] = {
                "provider": provider, "model": model or o.get("model") or "unknown",
                "input": {"type": "chat", "messages": _chat(o.get("input"), "user")},
                "output": {"type": "chat", "messages": _chat(o.get("output"), "assistant")},
                "input_tokens": o.get("inputUsage", usage.get("input")),
                "output_tokens": o.get("outputUsage", usage.get("output")),
                **({"price": o["totalCost"]} if isinstance(o.get("totalCost"), int | float)
                   else {}),
                **({"status": "ERROR", "error_message": str(o.get("statusMessage"))[:1024]}
                   if error else {})}
        spans.append(span)
    scored = _scores(doc, trace, spans)
    raw = doc.get("scores", trace.get("scores"))
    unplaced = (len(raw) if isinstance(raw, list) else 0) - scored
    notes = ["no run record in a Langfuse export: its observations land as spans (and LLM "
             "calls); the trace is a run of its own unless a response line names it"
             + (f", graded by its {scored} score{'s' if scored != 1 else ''}" if scored
                else "")]
    if unplaced:
        notes.append(f"{unplaced} score{'s' if unplaced != 1 else ''} not imported: "
                     + ("the trace has no observation to carry them" if not spans
                        else "not an object"))
    return [{"spans": spans}], notes


def _scores(doc: dict[str, Any], trace: dict[str, Any], spans: list[dict[str, Any]]) -> int:
    """Langfuse scores (the export's `scores`, else the trace's) as gen_ai.evaluation.result
    events on the observation they score, else on the trace's first top observation: name,
    value, the label (`stringValue`: a categorical or boolean score's text) and the comment
    as the explanation. The number of scores placed."""
    raw = doc.get("scores", trace.get("scores"))
    by_id = {sp["context"]["span_id"]: sp for sp in spans
             if isinstance(sp["context"]["span_id"], str)}
    top = next((sp for sp in spans if not sp.get("parent_id")), spans[0] if spans else None)
    placed = 0
    for sc in raw if isinstance(raw, list) else []:
        if not isinstance(sc, dict):
            continue
        observation = sc.get("observationId")
        span = (by_id.get(observation) if isinstance(observation, str) else None) or top
        if span is None:
            break
        attrs = {"gen_ai.evaluation.name": sc.get("name")}
        if isinstance(sc.get("value"), int | float) and not isinstance(sc.get("value"), bool):
            attrs["gen_ai.evaluation.score.value"] = sc["value"]
        label = sc.get("stringValue")
        if label is None and sc.get("dataType") == "BOOLEAN" and sc.get("value") in (0, 1):
            label = "true" if sc["value"] == 1 else "false"
        if isinstance(label, str):
            attrs["gen_ai.evaluation.score.label"] = label
        if isinstance(sc.get("comment"), str):
            attrs["gen_ai.evaluation.explanation"] = sc["comment"]
        span.setdefault("events", []).append({
            "name": "gen_ai.evaluation.result", "timestamp": unix_ns(sc.get("timestamp"))
            or span.get("end_time"), "attributes": attrs})
        placed += 1
    return placed


def count(lines: Lines) -> int:
    return sum(len(line["spans"]) for line in lines)


IMPORTER = Importer(
    name="langfuse",
    describe=FORMATS["langfuse"],
    matches=matches, convert=convert, kind="spans", count=count)
