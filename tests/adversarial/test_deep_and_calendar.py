"""Records that once ended in a "please report it" quarantine: JSON nested 255 to 1,024
levels deep, and timestamps or date folders at the ends of the calendar. The run is kept, the
field flagged, its value kept whole (deep JSON) or null (a timestamp out of range)."""

import json
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.lines import response_line


def _deep(levels: int) -> Any:
    """A JSON value `levels` deep: [[[...{"x": 1}...]]]."""
    value: Any = {"x": 1}
    for _ in range(levels - 1):
        value = [value]
    return value


def _deep_text(levels: int) -> str:
    """The compact JSON text of _deep(levels), written without recursion."""
    return "[" * (levels - 1) + '{"x":1}' + "]" * (levels - 1)


def test_values_nested_255_to_1024_deep_are_flagged_and_kept(
        tmp_path: Path, run_ingest: Callable[..., Any],
        query: Callable[..., list[tuple[Any, ...]]]) -> None:
    """Each deep value stays whole as JSON text, the run (or span) is kept and a flag names
    the field; a line deeper than JSON's 1,024 levels is still quarantined (the line rule)."""
    landing = tmp_path / "landing"
    landing.mkdir()
    deep = _deep(300)
    text = _deep_text(300)
    runs = [
        response_line("meta", response={"final_response": "ok", "metadata": {"blob": "@DEEP@"}}),
        response_line("args", response={"final_response": "ok", "messages": [
            {"role": "assistant", "tool_calls": [
                {"id": "c1", "name": "f", "arguments": deep},
                {"id": "c2", "type": "function", "function": {"name": "f", "arguments": text}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "x"},
            {"role": "tool", "tool_call_id": "c2", "content": "y"}]}),
        response_line("parts", response={"final_response": "ok", "messages": [
            {"role": "user", "content": [{"type": "image", "data": deep}],
             "thinking": [{"signature": deep}]}]}),
        response_line("outcome", outcome={"status": "failed", "error": deep, "explanation": deep}),
    ]
    (landing / "deep.responses.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in runs).replace('"@DEEP@"', _deep_text(1000))
        + "[" * 1025 + "]" * 1025 + "\n")
    span = {"context": {"trace_id": "t", "span_id": "s1"}, "start_time": 1763683200000000000,
            "end_time": 1763683201000000000, "attributes": {"blob": deep},
            "resource": {"attributes": {"service.name": "svc", "deep": deep}}}
    (landing / "deep.spans.jsonl").write_text(json.dumps(span) + "\n")
    # An OTLP attribute of arrays 300 deep (900 JSON levels as AnyValues).
    nested = '{"arrayValue":{"values":[' * 300 + '{"stringValue":"x"}' + "]}}" * 300
    otlp = {"traceId": "a" * 32, "spanId": "b" * 16, "startTimeUnixNano": "1763683200000000000",
            "endTimeUnixNano": "1763683201000000000",
            "attributes": [{"key": "nested", "value": "@NESTED@"}]}
    (landing / "deep.otlp.jsonl").write_text(json.dumps(otlp).replace('"@NESTED@"', nested)
                                             + "\n")
    report = run_ingest(landing)
    assert {Path(f.source_file).name: (f.accepted, f.quarantined) for f in report.files} == {
        "deep.responses.jsonl": (4, 1), "deep.spans.jsonl": (1, 0), "deep.otlp.jsonl": (1, 0)}
    assert query("SELECT error_code, error_message LIKE '%runlake could not read%' "
                 "FROM quarantine") == [("invalid_json", False)]
    assert query("SELECT value FROM metadata_kv WHERE key = 'blob'") == [(_deep_text(1000),)]
    assert query("SELECT call_id, arguments, arguments_raw, arguments_valid FROM tool_calls "
                 "ORDER BY 1") == [("c1", None, text, False), ("c2", None, text, False)]
    assert query("SELECT other_parts FROM messages WHERE run_id = 'parts'") == [
        (json.dumps([{"type": "image", "data": deep}], separators=(",", ":")),)]
    assert query("SELECT text FROM thinking WHERE run_id = 'parts'") == [
        (json.dumps({"signature": deep}, separators=(",", ":")),)]
    assert query("SELECT outcome_error = ?, outcome_explanation = ? FROM runs "
                 "WHERE run_id = 'outcome'", [text, text]) == [(True, True)]
    assert query("SELECT attributes, resource_attributes LIKE '%[[[%' FROM spans "
                 "WHERE span_id = 's1'") == [(json.dumps({"blob": deep}, separators=(",", ":")),
                                              True)]
    flags = query("SELECT coalesce(run_id, span_id), code, detail FROM flags "
                  "WHERE detail LIKE '%levels deep%' ORDER BY 1, 2, 3")
    found = {(who, code) for who, code, _ in flags}
    assert found == {("meta", "metadata_malformed"), ("args", "tool_arguments_invalid_json"),
                     ("parts", "messages_malformed"), ("outcome", "envelope_malformed"),
                     ("s1", "span_malformed"), ("b" * 16, "span_malformed")}
    ((attributes,),) = query("SELECT attributes FROM spans WHERE span_id = ?", ["b" * 16])
    assert attributes == '{"nested":' + "[" * 300 + '"x"' + "]" * 300 + "}"
    details = " ".join(d for *_, d in flags)
    for field in ("metadata.blob", "arguments of f", "entry 0 content", "thinking block 0",
                  "outcome.error", "outcome.explanation", "span s1: attributes",
                  "resource attributes"):
        assert field in details, field


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00+01:00", "0001-01-01T00:00:00Z",
                                   "9999-12-31T23:59:59-01:00", "9999-12-31T23:59:59Z"])
