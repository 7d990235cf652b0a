"""Span JSONL records (docs/formats.md) -> rows of spans and llm_calls, plus the
LLM calls' prompt and reply in messages, tool_calls and thinking (source = span).

A line is one Span or one CreateSpansBulk body (`{"spans": [...]}`). Times are Unix
nanoseconds; a log_request's request times default to its span's. Flags that one span shows on
its own are raised here; those that need other spans or the run (a missing parent, token and
runtime reconciliation) are derived in the warehouse views.
"""

from datetime import date, datetime, timedelta
from typing import Any

from transforms.contracts.flags import CATALOG
from transforms.normalize.columns import (
    MAX_CALL_PRICE_USD,
    ColumnBuffers,
    valid_price,
)
from transforms.normalize.scores import EVALUATION_EVENT, Score, evaluation
from transforms.normalize.scores import add_row as add_score
from transforms.normalize.span_fields import (
    AGENT_KEYS,
    CACHED_KEYS,
    REASONING_KEYS,
    RUN_ID_KEYS,
    attr_count,
    count,
    first_key,
    first_str,
    iso_time,
    ns_time,
    shown,
    strip_prefix,
)
from transforms.normalize.transcript import (
    DEEP,
    ROLES,
    Pending,
    TranscriptNormalizer,
    message_key,
)
from transforms.read import jsontext
from transforms.read.readers import describe

ERROR_MESSAGE_LIMIT = 1024
LLM_STATUSES = frozenset({"SUCCESS", "WARNING", "ERROR"})
ALLOWED_STATUSES: dict[str, frozenset[str]] = {
    "PROVIDER_RATE_LIMIT": frozenset({"WARNING", "ERROR"}),
    "PROVIDER_QUOTA_LIMIT": frozenset({"WARNING", "ERROR"}),
    "PROVIDER_PARTIAL_RESPONSE": frozenset({"WARNING"}),
    "VARIABLE_MISSING_OR_EMPTY": frozenset({"WARNING"}),
    "PROVIDER_TIMEOUT": frozenset({"ERROR"}),
    "PROVIDER_AUTH_ERROR": frozenset({"ERROR"}),
    "PROVIDER_ERROR": frozenset({"ERROR"}),
    "TEMPLATE_RENDER_ERROR": frozenset({"ERROR"}),
    "UNKNOWN_ERROR": frozenset({"WARNING", "ERROR"}),
}
"""The seed's table of which request statuses each error_type allows."""
SPAN_ROLES = ROLES | {"developer", "function", "placeholder", "completion"}
NOT_A_SPAN = ("a JSON object that is neither a Span (with a context) nor a CreateSpansBulk body "
              "(with a spans list)")


def _copied_later(spans: list[Any]) -> set[int]:
    """The positions of the spans of one line whose trace_id and span_id a later span of the
    line repeats."""
    last: dict[tuple[str, str], int] = {}
    again: set[int] = set()
    for i, span in enumerate(spans):
        ctx = span.get("context") if isinstance(span, dict) else None
        if not isinstance(ctx, dict):
            continue
        trace_id, span_id = ctx.get("trace_id"), ctx.get("span_id")
        if isinstance(trace_id, str) and isinstance(span_id, str):
            if (trace_id, span_id) in last:
                again.add(last[trace_id, span_id])
            last[trace_id, span_id] = i
    return again


