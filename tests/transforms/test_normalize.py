"""Rows the normalizer builds: columns, resolution rules and the data dictionary's definitions."""

from collections.abc import Callable
from pathlib import Path

from tests.conftest import MemoryViews

RUN = {
    "run_id": "r1", "agent_name": "support-bot", "case_id": "refund/42", "model": "env-model",
    "trace_id": "t1", "started_at": "2026-11-20T23:30:00-02:00",
    "ended_at": "2026-11-21T01:30:05Z", "outcome": {"passed": False, "score": 0.25},
    "response": {
        "final_response": "Refund issued ✅",
        "messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": [{"type": "text", "text": "Refund "},
                                         {"type": "image_url", "image_url": {"url": "u"}},
                                         {"type": "text", "text": "#4521"}]},
            {"role": "assistant", "content": None,
             "thinking": [{"type": "thinking", "text": "check order"}, {"signature": "abc"}],
             "tool_calls": [
                 {"id": "c1", "name": "get_order", "arguments": {"z": 1, "a": {"y": 2, "b": 3}}},
                 {"id": "c2", "type": "function",
                  "function": {"name": "refund", "arguments": "{\"amount\": 79.5, \"id\": 1}"}},
                 {"type": "function", "function": {"name": "noop"}}]},
            {"role": "tool", "tool_call_id": "c2", "name": "refund", "content": "ok"},
            {"role": "tool", "tool_call_id": "c1", "content": "{\"status\": \"shipped\"}"},
            {"role": "assistant", "content": "Refund issued ✅"},
        ],
        "metadata": {"total_input_tokens": 1842, "total_output_tokens": 217,
                     "agent_runtime_ms": 4815.5, "region": "eu", "tags": ["a"]},
    },
}


def test_run_row(write_lines: Callable[..., Path], views: MemoryViews) -> None:
    """Aliases resolve, the day is the UTC date of started_at, outcome.passed gives status."""
    views.load(write_lines([RUN]))
    row = views("""SELECT run_id, day::VARCHAR, agent, test_case_id, model, batch_id, status,
                          score, trace_mode, contract_mode, final_response_chars, n_messages,
                          n_tool_calls, n_thinking, input_tokens, output_tokens,
                          agent_runtime_ms, tokens_source, started_at::VARCHAR
                   FROM runs""")
    assert row == [("r1", "2026-11-21", "support-bot", "refund/42", "env-model", "2026-11-21",
                    "failed", 0.25, "rich", "lenient", 15, 6, 3, 2, 1842, 217, 4815.5,
                    "metadata", "2026-11-21 01:30:00+00")]


def test_messages_and_parts(write_lines: Callable[..., Path], views: MemoryViews) -> None:
    """Text is the concatenation of text parts; part types are kept; chars count code points."""
    views.load(write_lines([RUN]))
    rows = views("""SELECT message_index, role, content_kind, text, chars, part_types,
                           other_parts IS NOT NULL, n_tool_calls, n_thinking, tool_call_id
                    FROM messages ORDER BY message_index""")
    assert rows[1] == (1, "user", "parts", "Refund #4521", 12,
                       ["text", "image_url", "text"], True, 0, 0, None)
    assert rows[2] == (2, "assistant", "null", None, None, None, False, 3, 2, None)
    assert rows[5] == (5, "assistant", "string", "Refund issued ✅", 15, None, False, 0, 0, None)


def test_tool_calls_both_shapes(write_lines: Callable[..., Path], views: MemoryViews) -> None:
    """Both shapes give one row shape, canonical JSON arguments, and the answering message."""
    views.load(write_lines([RUN]))
    rows = views("""SELECT call_index, call_id, tool_name, arguments, arguments_valid, call_shape,
                           result_message_index, result_chars
                    FROM tool_calls ORDER BY call_index""")
    assert rows == [
        (0, "c1", "get_order", '{"a":{"b":3,"y":2},"z":1}', True, "flat", 4, 21),
        (1, "c2", "refund", '{"amount":79.5,"id":1}', True, "nested", 3, 2),
        (2, None, "noop", None, True, "nested", None, None),
    ]
    flags = views("SELECT code, message_index, call_index FROM flags ORDER BY code")
    assert flags == [("tool_call_unanswered", 2, 2)]


