"""Integers beyond 64 bits: JSON text keeps every digit, and a count that no BIGINT holds is
flagged by the name of its field, never rounded to a double on the way."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

BIG = 123456789012345678901234567890
"""30 digits: orjson alone reads it as 1.2345678901234568e+29."""


def _run(**metadata: Any) -> dict[str, Any]:
    return {"run_id": "big", "agent": "a", "started_at": "2026-11-20T10:00:00Z",
            "response": {"final_response": "ok", "messages": [
                {"role": "user", "content": "find it"},
                {"role": "assistant", "tool_calls": [
                    {"id": "c1", "name": "lookup", "arguments": {"id": BIG, "n": -2**70}},
                    {"id": "c2", "type": "function", "function": {
                        "name": "lookup", "arguments": json.dumps({"id": BIG})}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "x"},
                {"role": "tool", "tool_call_id": "c2", "content": "y"},
                {"role": "assistant", "content": "ok"}],
                "metadata": metadata}}


def test_json_text_keeps_every_digit(write_lines: Callable[..., Path],
                                     run_ingest: Callable[..., Any],
                                     query: Callable[..., list[tuple[Any, ...]]]) -> None:
    """metadata_kv values and canonical tool arguments hold the integers as written."""
    run_ingest(write_lines([_run(order_id=BIG, nested={"ids": [BIG, -BIG]}, small=2**64 - 1)]))
    assert dict(query("SELECT key, value FROM metadata_kv")) == {
        "order_id": str(BIG), "nested": f'{{"ids":[{BIG},{-BIG}]}}',
        "small": "18446744073709551615"}
    assert query("SELECT call_id, arguments, arguments_valid FROM tool_calls ORDER BY 1") == [
        ("c1", f'{{"id":{BIG},"n":{-2**70}}}', True), ("c2", f'{{"id":{BIG}}}', True)]
    assert query("SELECT count(*) FROM flags WHERE code NOT IN ('messages_missing')") == [(0,)]
    assert query("SELECT count(*) FROM quarantine") == [(0,)]


def test_a_count_beyond_64_bits_is_flagged_by_its_own_name(
        write_lines: Callable[..., Path], run_ingest: Callable[..., Any],
        query: Callable[..., list[tuple[Any, ...]]]) -> None:
    """Token counts out of range and an impossible runtime are null and named in the flag's
    detail, with the digits and the reason: not '(number)'."""
    run_ingest(write_lines([_run(total_input_tokens=BIG, total_output_tokens=7,
                                 agent_runtime_ms=BIG)]))
    assert query("SELECT input_tokens, output_tokens, agent_runtime_ms FROM runs") == [
        (None, 7, None)]
    ((detail,),) = query("SELECT detail FROM flags WHERE code = 'metadata_malformed'")
    assert f"total_input_tokens is {BIG}"[:40] in detail
    assert "agent_runtime_ms is 1234" in detail
    assert detail.count("(out of the 64-bit range)") == 1 and "(number)" not in detail
    assert "(an impossible runtime, over 2,678,400,000 ms or 31 days)" in detail


def test_counts_beyond_64_bits_in_spans_and_state_documents(
        tmp_path: Path, run_ingest: Callable[..., Any],
        query: Callable[..., list[tuple[Any, ...]]]) -> None:
    """A span's token counts and attributes, an OTLP cache count, a durable document's usage:
    each out-of-range count flagged by its field, the attribute text exact."""
    landing = tmp_path / "landing"
    landing.mkdir()
    span = {"context": {"trace_id": "t1", "span_id": "s1"}, "name": "llm",
            "start_time": 1763683200000000000, "end_time": 1763683201000000000,
            "attributes": {"request.id": BIG},
            "log_request": {"provider": "p", "model": "m", "input_tokens": BIG,
                            "output_tokens": 3}}
    (landing / "x.spans.jsonl").write_text(json.dumps(span) + "\n")
    otlp = {"traceId": "a" * 32, "spanId": "b" * 16, "startTimeUnixNano": "1763683200000000000",
            "endTimeUnixNano": "1763683201000000000", "attributes": {
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                "gen_ai.usage.input_tokens": 5, "gen_ai.usage.cache_read_input_tokens": BIG}}
    (landing / "x.otlp.jsonl").write_text(json.dumps(otlp) + "\n")
    state = {"schemaVersion": "1.0.0", "run_id": "d1", "data": {"conversationHistory": [
        {"$type": "response", "createdAt": "2026-11-20T01:00:00Z",
         "usage": {"inputTokenCount": BIG, "outputTokenCount": 2},
         "messages": [{"role": "assistant", "authorName": "bot",
                       "contents": [{"$type": "text", "text": "hi"}]}]}]}}
    (landing / "x.durable.json").write_text(json.dumps(state))
    run_ingest(landing)
    assert query("SELECT attributes FROM spans WHERE span_id = 's1'") == [
        (f'{{"request.id":{BIG}}}',)]
    assert query("SELECT span_id, input_tokens, output_tokens, cached_input_tokens "
                 "FROM llm_calls ORDER BY 1") == [("b" * 16, 5, None, None), ("s1", None, 3, None)]
    details = dict(query("SELECT coalesce(span_id, run_id), detail FROM flags "
                         "WHERE code IN ('span_malformed', 'envelope_malformed')"))
    assert f"log_request.input_tokens is {str(BIG)[:20]}" in details["s1"]
    assert "(out of the 64-bit range)" in details["s1"]
    assert "gen_ai.usage.cache_read_input_tokens" in details["b" * 16]
    assert "usage.inputTokenCount 1234" in details["d1"] and "64-bit" in details["d1"]
    assert query("SELECT count(*) FROM quarantine") == [(0,)]