class SpanNormalizer:
    """Appends the rows of span records of one source file to column buffers."""

    def __init__(self, source_file: str, fallback_day: date, buffers: ColumnBuffers) -> None:
        self.source_file = source_file
        self.fallback_day = fallback_day
        self.days: set[date] = set()
        self._add_span = buffers.adder("spans", source_file=source_file)
        self._add_call = buffers.adder("llm_calls", source_file=source_file)
        self._add_flag = buffers.adder("flags", source="span", source_file=source_file)
        self._add_score = buffers.adder("scores")
        self._score_line, self._score_index = 0, 0
        self.transcript = TranscriptNormalizer(source_file, buffers, source="span")

    def add(self, line: int, raw: bytes, obj: dict[str, Any]) -> str | None:
        """Normalize one line; None when accepted, else why it is not a span record."""
        spans = obj.get("spans")
        if isinstance(spans, list):
            if not spans:
                return "a CreateSpansBulk body whose spans list is empty"
        elif "context" in obj:
            spans = [obj]
        else:
            return NOT_A_SPAN
        again = _copied_later(spans) if len(spans) > 1 else set()
        for index, span in enumerate(spans):
            self._span(span, index, line, index in again)
        return None

    def dropped(self, line: int, detail: str) -> None:
        """Flag a part of a line that holds no readable span (span_malformed, dropped)."""
        self._flag("span_malformed", None, self.fallback_day, line, detail, None)

    def _flag(self, code: str, run_id: str | None, day: date, line: int, detail: str,
              span_id: str | None, message_index: int | None = None,
              call_index: int | None = None, tool_name: str | None = None,
              finding_key: str | None = None) -> None:
        s = CATALOG[code]
        self._add_flag(entity=s.entity, run_id=run_id, day=day, span_id=span_id,
                       message_index=message_index, call_index=call_index,
                       tool_name=tool_name, code=code, severity=s.severity,
                       category=s.category, detail=detail, finding_key=finding_key,
                       source_line=line)

    def _span(self, span: Any, index: int, line: int, copied_later: bool = False) -> None:
        """One span's rows. A span the same line holds again further on (`copied_later`) is
        a copy that loses to that one (sql/staging/stg_span_copies.sql): its spans
        row is kept, as every copy's is, and its LLM call and findings are the later copy's
        (the rows read from one line cannot be told apart by copy)."""
        day = self.fallback_day
        if not isinstance(span, dict):
            self._flag("span_malformed", None, day, line,
                       f"span {index} of the line is {describe(span)}; dropped", None)
            return
        ctx = span.get("context")
        ctx = ctx if isinstance(ctx, dict) else {}
        trace_id, span_id = first_str(ctx, ("trace_id",)), first_str(ctx, ("span_id",))
        if trace_id is None or span_id is None:
            self._flag("span_malformed", None, day, line,
                       f"span {index} of the line has no context.trace_id or context.span_id; "
                       "dropped", None)
            return
        # What the OTLP reader found against the OTel conventions while translating the span.
        broken = span.get("conventions_broken")
        bad = [str(b)[:200] for b in broken[:10]] if isinstance(broken, list) else []
        start_ns, end_ns = span.get("start_time"), span.get("end_time")
        start = ns_time(start_ns, "start_time", bad)
        end = ns_time(end_ns, "end_time", bad)
        if start is not None:
            day = start.date()
        self.days.add(day)
        attrs = span.get("attributes")
        if not isinstance(attrs, dict):
            if attrs is not None:
                bad.append(f"attributes is {describe(attrs)}")
            attrs = {}
        resource = span.get("resource")
        res_attrs = resource.get("attributes") if isinstance(resource, dict) else None
        res_attrs = res_attrs if isinstance(res_attrs, dict) else {}
        service = first_str(res_attrs, ("service.name",))
        # An OTLP span may inherit its agent from an invoke_agent ancestor (otlp.py).
        inherited = span.get("inherited_agent")
        agent = (first_str(attrs, AGENT_KEYS) or (inherited if isinstance(inherited, str) else None)
                 or service)
        run_id = first_str(attrs, RUN_ID_KEYS)
        raw_status = span.get("status")
        status: dict[str, Any] = raw_status if isinstance(raw_status, dict) else {}
        duration = None
        if start is not None and end is not None:
            assert isinstance(start_ns, int) and isinstance(end_ns, int)
            duration = (end_ns - start_ns) / 1e6
            if end_ns < start_ns and not copied_later:
                self._flag("span_end_before_start", run_id, day, line,
                           f"span {span_id} ends {-duration:.3f} ms before it starts", span_id)
        events = span.get("events")
        lr = span.get("log_request")
        if lr is not None and not isinstance(lr, dict):
            bad.append(f"log_request is {describe(lr)}")
            lr = None
        attrs_text, attrs_deep = jsontext.text(attrs)
        res_text, res_deep = jsontext.text(res_attrs)
        for what, too_deep in (("attributes", attrs_deep), ("resource attributes", res_deep)):
            if too_deep:
                bad.append(f"{what} nested more than {jsontext.MAX_DEPTH} levels deep ({DEEP})")
        if bad and not copied_later:
            self._flag("span_malformed", run_id, day, line,
                       f"span {span_id}: " + "; ".join(bad), span_id)
        description = status.get("description")
        self._add_span(
            trace_id=trace_id, span_id=span_id, parent_id=first_str(span, ("parent_id",)),
            run_id=run_id, day=day, agent=agent,
            name=span.get("name") if isinstance(span.get("name"), str) else None,
            kind=strip_prefix(span.get("kind"), "SpanKind."), start_time=start, end_time=end,
            duration_ms=duration,
            status_code=strip_prefix(status.get("status_code"), "StatusCode."),
            status_description=description if isinstance(description, str) else None,
            service_name=service, attributes=attrs_text, resource_attributes=res_text,
            n_events=len(events) if isinstance(events, list) else 0,
            has_log_request=lr is not None,
            operation=first_str(attrs, ("gen_ai.operation.name",)),
            tool_name=first_str(attrs, ("gen_ai.tool.name",)),
            tool_call_id=first_str(attrs, ("gen_ai.tool.call.id",)), span_index=index,
            source_line=line)
        if lr is not None and not copied_later:
            self._llm_call(lr, span_id, trace_id, run_id, day, agent, start, end, attrs, line)
        if isinstance(events, list) and events and not copied_later:
            self._evaluations(events, trace_id, span_id, run_id, day, line)

    def _evaluations(self, events: list[Any], trace_id: str, span_id: str, run_id: str | None,
                     day: date, line: int) -> None:
        """The scores of a span's gen_ai.evaluation.result events (on the span's day: a score
        stays with its span in every window of days)."""
        problems: list[str] = []
        for i, event in enumerate(events):
            if not isinstance(event, dict) or event.get("name") != EVALUATION_EVENT:
                continue
            attrs = event.get("attributes")
            found = evaluation(attrs if isinstance(attrs, dict) else {},
                               f"span {span_id}'s event {i}", problems)
            if found is not None:
                self.score(found, run_id, day, "span_event", trace_id, span_id, line)
        for p in problems[:10]:
            self._flag("evaluation_malformed", run_id, day, line, p[:500], span_id)

    def score(self, found: Score, run_id: str | None, day: date, source: str,
              trace_id: str | None, span_id: str | None, line: int) -> None:
        """A scores row of this file's line `line` (numbered in the order of the line)."""
        if line != self._score_line:
            self._score_line, self._score_index = line, 0
        add_score(self._add_score, found, run_id, day, source, trace_id, span_id,
                  self._score_index, self.source_file, line)
        self._score_index += 1

    def _llm_call(self, lr: dict[str, Any], span_id: str, trace_id: str, run_id: str | None,
                  day: date, agent: str | None, start: datetime | None, end: datetime | None,
                  attrs: dict[str, Any], line: int) -> None:
        bad: list[str] = []
        flags: Pending = []
        in_tok, out_tok = count(lr.get("input_tokens")), count(lr.get("output_tokens"))
        for key, value in (("input_tokens", in_tok), ("output_tokens", out_tok),
                           ("prompt_version_number", count(lr.get("prompt_version_number")))):
            if value is None and lr.get(key) is not None:
                bad.append(f"log_request.{key} is {shown(lr[key])}")
        cached_key, reasoning_key = first_key(attrs, CACHED_KEYS), first_key(attrs,
                                                                               REASONING_KEYS)
        for attr in (cached_key, reasoning_key):
            if attr is not None and attrs[attr] is not None and attr_count(attrs[attr]) is None:
                bad.append(f"attribute {attr} is {shown(attrs[attr])}, not a token count")
        status = lr.get("status", "SUCCESS")
        if not isinstance(status, str) or status not in LLM_STATUSES:
            bad.append(f"log_request.status {str(status)[:30]!r} is not SUCCESS, WARNING or "
                       "ERROR")
            status = None
        error_type = lr.get("error_type") if isinstance(lr.get("error_type"), str) else None
        error_message = lr.get("error_message")
        error_message = error_message if isinstance(error_message, str) else None
        req_start = iso_time(lr.get("request_start_time"), "request_start_time", bad) or start
        req_end = iso_time(lr.get("request_end_time"), "request_end_time", bad) or end
        latency = ((req_end - req_start) / timedelta(milliseconds=1)
                   if req_start is not None and req_end is not None else None)
        raw_params = lr.get("parameters")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        max_tokens = count(params.get("max_tokens")) or count(params.get("max_output_tokens"))
        for key in ("max_tokens", "max_output_tokens"):
            if params.get(key) is not None and count(params[key]) is None:
                bad.append(f"log_request.parameters.{key} {str(params[key])[:30]!r} is not "
                           "a token count")
        price = valid_price(lr.get("price"))
        if price is None and lr.get("price") is not None:
            bad.append(f"log_request.price {jsontext.dumps(lr['price'])[:40]} is not a price "
                       f"(a number from 0 to {MAX_CALL_PRICE_USD:,.0f} USD); left out")

        if error_type == "PROVIDER_PARTIAL_RESPONSE":
            flags.append(("llm_partial_response",
                          f"status {status}, error_type PROVIDER_PARTIAL_RESPONSE", None, None))
        finish = lr.get("finish_reasons")
        cut = [f for f in finish if f in ("length", "max_tokens", "MAX_TOKENS")] \
            if isinstance(finish, list) else []
        if max_tokens and out_tok is not None and out_tok >= max_tokens:
            flags.append(("llm_output_truncated",
                          f"output_tokens {out_tok} reached max_tokens {max_tokens}", None, None))
        elif cut:
            # OTel GenAI: a finish reason of `length` means the model stopped at its limit.
            flags.append(("llm_output_truncated", f"finish reason {cut[0]!r}", None, None))
        if error_message is not None and len(error_message) >= ERROR_MESSAGE_LIMIT:
            flags.append(("llm_error_message_truncated",
                          f"error_message has {len(error_message)} characters, the "
                          f"{ERROR_MESSAGE_LIMIT} limit", None, None))
        if error_type is not None:
            allowed = ALLOWED_STATUSES.get(error_type)
            if allowed is None:
                flags.append(("llm_status_error_type_mismatch",
                              f"error_type {error_type[:40]!r} is not a known error type",
                              None, None))
            elif status not in allowed:
                flags.append(("llm_status_error_type_mismatch",
                              f"error_type {error_type} allows status "
                              f"{' or '.join(sorted(allowed))}, not {status}", None, None))

        n_in = self._prompt(lr.get("input"), "input", 0, span_id, run_id, day, line, flags, bad)
        n_out = self._prompt(lr.get("output"), "output", n_in, span_id, run_id, day, line,
                             flags, bad)
        if bad:
            flags.append(("span_malformed", "; ".join(bad), None, None))
        for code, detail, mi, ci, *tool in flags:
            self._flag(code, run_id, day, line, f"span {span_id}: {detail}", span_id, mi, ci,
                       *tool)
        self._add_call(
            span_id=span_id, trace_id=trace_id, run_id=run_id, day=day, agent=agent,
            provider=lr.get("provider") if isinstance(lr.get("provider"), str) else None,
            model=lr.get("model") if isinstance(lr.get("model"), str) else None,
            input_tokens=in_tok, output_tokens=out_tok,
            cached_input_tokens=attr_count(attrs[cached_key]) if cached_key else None,
            reasoning_tokens=attr_count(attrs[reasoning_key]) if reasoning_key else None,
            price=price, status=status, error_type=error_type, error_message=error_message,
            error_message_chars=len(error_message) if error_message is not None else None,
            request_start_time=req_start, request_end_time=req_end, latency_ms=latency,
            max_tokens=max_tokens,
            prompt_name=lr.get("prompt_name") if isinstance(lr.get("prompt_name"), str) else None,
            prompt_version_number=count(lr.get("prompt_version_number")),
            n_input_messages=n_in, n_output_messages=n_out,
            source_line=line)

    def _prompt(self, prompt: Any, direction: str, first: int, span_id: str,
                run_id: str | None, day: date, line: int, flags: Pending, bad: list[str]) -> int:
        """Append a chat or completion prompt's messages; returns how many."""
        if prompt is None:
            return 0
        if not isinstance(prompt, dict):
            bad.append(f"log_request.{direction} is {describe(prompt)}")
            return 0
        if prompt.get("type") == "completion" or "content" in prompt and "messages" not in prompt:
            msgs: Any = [{"role": "completion", "content": prompt.get("content")}]
        else:
            msgs = prompt.get("messages")
        if not isinstance(msgs, list):
            bad.append(f"log_request.{direction}.messages is {describe(msgs)}")
            return 0
        for i, m in enumerate(msgs, first):
            if isinstance(m, dict) and isinstance(m.get("content"), str):
                flags.append(("chat_content_not_blocks",
                              f"{direction} message {i} ({m.get('role')}) has a plain string "
                              "content", i, None, None, message_key(m)))
        found: Pending = []
        self.transcript.span_id = span_id
        n, *_ = self.transcript.messages(msgs, run_id, day, line, found, roles=SPAN_ROLES,
                                         direction=direction, first_index=first,
                                         link_results=False)
        for code, detail, *where in found:
            if code == "messages_malformed":
                bad.append(f"{direction}: {detail}")
            elif code != "messages_missing":  # findings about single calls keep their codes
                flags.append((code, f"{direction}: {detail}", *where))
        return n
