"""OTLP/JSON span lines (`*.otlp.jsonl`) with the OpenTelemetry GenAI conventions.

A line is a collector file-exporter record `{"resourceSpans": [...]}` or one OTLP span
(`{"traceId", "spanId", ...}`; also the OTel JS ReadableSpan `{"spanContext", "startTime":
[s, ns], ...}`), or a logs export record `{"resourceLogs": [...]}`, whose
`gen_ai.evaluation.result` log records become scores (`OtlpNormalizer.logs`); a line
`{"otlpProtobuf": ...}` is a protobuf request `runlake serve` kept as it came, decoded into one
of those records first (transforms.normalize.otlp_protobuf). Each span is
translated into the spans-bulk Span the span normalizer reads, so it gets the same tables and
flags:

- ids, parent, name, kind, times (Unix nanoseconds), status, events, attributes (OTLP
  `AnyValue` lists flattened to plain values) and resource attributes;
- an LLM call (a log_request) when `gen_ai.operation.name` is chat / text_completion /
  generate_content, or the span is an OpenInference LLM span: provider, model (response model,
  else request model), tokens, `max_tokens`, finish reasons (`length` is a truncation), and the
  messages of `gen_ai.input.messages` / `gen_ai.output.messages` (parts text, tool_call,
  tool_call_response, reasoning), else OpenInference's flattened `llm.input_messages.N.*`.

Older spellings go through one alias table (`span_fields.ALIASES`, which the span reader uses for
cached and reasoning tokens too). OTel's input token count includes cached
tokens; `cached_input_tokens` is the part read from cache, never added to it.

The agent: `gen_ai.agent.name` on an `invoke_agent` span names the agent of the spans beneath
it (the GenAI conventions put it on that span only), so a span without an agent attribute of
its own takes the name of its nearest `invoke_agent` ancestor, found among the spans of its
line and of the file's earlier lines; else its resource's service.name, as for span JSONL.
"""

from datetime import date
from typing import Any

from transforms.normalize import otlp_protobuf
from transforms.normalize.columns import ColumnBuffers
from transforms.normalize.otlp_attributes import (
    as_dict,
    attributes,
    count_value,
    first,
    genai_messages,
    indexed_messages,
    json_value,
    lookup,
    nanos,
)
from transforms.normalize.scores import EVALUATION_EVENT, evaluation
from transforms.normalize.span_fields import AGENT_KEYS, RUN_ID_KEYS, first_str, ns_time
from transforms.normalize.spans import SpanNormalizer
from transforms.read.readers import describe

NOT_OTLP = ("a JSON object that is neither an OTLP export record (resourceSpans) nor an OTLP "
            "span (traceId and spanId)")
KINDS: dict[Any, str] = {
    0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER",
    "SPAN_KIND_UNSPECIFIED": "UNSPECIFIED", "SPAN_KIND_INTERNAL": "INTERNAL",
    "SPAN_KIND_SERVER": "SERVER",
    "SPAN_KIND_CLIENT": "CLIENT", "SPAN_KIND_PRODUCER": "PRODUCER",
    "SPAN_KIND_CONSUMER": "CONSUMER"}
JS_KINDS: dict[Any, str] = {0: "INTERNAL", 1: "SERVER", 2: "CLIENT", 3: "PRODUCER",
                            4: "CONSUMER"}
"""The OTel JS SpanKind enum of a ReadableSpan, which numbers kinds unlike the OTLP proto."""
STATUS = {0: "UNSET", 1: "OK", 2: "ERROR", "STATUS_CODE_UNSET": "UNSET", "STATUS_CODE_OK": "OK",
          "STATUS_CODE_ERROR": "ERROR"}
LLM_OPERATIONS = ("chat", "text_completion", "generate_content")
FRAMEWORK_KINDS = ("openinference.span.kind", "agentops.span.kind", "traceloop.span.kind")
"""Attributes in which instrumentations say what a span is (LLM, AGENT, CHAIN, workflow...)."""
AGENT_MEMORY = 200_000
"""Spans of a file's earlier lines remembered for the agent their descendants inherit."""


