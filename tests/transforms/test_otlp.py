"""OTLP/JSON span lines with the GenAI conventions: the collector's resourceSpans records and
single spans (the OTel JS ReadableSpan too), OpenInference's flattened attributes through the
same mapping, finish reasons, older spellings, and lines that are not OTLP."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import REAL_FIXTURES, MemoryViews
from transforms.ingest import ingest

OI = REAL_FIXTURES / "openinference"


def kv(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    """Attributes as OTLP KeyValue lists, the way the collector writes them."""
    def value(v: Any) -> dict[str, Any]:
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        if isinstance(v, float):
            return {"doubleValue": v}
        if isinstance(v, list):
            return {"arrayValue": {"values": [value(x) for x in v]}}
        return {"stringValue": v}
    return [{"key": k, "value": value(v)} for k, v in attrs.items()]


def span(span_id: str, attrs: dict[str, Any], parent: str | None = None, trace: str = "a" * 32,
         kind: Any = 3) -> dict[str, Any]:
    s = {"traceId": trace, "spanId": span_id, "name": attrs.get("gen_ai.operation.name", "op"),
         "kind": kind, "startTimeUnixNano": "1763683200000000000",
         "endTimeUnixNano": "1763683201500000000", "attributes": kv(attrs),
         "status": {"code": 1}}
    if parent:
        s["parentSpanId"] = parent
    return s


def record(*spans: dict[str, Any], service: str = "weather-agent") -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {"attributes": kv({"service.name": service})},
                               "scopeSpans": [{"scope": {"name": "test"}, "spans": list(spans)}]}]}


def test_genai_and_openinference_spellings_agree(write_lines: Callable[..., Path],
                                                 views: MemoryViews) -> None:
    """The same chat call in current GenAI attributes and in OpenInference's flattened form
    gives the same LLM call and messages; the execute_tool span keeps its tool attributes."""
    chat = json.loads((OI / "otel_genai_client_span_tool_calls.json").read_text())
    tool = json.loads((OI / "otel_genai_tool_execution_span.json").read_text())
    oi = json.loads((OI / "openinference_client_span_tool_calls.json").read_text())
    line = record(span("1" * 16, chat), span("2" * 16, tool, parent="1" * 16, kind=1),
                  span("3" * 16, oi, trace="b" * 32))
    views.load(write_lines([line], name="agent.otlp.jsonl"))
    calls = views("SELECT span_id, provider, model, input_tokens, output_tokens, "
                  "n_input_messages, n_output_messages FROM llm_calls ORDER BY 1")
    assert calls == [("1" * 16, "openai", "gpt-4-0613", 97, 52, 3, 1),
                     ("3" * 16, "openai", "gpt-4-0613", 97, 52, 3, 1)]
    by_span = {}
    for sid, role, text, n_calls, call_id in views(
            "SELECT span_id, role, text, n_tool_calls, tool_call_id FROM messages "
            "ORDER BY span_id, message_index"):
        by_span.setdefault(sid, []).append((role, text, n_calls, call_id))
    assert by_span["1" * 16] == by_span["3" * 16]
    assert by_span["1" * 16][2] == ("tool", "rainy, 57°F", 0, "1234")
    assert views("SELECT tool_name, arguments FROM tool_calls") == [
        ("get_weather", '{"location":"Paris"}')] * 2
    assert views("SELECT kind, agent, parent_id FROM spans WHERE span_id = ?", ["2" * 16]) == [
        ("INTERNAL", "weather-agent", "1" * 16)]
    # The tool's execution joins the call the model made: same call id, its own duration.
    assert views("SELECT s.operation, s.tool_name, c.tool_name, s.duration_ms FROM spans s "
                 "JOIN tool_calls c ON c.call_id = s.tool_call_id AND c.span_id = ?",
                 ["1" * 16]) == [("execute_tool", "get_weather", "get_weather", 1500.0)]
    attrs = json.loads(views("SELECT attributes FROM spans WHERE span_id = ?", ["2" * 16])[0][0])
    assert attrs["gen_ai.tool.name"] == "get_weather" and attrs["gen_ai.tool.call.id"] == "1234"


def test_finish_reason_length_and_old_spellings(write_lines: Callable[..., Path], home: Path,
                                                query: Callable[..., Any]) -> None:
    cut = {"gen_ai.operation.name": "chat", "gen_ai.system": "anthropic",
           "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.usage.prompt_tokens": 40,
           "gen_ai.usage.completion_tokens": 512, "gen_ai.response.finish_reasons": ["length"]}
    fine = {**cut, "gen_ai.response.finish_reasons": ["stop"]}
    lines = [record(span("4" * 16, cut)), record(span("5" * 16, fine)),
             {"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "no ids"}]}]}]},
             {"hello": "world"}]
    report = ingest([write_lines(lines, name="old.otlp.jsonl")], home)
    assert [(f.lines, f.accepted, f.quarantined) for f in report.files] == [(4, 3, 1)]
    assert query("SELECT span_id, provider, input_tokens, output_tokens FROM llm_calls "
                 "ORDER BY 1") == [("4" * 16, "anthropic", 40, 512),
                                   ("5" * 16, "anthropic", 40, 512)]
    assert sorted(query("SELECT code, span_id FROM flags")) == [
        ("llm_output_truncated", "4" * 16), ("span_malformed", None)]
    assert query("SELECT truncated_by FROM v_truncations") == [("model",)]
    assert query("SELECT error_code FROM quarantine") == [("unrecognized_record",)]


def test_spans_breaking_the_conventions_are_flagged(write_lines: Callable[..., Path],
                                                    views: MemoryViews) -> None:
    """Nothing wrong is dropped silently: each break of the conventions is named in a
    span_malformed flag (the span's, and its LLM call's), and the span and its call are
    kept."""
    chat = span("6" * 16, {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": "many",
                           "gen_ai.usage.output_tokens": 7, "gen_ai.input.messages": "not json",
                           "gen_ai.request.max_tokens": "lots"}, kind=9)
    chat["startTimeUnixNano"] = "2025-11-21T00:00:00Z"
    chat["status"] = {"code": "DONE"}
    tool = span("7" * 16, {"gen_ai.operation.name": "execute_tool"})
    near = span("8" * 16, {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                           "gen_ai.usage.input_tokens": "12", "gen_ai.input.messages": "[]"})
    views.load(write_lines([record(chat, tool, near)], name="bad.otlp.jsonl"))
    assert views("SELECT count(*) FROM spans") == [(3,)]
    assert views("SELECT span_id, input_tokens, output_tokens FROM llm_calls ORDER BY 1") == [
        ("6" * 16, None, 7), ("8" * 16, 12, None)]
    flags = dict(views("SELECT span_id, string_agg(detail, '; ') FROM flags "
                       "WHERE code = 'span_malformed' GROUP BY 1"))
    assert sorted(flags) == ["6" * 16, "7" * 16]
    for part in ("status.code 'DONE' is not an OTLP status", "kind '9' is not an OTLP span kind",
                 "without gen_ai.request.model", "start_time is a string, not Unix nanoseconds",
                 'log_request.input_tokens is "many"', "input.messages is a string",
                 "parameters.max_tokens 'lots' is not a token count"):
        assert part in flags["6" * 16], (part, flags["6" * 16])
    assert "execute_tool span without gen_ai.tool.name" in flags["7" * 16]


def test_js_readable_spans_with_hrtime(tmp_path: Path, views: MemoryViews) -> None:
    """The Vercel AI SDK capture: ReadableSpans, one per line, [s, ns] times, no parents."""
    spans = json.loads((OI / "vercel-ai-sdk-v6_all-spans.json").read_text())
    path = tmp_path / "landing" / "vercel.otlp.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(s) + "\n" for s in spans))
    views.load(path)
    assert views("SELECT count(*), count(parent_id) FROM spans") == [(len(spans), 0)]
    with_tokens = [s for s in spans if "gen_ai.usage.input_tokens" in s["attributes"]]
    assert views("SELECT count(*), sum(input_tokens), sum(output_tokens) FROM llm_calls") == [(
        len(with_tokens), sum(s["attributes"]["gen_ai.usage.input_tokens"] for s in with_tokens),
        sum(s["attributes"]["gen_ai.usage.output_tokens"] for s in with_tokens))]
    first = spans[0]
    assert views("SELECT duration_ms FROM spans WHERE span_id = ?",
                 [first["spanContext"]["spanId"]])[0][0] == ((
                     first["endTime"][0] - first["startTime"][0]) * 1e9 + first["endTime"][1]
                     - first["startTime"][1]) / 1e6


def test_the_same_spans_as_seed_spans_and_as_otlp_give_the_same_rows(
        tmp_path: Path, views: MemoryViews) -> None:
    """Synthetic runs' spans written twice, as spans-bulk lines and as OTLP export records in
    the GenAI conventions: the span, LLM call, message, tool call and thinking rows agree on
    everything the conventions carry (not price, prompt name or a partial response's status)."""
    import random
    from datetime import date

    from devtools.synth import make_spans, runs
    from devtools.synth_otlp import to_otlp

    rng = random.Random(3)
    bulk, otlp = [], []
    for _, _, line in runs(seed=5, days=[date(2026, 11, 20)], per_agent_per_day=6):
        spans = make_spans(rng, line)
        for s in spans:
            lr = s.get("log_request")
            if lr and lr.get("status") == "WARNING":  # no OTel counterpart
                del lr["status"], lr["error_type"]
        bulk.append({"spans": spans})
        otlp.append(to_otlp(spans))
    tables = {
        "spans": "SELECT trace_id, span_id, parent_id, run_id, agent, kind, start_time, "
                 "end_time, duration_ms, status_code FROM spans",
        "llm_calls": "SELECT span_id, run_id, agent, provider, model, input_tokens, "
                     "output_tokens, status, error_message, latency_ms, max_tokens, "
                     "n_input_messages, n_output_messages FROM llm_calls",
        "messages": "SELECT span_id, direction, message_index, role, text, n_tool_calls, "
                    "tool_call_id, n_thinking FROM messages",
        "tool_calls": "SELECT span_id, message_index, call_index, call_id, tool_name, "
                      "arguments::JSON::VARCHAR FROM tool_calls",
        "thinking": "SELECT span_id, message_index, text FROM thinking",
        "flags": "SELECT span_id, code FROM flags",
    }
    got = []
    for name, lines in (("a.spans.jsonl", bulk), ("a.otlp.jsonl", otlp)):
        path = tmp_path / name.split(".")[1] / name
        path.parent.mkdir()
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))
        views.load(path)
        got.append({t: sorted(map(repr, views(sql))) for t, sql in tables.items()})
    assert got[0]["llm_calls"] and got[0]["tool_calls"] and got[0]["thinking"]
    for t in tables:
        assert got[0][t] == got[1][t], t