def test_thinking_and_metadata_kv(write_lines: Callable[..., Path],
                                  views: MemoryViews) -> None:
    """Thinking text is the text key else the block's JSON; unknown metadata keys become rows."""
    views.load(write_lines([RUN]))
    assert views("SELECT block_index, text, chars FROM thinking ORDER BY 1") == [
        (0, "check order", 11), (1, '{"signature":"abc"}', 19)]
    assert views("SELECT key, value FROM metadata_kv ORDER BY 1") == [
        ("region", '"eu"'), ("tags", '["a"]')]


def test_missing_numbers_stay_null(write_lines: Callable[..., Path],
                                   views: MemoryViews) -> None:
    """No metadata: tokens and runtime are null, not 0; wrong-typed keys are null and flagged."""
    lines = [
        {"run_id": "a", "response": {"final_response": "x", "messages": []}},
        {"run_id": "b", "response": {"final_response": "x", "messages": [],
                                     "metadata": {"total_input_tokens": "12",
                                                  "total_output_tokens": 3}}},
    ]
    views.load(write_lines(lines))
    assert views("SELECT run_id, input_tokens, output_tokens, agent_runtime_ms, tokens_source "
                 "FROM runs ORDER BY 1") == [("a", None, None, None, "none"),
                                             ("b", None, 3, None, "metadata")]
    assert views("SELECT count(*) FROM metadata_kv") == [(0,)]


def test_day_falls_back_to_batch_then_folder(write_lines: Callable[..., Path],
                                             views: MemoryViews) -> None:
    """day: started_at, else a date-shaped batch_id, else the date folder of the file."""
    lines = [
        {"run_id": "a", "started_at": "2026-11-19T08:00:00Z", "response": {"final_response": "x"}},
        {"run_id": "b", "batch_id": "2026-11-18-nightly", "response": {"final_response": "x"}},
        {"run_id": "c", "batch_id": "weekly", "response": {"final_response": "x"}},
    ]
    views.load(write_lines(lines, folder="landing/2026-11-17"))
    assert views("SELECT run_id, day::VARCHAR, batch_id FROM runs ORDER BY 1") == [
        ("a", "2026-11-19", "2026-11-19"), ("b", "2026-11-18", "2026-11-18-nightly"),
        ("c", "2026-11-17", "weekly")]


def test_status_vocabulary(write_lines: Callable[..., Path], views: MemoryViews) -> None:
    """Outcome status passes through; top-level passed works; no outcome is ungraded."""
    body = {"final_response": "x", "messages": [{"role": "assistant", "content": "x"}]}
    lines = [{"run_id": s, "outcome": {"status": s}, "response": body}
             for s in ("passed", "failed", "error", "skipped")]
    lines += [{"run_id": "top", "passed": True, "response": body},
              {"run_id": "none", "response": body}]
    views.load(write_lines(lines))
    assert dict(views("SELECT run_id, status FROM runs")) == {
        "passed": "passed", "failed": "failed", "error": "error", "skipped": "skipped",
        "top": "passed", "none": "ungraded"}


def test_outcome_explanation(write_lines: Callable[..., Path], views: MemoryViews) -> None:
    """outcome.explanation (alias outcome.reason) lands in runs.outcome_explanation; a
    structured one is kept as canonical JSON, like outcome.error; neither is flagged."""
    body = {"final_response": "x", "messages": [{"role": "assistant", "content": "x"}]}
    lines = [
        {"run_id": "expl", "outcome": {"status": "failed", "explanation": "wrong city"},
         "response": body},
        {"run_id": "reason", "outcome": {"status": "failed", "reason": "missed refund id"},
         "response": body},
        {"run_id": "both", "outcome": {"explanation": "kept", "reason": "ignored"},
         "response": body},
        {"run_id": "json", "outcome": {"status": "failed",
                                       "explanation": {"db_match": False, "b": [1]}},
         "response": body},
        {"run_id": "none", "outcome": {"status": "passed"}, "response": body},
    ]
    views.load(write_lines(lines))
    assert dict(views("SELECT run_id, outcome_explanation FROM runs")) == {
        "expl": "wrong city", "reason": "missed refund id", "both": "kept",
        "json": '{"b":[1],"db_match":false}', "none": None}
    assert views("SELECT count(*) FROM flags WHERE code = 'envelope_malformed'") == [(0,)]