def to_span(span: dict[str, Any], resource: dict[str, Any]) -> dict[str, Any]:
    """One OTLP span as a spans-bulk Span (the seed's shape)."""
    ctx = as_dict(span.get("spanContext"))
    attrs = attributes(span.get("attributes"))
    status = as_dict(span.get("status"))
    parent_ctx = as_dict(span.get("parentSpanContext"))
    problems: list[str] = []
    code = lookup(STATUS, status.get("code"))
    if code is None and status.get("code") is not None:
        problems.append(f"status.code {str(status.get('code'))[:30]!r} is not an OTLP status")
    # The JS ReadableSpan numbers kinds its own way; an absent kind is INTERNAL.
    kind = lookup(JS_KINDS if ctx else KINDS, span.get("kind"))
    if kind is None and span.get("kind") is not None:
        problems.append(f"kind {str(span.get('kind'))[:30]!r} is not an OTLP span kind")
    out: dict[str, Any] = {
        "name": span.get("name"),
        "context": {"trace_id": span.get("traceId") or ctx.get("traceId"),
                    "span_id": span.get("spanId") or ctx.get("spanId"), "trace_state": ""},
        "kind": "SpanKind." + (kind or "INTERNAL"),
        "parent_id": span.get("parentSpanId") or parent_ctx.get("spanId") or None,
        "start_time": nanos(span.get("startTimeUnixNano", span.get("startTime"))),
        "end_time": nanos(span.get("endTimeUnixNano", span.get("endTime"))),
        "status": {"status_code": f"StatusCode.{code or 'UNSET'}",
                   **({"description": status["message"]} if status.get("message") else {})},
        "attributes": attrs,
        "events": [{"name": e.get("name"), "timestamp": nanos(e.get("timeUnixNano",
                                                                        e.get("time"))),
                    "attributes": attributes(e.get("attributes"))}
                   for e in (span["events"] if isinstance(span.get("events"), list) else [])
                   if isinstance(e, dict)],
        "resource": {"attributes": resource, "schema_url": ""},
    }
    operation = attrs.get("gen_ai.operation.name")
    # A span without an operation name counts as an LLM call when it carries a model and
    # tokens, except where that usage sums the calls beneath it: spans a framework marks as
    # something else (an agent, a chain, a workflow), and the Vercel AI SDK's outer spans
    # (ai.generateText, ...) above its provider calls (ai.*.doGenerate / doStream).
    vercel_op = attrs.get("ai.operationId")
    marked = [v.lower() for v in (attrs.get(k) for k in FRAMEWORK_KINDS) if isinstance(v, str)]
    is_llm = operation in LLM_OPERATIONS or attrs.get("openinference.span.kind") == "LLM" or (
        operation is None and first(attrs, "input_tokens") is not None
        and first(attrs, "model") is not None
        and all(v == "llm" for v in marked)
        and (not isinstance(vercel_op, str) or vercel_op.endswith((".doGenerate", ".doStream"))))
    if operation == "execute_tool" and not isinstance(attrs.get("gen_ai.tool.name"), str):
        problems.append("an execute_tool span without gen_ai.tool.name")
    if is_llm:
        finish = json_value(first(attrs, "finish_reasons"))
        raw_in, raw_out = first(attrs, "input_messages"), first(attrs, "output_messages")
        inp: Any = genai_messages(raw_in)
        outp: Any = genai_messages(raw_out)
        if first(attrs, "model") is None:
            problems.append("an LLM span without gen_ai.request.model or a response model")
        if inp is None and raw_in is not None:
            inp = raw_in  # not a message list: the span reader flags it with what it is
        elif inp is None:
            inp = indexed_messages(attrs, "input")
        # Current conventions keep the system prompt apart, as a list of parts.
        instructions = json_value(attrs.get("gen_ai.system_instructions"))
        if isinstance(inp, list) and isinstance(instructions, list) and instructions:
            inp = (genai_messages([{"role": "system", "parts": instructions}]) or []) + inp
        if outp is None and raw_out is not None:
            outp = raw_out
        elif outp is None:
            outp = indexed_messages(attrs, "output")
            reply = attrs.get("ai.response.text", attrs.get("ai.response.object"))
            if not outp and isinstance(reply, str):  # Vercel AI SDK: the reply as text or JSON
                outp = [{"role": "assistant", "content": [{"type": "text", "text": reply}]}]
        max_tokens = count_value(first(attrs, "max_tokens"))  # the span reader flags a bad one
        out["log_request"] = {
            "provider": str(first(attrs, "provider") or "unknown"),
            "model": str(first(attrs, "model") or "unknown"),
            "input": {"type": "chat", "messages": inp},
            "output": {"type": "chat", "messages": outp},
            "input_tokens": count_value(first(attrs, "input_tokens")),
            "output_tokens": count_value(first(attrs, "output_tokens")),
            "parameters": {} if max_tokens is None else {"max_tokens": max_tokens},
            "finish_reasons": finish if isinstance(finish, list) else
            ([finish] if isinstance(finish, str) else []),
            **({"status": "ERROR"} if code == "ERROR" else {}),
            **({"error_message": str(status["message"])[:1024]}
               if code == "ERROR" and status.get("message") else {}),
        }
    if problems:
        out["conventions_broken"] = problems
    return out