def test_what_the_review_found(write_lines: Callable[..., Path], home: Path,
                               query: Callable[..., Any]) -> None:
    """Counts beyond 64 bits or in other digits are flagged, never a crash; parts of an export
    record that hold no span are flagged; a span a framework marks as an agent is not an LLM
    call though it carries a model and tokens; current and OpenLLMetry spellings are read."""
    huge = span("1" * 16, {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                           "gen_ai.usage.input_tokens": "99999999999999999999999",
                           "gen_ai.usage.output_tokens": "²", "big": 2**63})
    huge["attributes"][-1]["value"] = {"intValue": str(2**64)}  # kept as given
    agent = span("2" * 16, {"openinference.span.kind": "AGENT", "llm.model_name": "m",
                            "llm.token_count.prompt": 100})
    llm = span("3" * 16, {"openinference.span.kind": "LLM", "llm.model_name": "m",
                          "llm.token_count.prompt": 100}, parent="2" * 16)
    current = span("4" * 16, {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
        "gen_ai.usage.input_tokens": 50, "gen_ai.usage.cache_read.input_tokens": "20",
        "gen_ai.usage.reasoning.output_tokens": 7, "gen_ai.request.max_tokens": 256.0,
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "Be brief."}]),
        "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Hi",
        "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "Hello",
        "gen_ai.completion.0.tool_calls.0.id": "c1",
        "gen_ai.completion.0.tool_calls.0.name": "lookup",
        "gen_ai.completion.0.tool_calls.0.arguments": '{"q": 1}'}, kind="SPAN_KIND_UNSPECIFIED")
    line = record(huge, agent, llm, current)
    line["resourceSpans"] += [7, {"scopeSpans": {"spans": []}},
                              {"scopeSpans": [[1], {"spans": 5}, {"spans": ["x"]}]}]
    report = ingest([write_lines([line], name="r.otlp.jsonl")], home)
    assert [(f.accepted, f.quarantined) for f in report.files] == [(1, 0)]
    assert query("SELECT span_id, input_tokens, output_tokens, cached_input_tokens, "
                 "reasoning_tokens, max_tokens FROM llm_calls ORDER BY 1") == [
        ("1" * 16, None, None, None, None, None), ("3" * 16, 100, None, None, None, None),
        ("4" * 16, 50, None, 20, 7, 256)]
    attrs = json.loads(query("SELECT attributes FROM spans WHERE span_id = ?", ["1" * 16])[0][0])
    assert attrs["big"] == str(2**64)
    assert query("SELECT role, text, direction FROM messages WHERE span_id = ? "
                 "ORDER BY message_index", ["4" * 16]) == [
        ("system", "Be brief.", "input"), ("user", "Hi", "input"),
        ("assistant", "Hello", "output")]
    assert query("SELECT tool_name, arguments FROM tool_calls") == [("lookup", '{"q":1}')]
    assert query("SELECT kind FROM spans WHERE span_id = ?", ["4" * 16]) == [("UNSPECIFIED",)]
    details = [d for (d,) in query("SELECT detail FROM flags WHERE code = 'span_malformed' "
                                   "ORDER BY detail")]
    assert any('input_tokens is "99999999999999999999999"' in d and 'output_tokens is "²"' in d
               for d in details)
    for part in ("resourceSpans[1] is a number", "resourceSpans[2].scopeSpans is an object",
                 "resourceSpans[3].scopeSpans[0] is an array",
                 "resourceSpans[3].scopeSpans[1].spans is a number",
                 "resourceSpans[3].scopeSpans[2].spans[0] is a string"):
        assert any(d.startswith(part) for d in details), (part, details)


