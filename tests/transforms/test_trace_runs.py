"""Spans find their run through their trace: an SDK sets the run_id attribute on the root span
only, and the children, in any line, file or ingest, link to the run it names."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.transforms.test_spans import llm, span
from transforms import warehouse
from transforms.ingest import ingest


def _run(run_id: str) -> dict[str, Any]:
    """A run whose line names no trace: only the spans' attributes tie them to it."""
    return {"run_id": run_id, "agent": "support-bot", "started_at": "2025-11-21T00:00:00Z",
            "response": {"final_response": "done",
                         "messages": [{"role": "assistant", "content": "done"}]}}


def test_children_find_the_run_their_root_names(write_lines: Callable[..., Path],
                                                tmp_path: Path) -> None:
    """The root span (run_id r1) in one file, its chat span (no run_id) in a file of a later
    ingest: the chat span's LLM call counts toward r1 (tokens from the spans), linked by the
    trace's attribute. A trace whose spans name two runs links its other spans to neither."""
    home = tmp_path / "home"
    root = span("root", trace_id="t1", end_ms=5000, attrs={"run_id": "r1"})
    chat = span("chat", trace_id="t1", parent="root", start_ms=100, end_ms=900,
                log_request=llm("gpt-4o", 1200, 80))
    two = [span("a", trace_id="t2", attrs={"run_id": "r1"}),
           span("b", trace_id="t2", attrs={"run_id": "r2"}),
           span("c", trace_id="t2", parent="a", log_request=llm("gpt-4o", 5, 1))]
    ingest([write_lines([_run("r1"), _run("r2")], name="a.responses.jsonl"),
            write_lines([{"spans": [root]}, {"spans": two}], name="a.spans.jsonl")], home)
    ingest([write_lines([{"spans": [chat]}], name="b.spans.jsonl")], home)
    con = warehouse.connect(home)
    try:
        assert con.execute("SELECT span_id, run_id, linked_by FROM llm_calls ORDER BY 1"
                           ).fetchall() == [("c", None, None), ("chat", "r1", "trace_attribute")]
        assert con.execute("SELECT span_id, run_id, linked_by FROM spans WHERE trace_id = 't1' "
                           "ORDER BY 1").fetchall() == [
            ("chat", "r1", "trace_attribute"), ("root", "r1", "attribute")]
        assert con.execute("SELECT input_tokens, output_tokens, tokens_source FROM runs "
                           "WHERE run_id = 'r1'").fetchall() == [(1200, 80, "spans")]
    finally:
        con.close()