def _agent_attr(attrs: Any) -> str | None:
    if isinstance(attrs, dict):
        for key in AGENT_KEYS:
            if isinstance(attrs.get(key), str) and attrs[key]:
                return str(attrs[key])
    return None


def inherit_agents(spans: list[Any], earlier: dict[tuple[str | None, str], str]) -> None:
    """Give each translated span without an agent attribute the `gen_ai.agent.name` of its
    nearest `invoke_agent` ancestor (`inherited_agent`, which the span reader uses before
    service.name). Ancestors are looked up among `spans` and then in `earlier`, (trace_id,
    span_id) -> the agent a span passes to its descendants, which this call extends."""
    by_id: dict[tuple[str | None, str], dict[str, Any]] = {}
    for sp in spans:
        ctx = sp.get("context") if isinstance(sp, dict) else None
        if isinstance(ctx, dict) and isinstance(ctx.get("span_id"), str):
            trace = ctx.get("trace_id")  # any JSON value here: the span reader flags it
            by_id.setdefault((trace if isinstance(trace, str) else None, ctx["span_id"]), sp)
    passes: dict[tuple[str | None, str], str | None] = {}

    def passed_down(key: tuple[str | None, str]) -> str | None:
        """The agent the span `key` passes to its descendants (walked up iteratively: traces
        can be deep)."""
        path: list[tuple[str | None, str]] = []
        on_path: set[tuple[str | None, str]] = set()
        name: str | None = None
        while True:
            if key in passes:
                name = passes[key]
                break
            sp = by_id.get(key)
            if sp is None:
                name = earlier.get(key)
                break
            if key in on_path:  # a parent cycle: no agent from it
                break
            path.append(key)
            on_path.add(key)
            attrs = sp.get("attributes")
            if isinstance(attrs, dict) and attrs.get("gen_ai.operation.name") == "invoke_agent":
                name = _agent_attr(attrs)
                if name is not None:
                    break
            parent = sp.get("parent_id")
            if not isinstance(parent, str):
                break
            key = (key[0], parent)
        for k in path:
            passes[k] = name
        return name

    for key, sp in by_id.items():
        parent = sp.get("parent_id")
        if _agent_attr(sp.get("attributes")) is None and isinstance(parent, str):
            inherited = passed_down((key[0], parent))
            if inherited is not None:
                sp["inherited_agent"] = inherited
        passed = passed_down(key)
        if passed is not None:
            if len(earlier) >= AGENT_MEMORY:
                earlier.clear()  # bounded memory: a file of huge traces forgets older lines
            earlier[key] = passed


def _record_day(rec: dict[str, Any], where: str, problems: list[str]) -> date | None:
    """The UTC day of a log record's time, else of its observed time (OTLP: either may be
    unset, 0); a time that is not Unix nanoseconds of a day in range is a problem, and the
    next one is tried."""
    for key in ("timeUnixNano", "observedTimeUnixNano"):
        value = nanos(rec.get(key))
        if value in (None, 0):
            continue
        ts = ns_time(value, f"{where}: {key}", problems)
        if ts is not None:
            return ts.date()
    return None