def test_row_tuples_follow_schema_order() -> None:
    """The normalizer appends rows as tuples in these column orders; schemas.py must agree."""
    from transforms.contracts.schemas import (
        FLAGS,
        MESSAGES,
        METADATA_KV,
        RUNS,
        THINKING,
        TOOL_CALLS,
    )

    assert RUNS.names == [
        "run_id", "day", "agent", "agent_version", "model", "test_case_id", "batch_id",
        "trace_id", "session_id", "turn_index", "session_done", "started_at", "ended_at",
        "status", "score", "judge_skipped", "outcome_error", "outcome_explanation",
        "contract_mode", "trace_mode",
        "final_response",
        "final_response_chars", "final_response_truncated", "n_messages", "n_tool_calls",
        "n_thinking", "input_tokens", "output_tokens", "agent_runtime_ms", "system_prompt_id",
        "tokens_source", "record_shape", "source_file", "source_line"]
    assert MESSAGES.names == [
        "run_id", "day", "message_index", "role", "content_kind", "text", "chars", "part_types",
        "other_parts", "n_tool_calls", "tool_call_id", "name", "n_thinking", "source", "span_id",
        "direction", "source_file", "source_line"]
    assert TOOL_CALLS.names == [
        "run_id", "day", "message_index", "call_index", "call_id", "tool_name", "arguments",
        "arguments_raw", "arguments_valid", "arguments_chars", "call_shape", "result_message_index",
        "result_chars", "source", "span_id", "source_file", "source_line"]
    assert THINKING.names == ["run_id", "day", "message_index", "block_index", "text", "chars",
                              "span_id", "source_file", "source_line"]
    assert METADATA_KV.names == ["run_id", "day", "key", "value", "source_file", "source_line"]
    assert FLAGS.names == ["entity", "run_id", "day", "span_id", "message_index", "call_index",
                           "tool_name", "code", "severity", "category", "detail", "source",
                           "finding_key", "source_file", "source_line"]


def test_buffered_rows_become_columns_of_their_declared_types() -> None:
    """Rows become the table's declared columns, value for value (nulls, lists, dates and
    64-bit extremes included); a row of the wrong width is a bug named with the widths."""
    from datetime import date

    import pyarrow as pa
    import pytest

    from transforms.contracts.schemas import TABLES
    from transforms.normalize.columns import INT64_MAX, ColumnBuffers

    names = TABLES["messages"].names
    rows = [
        {**dict.fromkeys(names), "run_id": "r1", "day": date(2026, 11, 21), "message_index": 0,
         "role": "user", "content_kind": "parts", "text": "a\x00é", "chars": 3,
         "part_types": ["text", "image_url"], "source_file": "f.jsonl", "source_line": 1},
        {**dict.fromkeys(names), "run_id": "r2", "day": date(2026, 1, 1),
         "message_index": INT64_MAX, "role": "tool", "content_kind": "null",
         "part_types": [], "source_file": "f.jsonl", "source_line": 2},
    ]
    buffers = ColumnBuffers()
    for r in rows:
        buffers.append("messages", **r)
    table = buffers.to_arrow("messages")
    assert table.schema == TABLES["messages"].schema
    assert table.to_pylist() == rows
    assert pa.types.is_list(table.schema.field("part_types").type)
    assert ColumnBuffers().to_arrow("messages").equals(TABLES["messages"].schema.empty_table())

    buffers.rows_of["messages"].append(("r3", date(2026, 11, 21)))
    with pytest.raises(AssertionError, match=rf"rows of \[2, {len(names)}\] values"):
        buffers.to_arrow("messages")


def test_contract_mode_is_the_contract_the_line_declared(write_lines: Callable[..., Path],
                                                         views: MemoryViews) -> None:
    """A run that crashed or was skipped under the rich+strict contract keeps its status (its
    missing reply is no breach) and still shows the contract it declared."""
    strict = {"response_mode": "rich", "strictness": "strict"}
    lines = [{"run_id": rid, "agent": "a", "test_case_id": "k", "response_contract": contract,
              "started_at": "2026-11-20T10:00:00Z", "outcome": {"status": status},
              "response": {"messages": []}}
             for rid, status, contract in (("crashed", "error", strict),
                                           ("skipped", "skipped", strict),
                                           ("silent", "passed", strict),
                                           ("plain", "passed", None))]
    views.load(write_lines(lines))
    assert dict((r, (s, m)) for r, s, m in views(
        "select run_id, status, contract_mode from runs")) == {
        "crashed": ("error", "rich_strict"), "skipped": ("skipped", "rich_strict"),
        "silent": ("contract_violation", "rich_strict"), "plain": ("passed", "lenient")}