def test_agent_name_of_invoke_agent_is_inherited(write_lines: Callable[..., Path], home: Path,
                                                 query: Callable[..., Any]) -> None:
    """gen_ai.agent.name on an invoke_agent span names the agent of the spans beneath it (a
    child listed before its parent, a child in a later line of the file, a grandchild); a
    sub-agent's invoke_agent names its own subtree; a span with its own agent attribute keeps
    it; a trace with no invoke_agent span keeps service.name. So llm_calls.agent is the run's."""
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4.1",
            "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 2}
    agent = span("a" * 16, {"gen_ai.operation.name": "invoke_agent",
                            "gen_ai.agent.name": "weather-agent"}, kind=1)
    line1 = record(
        span("c" * 16, chat, parent="a" * 16),  # before its parent in the line
        agent,
        span("d" * 16, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"},
             parent="c" * 16, kind=1),
        span("e" * 16, {"gen_ai.operation.name": "invoke_agent",
                        "gen_ai.agent.name": "forecaster"}, parent="a" * 16, kind=1),
        span("f" * 16, chat, parent="e" * 16),
        span("9" * 16, {**chat, "gen_ai.agent.name": "judge"}, parent="a" * 16),
        span("8" * 16, chat, trace="b" * 32),
        service="weather-service")
    line2 = record(span("7" * 16, chat, parent="a" * 16), service="weather-service")
    run = {"run_id": "w1", "agent": "weather-agent", "trace_id": "a" * 32,
           "started_at": "2025-11-21T00:00:00Z", "response": {"final_response": "sunny"}}
    ingest([write_lines([line1, line2], name="weather.otlp.jsonl"),
            write_lines([run], name="weather.responses.jsonl")], home)
    assert query("SELECT span_id, agent FROM spans ORDER BY 1") == [
        ("7" * 16, "weather-agent"), ("8" * 16, "weather-service"), ("9" * 16, "judge"),
        ("a" * 16, "weather-agent"), ("c" * 16, "weather-agent"), ("d" * 16, "weather-agent"),
        ("e" * 16, "forecaster"), ("f" * 16, "forecaster")]
    assert query("SELECT span_id, agent FROM llm_calls ORDER BY 1") == [
        ("7" * 16, "weather-agent"), ("8" * 16, "weather-service"), ("9" * 16, "judge"),
        ("c" * 16, "weather-agent"), ("f" * 16, "forecaster")]
    # The run's LLM calls under its own agent span carry the run's agent.
    assert query("SELECT DISTINCT l.agent = r.agent FROM llm_calls l JOIN runs r USING (run_id) "
                 "WHERE l.span_id IN ('" + "c" * 16 + "', '" + "7" * 16 + "')") == [(True,)]
    # The stored attributes stay as the span gave them.
    assert query("SELECT attributes::JSON->>'gen_ai.agent.name' FROM spans "
                 "WHERE span_id = '" + "c" * 16 + "'") == [(None,)]