class OtlpNormalizer:
    """Appends the rows of OTLP/JSON span lines of one source file to column buffers."""

    def __init__(self, source_file: str, fallback_day: date, buffers: ColumnBuffers) -> None:
        self.spans = SpanNormalizer(source_file, fallback_day, buffers)
        self.days = self.spans.days
        self._agents: dict[tuple[str | None, str], str] = {}

    def add(self, line: int, raw: bytes, obj: dict[str, Any]) -> str | None:
        if "otlpProtobuf" in obj:  # a request the receiver kept as protobuf
            try:
                obj = otlp_protobuf.records(obj)
            except otlp_protobuf.NotARequest as e:
                return str(e)
        spans: list[Any] = []
        dropped: list[str] = []
        if isinstance(obj.get("resourceLogs"), list):
            if not isinstance(obj.get("resourceSpans"), list):
                return self.logs(line, obj["resourceLogs"])
            self.logs(line, obj["resourceLogs"])  # a line of both: its logs, then its spans
        if isinstance(obj.get("resourceSpans"), list):
            for i, rs in enumerate(obj["resourceSpans"]):
                where = f"resourceSpans[{i}]"
                if not isinstance(rs, dict):
                    dropped.append(f"{where} is {describe(rs)}")
                    continue
                resource = attributes(as_dict(rs.get("resource")).get("attributes"))
                key = "scopeSpans" if "scopeSpans" in rs else "instrumentationLibrarySpans"
                scopes = rs.get(key)
                if not isinstance(scopes, list):
                    dropped.append(f"{where}.{key} is {describe(scopes)}")
                    continue
                for j, ss in enumerate(scopes):
                    inner = ss.get("spans") if isinstance(ss, dict) else None
                    if not isinstance(inner, list):
                        dropped.append(f"{where}.{key}[{j}]" + (
                            f".spans is {describe(inner)}" if isinstance(ss, dict)
                            else f" is {describe(ss)}"))
                        continue
                    for k, sp in enumerate(inner):
                        if isinstance(sp, dict):
                            spans.append(to_span(sp, resource))
                        else:
                            dropped.append(f"{where}.{key}[{j}].spans[{k}] is {describe(sp)}")
            if not spans:
                return "an OTLP export record without a readable span" + (
                    f" ({'; '.join(dropped[:3])})" if dropped else "")
        elif ("traceId" in obj and "spanId" in obj) or isinstance(obj.get("spanContext"), dict):
            spans = [to_span(obj, attributes(as_dict(obj.get("resource")).get("attributes")))]
        else:
            return NOT_OTLP
        for detail in dropped:
            self.spans.dropped(line, f"{detail}; dropped")
        inherit_agents(spans, self._agents)
        return self.spans.add(line, raw, {"spans": spans})

    def logs(self, line: int, resource_logs: list[Any]) -> str | None:
        """An OTLP logs export record: a score for each gen_ai.evaluation.result log record (on
        the day of its time, else of its observed time); the other records are counted in one
        log_records_skipped finding. None when accepted, else why the line is not one."""
        norm = self.spans
        seen = skipped = 0
        problems: list[str] = []
        for i, rl in enumerate(resource_logs):
            scopes = as_dict(rl).get("scopeLogs")
            if not isinstance(scopes, list):
                problems.append(f"resourceLogs[{i}].scopeLogs is {describe(scopes)}; dropped")
                continue
            for j, sl in enumerate(scopes):
                records = as_dict(sl).get("logRecords")
                if not isinstance(records, list):
                    problems.append(f"resourceLogs[{i}].scopeLogs[{j}].logRecords is "
                                    f"{describe(records)}; dropped")
                    continue
                for k, rec in enumerate(records):
                    seen += 1
                    where = f"log record {i}.{j}.{k}"
                    rec = as_dict(rec)
                    attrs = attributes(rec.get("attributes"))
                    if (rec.get("eventName") or attrs.get("event.name")) != EVALUATION_EVENT:
                        skipped += 1
                        continue
                    day = _record_day(rec, where, problems) or norm.fallback_day
                    found = evaluation(attrs, where, problems)
                    if found is not None:
                        norm.days.add(day)
                        norm.score(found, first_str(attrs, RUN_ID_KEYS), day, "log_record",
                                   first_str(rec, ("traceId",)), first_str(rec, ("spanId",)),
                                   line)
        if seen == 0 and not problems:
            return "an OTLP logs export record without a log record"
        for p in problems[:10]:
            norm._flag("evaluation_malformed", None, norm.fallback_day, line, p[:500], None)
        if skipped:
            norm._flag("log_records_skipped", None, norm.fallback_day, line,
                       f"{skipped} of the line's {seen} log records are not "
                       f"{EVALUATION_EVENT} events; not read", None)
        return None
