"""Span JSONL: rows of spans and llm_calls, the LLM calls' messages, links to runs, and the
reconciliation of a run's own totals with its spans."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import MemoryViews

NS = 1_000_000_000
T0 = 1_763_683_200 * NS  # 2025-11-21T00:00:00Z


def span(span_id: str, trace_id: str = "t1", parent: str | None = None, start_ms: int = 0,
         end_ms: int = 1000, attrs: dict[str, Any] | None = None,
         log_request: dict[str, Any] | None = None) -> dict[str, Any]:
    s: dict[str, Any] = {
        "name": f"op-{span_id}", "context": {"trace_id": trace_id, "span_id": span_id,
                                             "trace_state": ""},
        "kind": "SpanKind.INTERNAL", "parent_id": parent,
        "start_time": T0 + start_ms * 1_000_000, "end_time": T0 + end_ms * 1_000_000,
        "status": {"status_code": "StatusCode.OK", "description": None},
        "attributes": attrs or {}, "events": [{"name": "e"}],
        "resource": {"attributes": {"service.name": "svc"}, "schema_url": ""}}
    if log_request is not None:
        s["log_request"] = log_request
    return s


def llm(model: str, in_tok: int | None, out_tok: int | None, **extra: Any) -> dict[str, Any]:
    lr: dict[str, Any] = {
        "provider": "openai", "model": model,
        "input": {"type": "chat", "messages": [
            {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
            {"role": "user", "content": [{"type": "text", "text": "Refund #4521"}]}]},
        "output": {"type": "chat", "messages": [{
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "look it up"},
                        {"type": "text", "text": "Checking."}],
            "tool_calls": [{"id": "c1", "type": "function",
                            "function": {"name": "get_order", "arguments": "{\"id\": 4521}"}}]}]},
        "price": 0.01, **extra}
    if in_tok is not None:
        lr["input_tokens"] = in_tok
    if out_tok is not None:
        lr["output_tokens"] = out_tok
    return lr


def run(run_id: str, trace_id: str, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"final_response": "done",
                            "messages": [{"role": "assistant", "content": "done"}]}
    if metadata is not None:
        body["metadata"] = metadata
    return {"run_id": run_id, "agent": "support-bot", "trace_id": trace_id,
            "started_at": "2025-11-21T00:00:00Z", "response": body}


def test_span_and_llm_call_rows(write_lines: Callable[..., Path], views: MemoryViews) -> None:
    """Times from nanoseconds, kind and status without their prefixes, request times inherited
    from the span, latency, the agent from attributes else service.name."""
    lines = [span("root", end_ms=5000, attrs={"gen_ai.agent.name": "planner"}),
             span("call", parent="root", start_ms=100, end_ms=1600,
                  log_request=llm("gpt-4o", 120, 40, parameters={"max_tokens": 512},
                                  request_start_time="2025-11-21T00:00:00.200Z"))]
    views.load(write_lines(lines, name="a.spans.jsonl"))
    assert views("SELECT span_id, parent_id, agent, kind, status_code, duration_ms, "
                 "start_time::VARCHAR, n_events, has_log_request, day::VARCHAR FROM spans "
                 "ORDER BY 1") == [
        ("call", "root", "svc", "INTERNAL", "OK", 1500.0, "2025-11-21 00:00:00.1+00", 1, True,
         "2025-11-21"),
        ("root", None, "planner", "INTERNAL", "OK", 5000.0, "2025-11-21 00:00:00+00", 1, False,
         "2025-11-21")]
    assert views("SELECT span_id, model, input_tokens, output_tokens, price, status, "
                 "max_tokens, latency_ms, request_end_time::VARCHAR, n_input_messages, "
                 "n_output_messages FROM llm_calls") == [
        ("call", "gpt-4o", 120, 40, 0.01, "SUCCESS", 512, 1400.0, "2025-11-21 00:00:01.6+00",
         2, 1)]


def test_llm_call_messages(write_lines: Callable[..., Path], views: MemoryViews) -> None:
    """Prompt and reply become messages (source span, direction), with tool calls and thinking."""
    views.load(write_lines([span("call", log_request=llm("gpt-4o", 1, 1))],
                           name="a.spans.jsonl"))
    assert views("SELECT message_index, role, direction, text, n_tool_calls, n_thinking, "
                 "source, span_id FROM messages ORDER BY 1") == [
        (0, "system", "input", "Be brief.", 0, 0, "span", "call"),
        (1, "user", "input", "Refund #4521", 0, 0, "span", "call"),
        (2, "assistant", "output", "Checking.", 1, 1, "span", "call")]
    assert views("SELECT message_index, tool_name, arguments, call_shape, source FROM tool_calls"
                 ) == [(2, "get_order", '{"id":4521}', "nested", "span")]
    assert views("SELECT text, span_id FROM thinking") == [("look it up", "call")]
    assert views("SELECT count(*) FROM flags") == [(0,)]


def test_bulk_and_single_lines_agree(write_lines: Callable[..., Path],
                                     views: MemoryViews) -> None:
    """One bulk line or one line per span: the same spans and calls."""
    spans = [span("b", parent="a", start_ms=10), span("a"),
             span("c", log_request=llm("gpt-4o", 5, 6))]
    single = write_lines(spans, name="single.spans.jsonl", folder="one")
    bulk = write_lines([{"spans": spans}], name="bulk.spans.jsonl", folder="two")
    got = []
    for path in (single, bulk):
        views.load(path)
        got.append((views("SELECT span_id, parent_id, duration_ms FROM spans ORDER BY 1"),
                    views("SELECT span_id, input_tokens FROM llm_calls"),
                    views("SELECT count(*) FROM flags")))
        assert views("SELECT count(*) FROM quarantine") == [(0,)]
    assert got[0] == got[1]
    assert got[0][2] == [(0,)]


def test_runs_take_model_and_tokens_from_their_spans(
        write_lines: Callable[..., Path], views: MemoryViews) -> None:
    """A run without metadata gets the most frequent model and the summed tokens of the LLM
    calls linked to it, by run_id attribute or by trace_id; tokens_source says so."""
    runs = [run("r-attr", "t-a"), run("r-trace", "t-b"),
            run("r-meta", "t-c", {"model": "claude-sonnet-4-5", "total_input_tokens": 100,
                                  "total_output_tokens": 10, "agent_runtime_ms": 2000}),
            run("r-none", "t-none")]
    spans = [span("a1", "t-x", attrs={"run_id": "r-attr"}, log_request=llm("gpt-4o", 10, 1)),
             span("a2", "t-x", attrs={"pipelines.run_id": "r-attr"},
                  log_request=llm("gpt-4o", 20, 2)),
             span("a3", "t-x", attrs={"run_id": "r-attr"}, log_request=llm("gpt-4.1", 30, 3)),
             span("b1", "t-b", end_ms=700, log_request=llm("gemini-2.5-flash", 7, 7)),
             span("c1", "t-c", end_ms=2100, log_request=llm("claude-sonnet-4-5", 99, 10))]
    views.load(write_lines(runs, name="r.responses.jsonl"),
               write_lines(spans, name="s.spans.jsonl"))
    assert views("SELECT run_id, model, input_tokens, output_tokens, tokens_source, "
                 "agent_runtime_ms, runtime_source, n_llm_calls FROM runs ORDER BY 1") == [
        ("r-attr", "gpt-4o", 60, 6, "spans", 1000.0, "spans", 3),
        ("r-meta", "claude-sonnet-4-5", 100, 10, "metadata", 2000.0, "metadata", 1),
        ("r-none", "unknown", None, None, "none", None, "none", 0),
        ("r-trace", "gemini-2.5-flash", 7, 7, "spans", 700.0, "spans", 1)]
    assert views("SELECT span_id, run_id, linked_by FROM llm_calls ORDER BY 1") == [
        ("a1", "r-attr", "attribute"), ("a2", "r-attr", "attribute"),
        ("a3", "r-attr", "attribute"), ("b1", "r-trace", "trace_id"),
        ("c1", "r-meta", "trace_id")]
    assert views("SELECT DISTINCT run_id FROM messages WHERE source = 'span' ORDER BY 1") == [
        ("r-attr",), ("r-meta",), ("r-trace",)]
    # Within tolerance (99 vs 100 tokens, 2100 vs 2000 ms): no finding.
    assert views("SELECT count(*) FROM flags") == [(0,)]


def test_reconciliation_flags(write_lines: Callable[..., Path], views: MemoryViews) -> None:
    """Metadata totals that disagree with the spans beyond the tolerance are flagged."""
    meta = {"total_input_tokens": 1000, "total_output_tokens": 100, "agent_runtime_ms": 10_000}
    runs = [run("r-tok", "t-tok", meta), run("r-time", "t-time", meta)]
    spans = [span("k1", "t-tok", end_ms=10_000, log_request=llm("gpt-4o", 900, 100)),
             span("m1", "t-time", end_ms=4_000, log_request=llm("gpt-4o", 1000, 100))]
    views.load(write_lines(runs, name="r.responses.jsonl"),
               write_lines(spans, name="s.spans.jsonl"))
    rows = views("SELECT run_id, code, severity, category, detail FROM flags ORDER BY 1")
    assert [r[:4] for r in rows] == [("r-time", "runtime_mismatch", "warning", "integrity"),
                                     ("r-tok", "tokens_mismatch", "warning", "integrity")]
    assert "root span m1 lasted 4000 ms" in rows[0][4]
    assert "sum to 900 / 100" in rows[1][4]


def test_unlinked_spans_stay_unlinked(write_lines: Callable[..., Path],
                                      views: MemoryViews) -> None:
    """A span of a trace two runs share, or of no run, keeps a null run_id."""
    runs = [run("r1", "t-shared"), run("r2", "t-shared")]
    views.load(write_lines(runs, name="r.responses.jsonl"),
               write_lines([span("x", "t-shared"), span("y", "t-alone")], name="s.spans.jsonl"))
    assert views("SELECT span_id, run_id, linked_by FROM spans ORDER BY 1") == [
        ("x", None, None), ("y", None, None)]


DAY_MS = 86_400_000


def test_spans_out_of_their_runs_reach_say_so(write_lines: Callable[..., Path],
                                              run_ingest: Callable[..., Any],
                                              query: Callable[..., Any]) -> None:
    """A span that names a run which exists further than a day from it counts toward no run,
    and says so (span_outside_run_window, with the offset in days): the run's cost then falls
    back from its spans' own prices to the price table. A span a day off still links; one
    naming a run the lake does not hold raises nothing."""
    meta = {"model": "gpt-4o", "total_input_tokens": 1000, "total_output_tokens": 100}
    runs = [run("r-near", "t-near", meta), run("r-far", "t-far", meta),
            run("r-trace", "t-trace"), run("r-day", "t-day", meta)]
    year = 365 * DAY_MS
    spans = [
        # priced LLM calls on the run's day: its cost is theirs (price_source 'source')
        span("n1", "t-near", attrs={"run_id": "r-near"}, log_request=llm("gpt-4o", 1000, 100)),
        # the same a year (365 days) later: out of reach
        span("f1", "t-far", attrs={"run_id": "r-far"}, start_ms=year, end_ms=year + 1000,
             log_request=llm("gpt-4o", 900, 90)),
        span("f2", "t-far", attrs={"run_id": "r-far"}, start_ms=year + 5, end_ms=year + 900,
             log_request=llm("gpt-4o", 100, 10)),
        # no run_id attribute: the run sharing its trace, 40 days before it
        span("t1", "t-trace", start_ms=40 * DAY_MS, end_ms=40 * DAY_MS + 10),
        # a day after its run: still within reach, linked
        span("d1", "t-day", attrs={"run_id": "r-day"}, start_ms=DAY_MS, end_ms=DAY_MS + 10),
        # names a run the lake does not hold: nothing to say
        span("g1", "t-ghost", attrs={"run_id": "r-ghost"}, start_ms=year, end_ms=year + 10)]
    run_ingest(write_lines(runs, name="r.responses.jsonl"),
               write_lines(spans, name="s.spans.jsonl"))
    rows = query("SELECT run_id, day::VARCHAR, span_id, severity, category, source, n_seen, "
                 "detail FROM flags WHERE code = 'span_outside_run_window' ORDER BY 1")
    tail = ": further than a day from its run, a span counts toward no run"
    assert rows == [
        ("r-far", "2026-11-21", "f1", "warning", "integrity", "derived", 2,
         "span f1 starts 365 days after its run r-far's day 2025-11-21; so does the other "
         "span of trace t-far that day" + tail),
        ("r-trace", "2025-12-31", "t1", "warning", "integrity", "derived", 1,
         "span t1 of trace t-trace starts 40 days after the day 2025-11-21 of run r-trace, "
         "the trace's run" + tail)]
    # The far run's cost is its tokens at the price table's gpt-4o rates ($2.50 / $10.00 per
    # million): (1000 * 2.50 + 100 * 10.00) / 1e6 = 0.0035; the near run's is its call's
    # own price (0.01). A finding out of reach counts toward no run (n_flags 0).
    assert query("SELECT run_id, round(cost_usd, 6), price_source, n_llm_calls, n_flags "
                 "FROM v_runs ORDER BY 1") == [
        ("r-day", 0.0035, "table", 0, 0), ("r-far", 0.0035, "table", 0, 0),
        ("r-near", 0.01, "source", 1, 0), ("r-trace", None, None, 0, 0)]
    assert query("SELECT span_id, run_id FROM spans WHERE span_id IN ('d1', 'f1', 't1') "
                 "ORDER BY 1") == [("d1", "r-day"), ("f1", "r-far"), ("t1", None)]
    # In the summary the finding counts under its run's day, agent and model.
    assert query("SELECT day::VARCHAR, agent, model, n_findings, n_runs_affected, n_seen "
                 "FROM v_flag_summary WHERE code = 'span_outside_run_window' ORDER BY 3") == [
        ("2025-11-21", "support-bot", "gpt-4o", 1, 1, 2),
        ("2025-11-21", "support-bot", "unknown", 1, 1, 1)]


def test_a_far_run_is_found_whichever_file_comes_first(
        write_lines: Callable[..., Path], run_ingest: Callable[..., Any],
        query: Callable[..., Any]) -> None:
    """The run a span looks for may arrive in a later ingest, a year from the span's week,
    which is not computed again: the finding appears then, and goes when the run's line is
    replaced by one that brings it within reach."""
    year = 365 * DAY_MS
    far = [span("s1", "t-x", attrs={"run_id": "r-x"}, start_ms=year, end_ms=year + 10)]
    run_ingest(write_lines(far, name="s.spans.jsonl"))
    found = "SELECT run_id, span_id FROM flags WHERE code = 'span_outside_run_window'"
    assert query(found) == []
    run_ingest(write_lines([run("r-x", "t-x")], name="r.responses.jsonl", folder="day1"))
    assert query(found) == [("r-x", "s1")]
    moved = {**run("r-x", "t-x"), "started_at": "2026-11-21T00:00:00Z"}
    run_ingest(write_lines([moved], name="r2.responses.jsonl", folder="day2"))
    assert query(found) == []
    assert query("SELECT span_id, run_id FROM spans") == [("s1", "r-x")]
