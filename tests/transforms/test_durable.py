"""Durable agent entity state documents: one document is one run, with messages, reasoning,
tool calls joined to their results by callId, usage, errors and the schemaVersion check."""

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import REAL_FIXTURES
from transforms.ingest import ingest

SAMPLE = REAL_FIXTURES / "agent-framework-durable" / "durable_agent_state_sample.json"


def state(history: list[Any], version: Any = "1.0.0", **top: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"data": {"conversationHistory": history}, **top}
    if version is not None:
        doc["schemaVersion"] = version
    return doc


def msg(role: str, *contents: dict[str, Any], author: str | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {"role": role, "contents": list(contents)}
    if author:
        m["authorName"] = author
    return m


def text(t: str) -> dict[str, Any]:
    return {"$type": "text", "text": t}


def test_real_sample_reads_with_its_call_linked(tmp_path: Path, home: Path,
                                                query: Callable[..., Any]) -> None:
    """The pretty-printed sample (a .durable.json file is one record): 6 messages, the
    functionCall answered by its functionResult, tokens from both responses' usage."""
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "orchestrator.durable.json").write_bytes(SAMPLE.read_bytes())
    report = ingest([landing], home)
    assert [(f.lines, f.accepted, f.quarantined) for f in report.files] == [(1, 1, 0)]
    assert query("SELECT agent, day::VARCHAR, status, n_messages, n_tool_calls, input_tokens, "
                 "output_tokens, record_shape FROM runs") == [
        ("OrchestratorAgent", "2025-11-04", "ungraded", 6, 1, 595 + 396, 63 + 48, "durable")]
    assert query("SELECT tool_name, arguments, result_message_index FROM tool_calls") == [
        ("StartDocumentGeneration", '{"productName":"Goldbrew Coffee"}', 2)]
    assert query("SELECT role FROM messages ORDER BY message_index") == [
        ("user",), ("assistant",), ("tool",), ("assistant",), ("system",), ("assistant",)]
    assert query("SELECT count(*) FROM flags")[0][0] == 0


def test_contents_and_near_misses(write_lines: Callable[..., Path], home: Path,
                                  query: Callable[..., Any]) -> None:
    docs = [
        # reasoning -> thinking; usage content -> tokens; an error -> status error
        state([{"$type": "request", "createdAt": "2026-11-20T10:00:00Z",
                "messages": [msg("user", text("Plan the trip."))]},
               {"$type": "response", "createdAt": "2026-11-20T10:00:05Z",
                "messages": [msg("assistant", {"$type": "reasoning", "text": "Think first."},
                                 text("Here is a plan."),
                                 {"$type": "usage", "usage": {"inputTokenCount": 10,
                                                              "outputTokenCount": 4}},
                                 {"$type": "error", "message": "quota exceeded",
                                  "errorCode": "429"}, author="Planner")]}],
              run_id="d-errors", test_case_id="trip-1"),
        # a schemaVersion that is not N.N.N, and one missing
        state([{"messages": [msg("assistant", text("ok"))]}], version="v1", run_id="d-badver"),
        state([{"messages": [msg("assistant", text("ok"))]}], version=None, run_id="d-nover"),
        # near-miss: a longer but valid version
        state([{"messages": [msg("assistant", text("ok"))]}], version="10.2.33",
              run_id="d-okver"),
        # a call whose result never came, and a result for no call (and no reply text)
        state([{"messages": [
            msg("assistant", {"$type": "functionCall", "callId": "c1", "name": "search",
                              "arguments": {"q": "x"}}),
            msg("tool", {"$type": "functionResult", "callId": "zz", "result": {"n": 1}})]}],
            run_id="d-unlinked"),
        # a run that crashed before any reply: its absent answer is info, not a contract break
        state([{"messages": [msg("user", text("Plan the trip.")),
                             msg("assistant", {"$type": "error", "message": "crashed"})]}],
              run_id="d-crashed"),
        # malformed parts of the state are named
        state([42, {"messages": "nope"}, {"messages": [msg("assistant", text("fine"))]}],
              run_id="d-malformed"),
        # not a durable document at all
        {"conversation": []},
    ]
    path = write_lines(docs, name="agents.durable.jsonl")
    report = ingest([path], home)
    assert [(f.lines, f.accepted, f.quarantined) for f in report.files] == [(8, 7, 1)]
    runs = {r[0]: r[1:] for r in query(
        "SELECT run_id, agent, status, outcome_error, input_tokens, output_tokens, n_thinking, "
        "test_case_id FROM runs")}
    assert runs["d-errors"] == ("Planner", "error", "quota exceeded", 10, 4, 1, "trip-1")
    assert runs["d-crashed"][1:3] == ("error", "crashed")
    assert query("SELECT text FROM thinking") == [("Think first.",)]
    flags = sorted(query("SELECT run_id, code FROM flags"))
    assert flags == [("d-badver", "schema_version_invalid"),
                     ("d-crashed", "final_response_absent_unfinished"),
                     ("d-malformed", "envelope_malformed"),
                     ("d-nover", "schema_version_invalid"),
                     ("d-unlinked", "final_response_missing"),  # no assistant text at all
                     ("d-unlinked", "tool_call_unanswered"),
                     ("d-unlinked", "tool_result_orphan")]
    detail = query("SELECT detail FROM flags WHERE run_id = 'd-malformed'")[0][0]
    assert "conversationHistory[0] is a number" in detail
    assert query("SELECT error_code, line_number FROM quarantine") == [
        ("unrecognized_record", 8)]


def test_gzipped_document_and_folder_kind(tmp_path: Path, home: Path,
                                          query: Callable[..., Any]) -> None:
    """A .durable.json.gz file is one record too; a bad document is quarantined whole."""
    landing = tmp_path / "landing" / "durable"
    landing.mkdir(parents=True)
    (landing / "a.durable.json.gz").write_bytes(gzip.compress(SAMPLE.read_bytes()))
    (landing / "b.durable.json").write_text(json.dumps({"schemaVersion": "1.0.0"}, indent=2)
                                            + "\n")
    report = ingest([tmp_path / "landing"], home)
    assert sorted((Path(f.source_file).name, f.accepted, f.quarantined)
                  for f in report.files) == [("a.durable.json.gz", 1, 0),
                                             ("b.durable.json", 0, 1)]
    assert query("SELECT count(*) FROM runs") == [(1,)]
    assert query("SELECT line_number, error_code FROM quarantine") == [(1, "unrecognized_record")]
