"""A finding is counted once: a bad tool call in a run's transcript that the run's LLM calls
repeat in their logged prompts and replies is one finding of the run in the public flags view,
v_flag_summary and v_runs.n_flags, whichever file or ingest each observation came from; the
lake keeps every observation (flags.source says where each was made)."""

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import REPO

NS = 1_000_000_000
T0 = 1_763_683_200 * NS  # 2025-11-21T00:00:00Z
BAD_ARGS = '{"id": 49301, "note": "customer asked for an upd'

SYSTEM = {"role": "system", "content": [{"type": "text", "text": "You handle refunds."}]}
USER = {"role": "user", "content": [{"type": "text", "text": "Where is my refund for #49301?"}]}
THANKS = {"role": "user", "content": [{"type": "text", "text": "Thanks."}]}


def call_message(call_id: str = "call_49301_0", args: str = BAD_ARGS) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "escalate", "arguments": args}}]}


def tool_message(call_id: str = "call_49301_0") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id,
            "content": [{"type": "text", "text": "escalated: ticket 7"}]}


def reply(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def run_line(run_id: str = "refund-1", trace_id: str = "tr-1") -> dict[str, Any]:
    messages = [SYSTEM, USER, call_message(), tool_message(),
                reply("I escalated it: ticket 7."), THANKS, reply("You're welcome.")]
    return {"run_id": run_id, "agent": "refund-agent", "trace_id": trace_id,
            "test_case_id": "refund-status", "started_at": "2025-11-21T00:00:00Z",
            "outcome": {"status": "passed"},
            "response": {"final_response": "You're welcome.", "messages": messages,
                         "metadata": {"model": "gpt-4.1"}}}


def span(span_id: str, trace_id: str, start_ms: int, parent: str | None = "root",
         attrs: dict[str, Any] | None = None,
         log_request: dict[str, Any] | None = None) -> dict[str, Any]:
    s: dict[str, Any] = {
        "name": "chat" if log_request else "invoke_agent",
        "context": {"trace_id": trace_id, "span_id": span_id, "trace_state": ""},
        "kind": "SpanKind.CLIENT", "parent_id": parent,
        "start_time": T0 + start_ms * 1_000_000, "end_time": T0 + (start_ms + 900) * 1_000_000,
        "status": {"status_code": "StatusCode.OK"}, "attributes": attrs or {},
        "resource": {"attributes": {"service.name": "refund-agent"}, "schema_url": ""}}
    if log_request is not None:
        s["log_request"] = log_request
    return s


def llm(inp: list[dict[str, Any]], out: list[dict[str, Any]]) -> dict[str, Any]:
    return {"provider": "openai", "model": "gpt-4.1",
            "input": {"type": "chat", "messages": inp},
            "output": {"type": "chat", "messages": out}}


def trace_spans(trace_id: str = "tr-1", run_id: str | None = None) -> list[dict[str, Any]]:
    """The run's trace: an agent span and three LLM calls; the first replies with the bad call,
    the next two repeat it in their prompts."""
    attrs = {"run_id": run_id} if run_id else {}
    history = [SYSTEM, USER, call_message(), tool_message()]
    p = "" if trace_id == "tr-1" else f"{trace_id}-"  # span ids are unique across traces
    return [
        span(f"{p}root", trace_id, 0, parent=None, attrs=attrs),
        span(f"{p}llm-1", trace_id, 10, parent=f"{p}root", attrs=attrs,
             log_request=llm([SYSTEM, USER], [call_message()])),
        span(f"{p}llm-2", trace_id, 1000, parent=f"{p}root", attrs=attrs, log_request=llm(
            history, [reply("I escalated it: ticket 7.")])),
        span(f"{p}llm-3", trace_id, 2000, parent=f"{p}root", attrs=attrs, log_request=llm(
            [*history, reply("I escalated it: ticket 7."), THANKS],
            [reply("You're welcome.")])),
    ]


def readme_flag_query() -> str:
    """The docs' own example of counting flags per agent, model and code."""
    readme = (REPO / "docs" / "lake.md").read_text()
    found = re.search(r'runlake sql "(select agent, model, code, count\(\*\) from flags[^"]*)"',
                      readme)
    assert found, "docs/lake.md no longer shows its flags-by-code query"
    return found[1]


def test_readme_query_counts_a_repeated_bad_call_once(
        write_lines: Callable[..., Path], run_ingest: Callable[..., Any],
        query: Callable[..., Any]) -> None:
    """One bad escalate call, seen in the transcript and in three LLM calls' logs (linked by
    trace_id): the docs' query says 1, as do v_flag_summary and v_runs; the lake keeps the
    four observations."""
    responses = write_lines([run_line()], name="refund-agent.responses.jsonl")
    spans = write_lines([{"spans": trace_spans()}], name="refund-agent.spans.jsonl")
    run_ingest(responses, spans)

    assert query(readme_flag_query()) == [
        ("refund-agent", "gpt-4.1", "tool_arguments_invalid_json", 1)]
    assert query("SELECT run_id, span_id, source, n_seen, message_index, call_index, tool_name "
                 "FROM flags") == [("refund-1", None, "response", 4, 2, 0, "escalate")]
    assert query("SELECT code, n_findings, n_runs_affected, rate_per_run, n_seen "
                 "FROM v_flag_summary") == [("tool_arguments_invalid_json", 1, 1, 1.0, 4)]
    assert query("SELECT n_flags, n_error_flags FROM v_runs") == [(1, 0)]
    # The lake keeps every observation, each with where it was made and one key.
    observed = query("SELECT source, span_id, finding_key FROM staging.stg_flags ORDER BY 2")
    assert [(s, sp) for s, sp, _ in observed] == [
        ("span", "llm-1"), ("span", "llm-2"), ("span", "llm-3"), ("response", None)]
    assert len({k for *_, k in observed}) == 1
    assert observed[0][2].startswith("tool_call:call_49301_0:")


def test_spans_ingested_apart_still_count_once(
        write_lines: Callable[..., Path], run_ingest: Callable[..., Any],
        query: Callable[..., Any]) -> None:
    """Spans first (linked by a run_id attribute), the run's line in a later ingest: still one
    finding, kept from the run's own transcript."""
    run_ingest(write_lines([{"spans": trace_spans(run_id="refund-1")}],
                           name="refund-agent.spans.jsonl", folder="night-1"))
    assert query("SELECT run_id, source, span_id, n_seen FROM flags") == [
        ("refund-1", "span", "llm-1", 3)]
    run_ingest(write_lines([run_line()], name="refund-agent.responses.jsonl", folder="night-2"))
    assert query(readme_flag_query()) == [
        ("refund-agent", "gpt-4.1", "tool_arguments_invalid_json", 1)]
    assert query("SELECT source, n_seen FROM flags") == [("response", 4)]
    assert query("SELECT n_flags FROM v_runs") == [(1,)]


def test_distinct_calls_stay_distinct(write_lines: Callable[..., Path],
                                      run_ingest: Callable[..., Any],
                                      query: Callable[..., Any]) -> None:
    """A reused call id with other bad arguments is another finding; the same call in two runs
    is one finding per run; a trace no response line names (a run of its own) counts its
    repeated call once."""
    line = run_line()
    line["response"]["messages"][4:4] = [call_message(args='{"id": 1'), tool_message()]
    other = run_line(run_id="refund-2", trace_id="tr-2")
    run_ingest(write_lines([line, other], name="refund-agent.responses.jsonl"),
               write_lines([{"spans": trace_spans() + trace_spans("tr-2")},
                            {"spans": trace_spans("tr-orphan")}],
                           name="refund-agent.spans.jsonl"))
    assert query("SELECT run_id, n_seen, count(*) FROM flags "
                 "WHERE code = 'tool_arguments_invalid_json' GROUP BY ALL ORDER BY ALL") == [
        ("refund-1", 1, 1), ("refund-1", 4, 1), ("refund-2", 4, 1), ("tr-orphan", 3, 1)]
    assert query("SELECT run_id, n_flags FROM v_runs ORDER BY 1") == [
        ("refund-1", 2), ("refund-2", 1), ("tr-orphan", 1)]
    assert query("SELECT agent, n_findings, n_seen FROM v_flag_summary ORDER BY 1") == [
        ("refund-agent", 4, 12)]


def test_plain_string_prompt_message_counts_once(
        write_lines: Callable[..., Path], run_ingest: Callable[..., Any],
        query: Callable[..., Any]) -> None:
    """A system prompt logged as a plain string by every LLM call of a run is one
    chat_content_not_blocks finding of the run (source span), not one per call."""
    system = {"role": "system", "content": "You handle refunds."}
    spans = [span("root", "tr-1", 0, parent=None)] + [
        span(f"llm-{i}", "tr-1", 10 + i * 1000,
             log_request=llm([system, USER], [reply("ok")])) for i in range(3)]
    run_ingest(write_lines([run_line()], name="refund-agent.responses.jsonl"),
               write_lines([{"spans": spans}], name="refund-agent.spans.jsonl"))
    assert query("SELECT code, source, span_id, n_seen FROM flags "
                 "WHERE code = 'chat_content_not_blocks'") == [
        ("chat_content_not_blocks", "span", "llm-0", 3)]


def test_a_call_is_the_same_in_either_shape(write_lines: Callable[..., Path],
                                            run_ingest: Callable[..., Any],
                                            query: Callable[..., Any]) -> None:
    """A nameless call given nested with JSON-text arguments in the transcript and flat with
    an arguments object in an LLM call's prompt is one tool_call_unnamed finding."""
    nested = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_9", "type": "function", "function": {"arguments": '{"id": 9}'}}]}
    flat = {"role": "assistant", "content": [], "tool_calls": [
        {"id": "call_9", "arguments": {"id": 9}}]}
    line = run_line()
    line["response"]["messages"] = [SYSTEM, USER, nested, reply("Done.")]
    spans = [span("root", "tr-1", 0, parent=None),
             span("llm-1", "tr-1", 10, log_request=llm([SYSTEM, USER, flat], [reply("Done.")]))]
    run_ingest(write_lines([line], name="refund-agent.responses.jsonl"),
               write_lines([{"spans": spans}], name="refund-agent.spans.jsonl"))
    assert query("SELECT code, source, n_seen FROM flags") == [
        ("tool_call_unnamed", "response", 2)]
