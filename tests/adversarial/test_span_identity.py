"""A span is its trace and its span id: two traces that reuse span ids (…01, …02) each give
their spans, tokens, runtime and findings to their own run, whatever order the files are read
in (was: every span went to one run, picked by any_value)."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MemoryViews

START = 1795219200000000000  # 2026-11-21T00:00:00Z in Unix nanoseconds


def _trace(trace: str, tokens: int, seconds: int) -> list[dict[str, Any]]:
    base = {"status": {"status_code": "StatusCode.OK"}, "attributes": {},
            "resource": {"attributes": {"service.name": "a"}, "schema_url": ""}}
    root = {**base, "name": "agent", "kind": "SpanKind.INTERNAL", "parent_id": None,
            "context": {"trace_id": trace, "span_id": "0000000000000001", "trace_state": ""},
            "start_time": START, "end_time": START + seconds * 1_000_000_000}
    call = {**base, "name": "llm_call", "kind": "SpanKind.CLIENT",
            "parent_id": "0000000000000001",
            "context": {"trace_id": trace, "span_id": "0000000000000002", "trace_state": ""},
            "start_time": START, "end_time": START + 1_000_000_000,
            "log_request": {"provider": "openai", "model": "gpt-4o", "input_tokens": tokens,
                            "output_tokens": 10, "price": tokens / 1e6,
                            "parameters": {"max_tokens": 10},
                            "input": {"type": "chat", "messages": [
                                {"role": "user", "content": [{"type": "text",
                                                              "text": f"in {trace}"}]}]}}}
    return [root, call]


@pytest.mark.parametrize("order", ["ab", "ba"])
def test_two_traces_reusing_span_ids_keep_their_own_runs(
        write_lines: Callable[..., Path], views: MemoryViews, order: str) -> None:
    runs = [{"run_id": f"r-{x}", "agent": "a", "trace_id": f"trace-{x}",
             "started_at": "2026-11-21T00:00:00Z", "outcome": {"status": "passed"},
             "response": {"final_response": "ok"}} for x in "AB"]
    traces = {"a": _trace("trace-A", 100, 5), "b": _trace("trace-B", 200, 9)}
    files = [write_lines(traces[x], name=f"{x}.spans.jsonl") for x in order]
    views.load(write_lines(runs), *files)
    assert views("select run_id, input_tokens, agent_runtime_ms, round(cost_usd, 6) "
                 "from runs order by run_id") == [("r-A", 100, 5000, 0.0001),
                                                 ("r-B", 200, 9000, 0.0002)]
    assert views("select run_id, count(*) from spans group by 1 order by 1") == [
        ("r-A", 2), ("r-B", 2)]
    assert views("select run_id, input_tokens from llm_calls order by 1") == [
        ("r-A", 100), ("r-B", 200)]
    assert views("select run_id, text from messages where source = 'span' "
                 "order by 1") == [("r-A", "in trace-A"), ("r-B", "in trace-B")]
    # Each call stopped at its max_tokens: one truncation finding per run, on its own call.
    assert views("select run_id, span_id, output_tokens from v_truncations "
                 "order by 1") == [("r-A", "0000000000000002", 10),
                                   ("r-B", "0000000000000002", 10)]
    assert views("select count(*) from flags where code in ('tokens_mismatch', "
                 "'runtime_mismatch')") == [(0,)]