def test_timestamps_at_the_ends_of_the_calendar_are_flagged_and_null(
        stamp: str, write_lines: Callable[..., Path], run_ingest: Callable[..., Any],
        query: Callable[..., list[tuple[Any, ...]]]) -> None:
    """The run is kept and dated otherwise (here: its date folder), the field is null and
    flagged, and the warehouse builds (it computes a week and a day either side of a day)."""
    path = write_lines([response_line("r1", started_at=stamp, ended_at=stamp)],
                       folder="landing/2026-11-19")
    report = run_ingest(path)
    assert [(f.accepted, f.quarantined) for f in report.files] == [(1, 0)]
    assert query("SELECT day, started_at, ended_at FROM runs") == [(date(2026, 11, 19), None,
                                                                    None)]
    ((detail,),) = query("SELECT detail FROM flags WHERE code = 'envelope_malformed'")
    assert f"started_at {stamp!r} is out of range" in detail
    assert f"ended_at {stamp!r} is out of range" in detail


def test_span_times_at_the_ends_of_the_calendar(write_lines: Callable[..., Path],
                                                run_ingest: Callable[..., Any],
                                                query: Callable[..., Any]) -> None:
    year_one = -62135596800 * 10**9  # 0001-01-01 in Unix nanoseconds: beyond 64 bits
    spans = [{"context": {"trace_id": "t", "span_id": f"s{i}"}, "start_time": start,
              "end_time": 1763683201000000000, "attributes": {},
              "log_request": {"provider": "p", "model": "m", "request_start_time": request}}
             for i, (start, request) in enumerate([
                 (year_one, None), (1763683200000000000, "0001-01-01T00:00:00+01:00"),
                 (1763683200000000000, 1e300), (1763683200000000000, -62135596800)])]
    report = run_ingest(write_lines(spans, name="t.spans.jsonl", folder="landing/2026-11-19"))
    assert [(f.accepted, f.quarantined) for f in report.files] == [(4, 0)]
    assert query("SELECT span_id, start_time IS NULL FROM spans ORDER BY 1") == [
        ("s0", True), ("s1", False), ("s2", False), ("s3", False)]
    assert query("SELECT count(*) FROM llm_calls WHERE span_id <> 's0' "
                 "AND request_start_time = (SELECT start_time FROM spans "
                 "WHERE span_id = 's1')") == [(3,)]
    details = dict(query("SELECT span_id, detail FROM flags WHERE code = 'span_malformed'"))
    assert "start_time -62135596800000000000 is out of range" in details["s0"]
    for s in ("s1", "s2", "s3"):
        assert "request_start_time" in details[s] and "out of range" in details[s], details


def test_a_date_folder_outside_the_calendar_dates_nothing(write_lines: Callable[..., Path],
                                                          run_ingest: Callable[..., Any],
                                                          query: Callable[..., Any]) -> None:
    report = run_ingest(write_lines([{"run_id": "r1", "response": {"final_response": "ok"}},
                                     "not json"], folder="landing/0001-01-01"))
    assert [(f.accepted, f.quarantined) for f in report.files] == [(1, 1)]
    ((day,),) = query("SELECT day FROM runs")
    assert date(2, 1, 1) < day and query("SELECT day FROM quarantine") == [(day,)]
