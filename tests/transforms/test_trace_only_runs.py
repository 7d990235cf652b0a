"""The rules of runs made from traces, one case each: a trace split over files and ingests, a
trace a response line claims, a root naming the run, a log record a night late, an evaluation
without a label, a crashed root, evaluations that disagree. (An agent that sends OpenTelemetry
only, end to end: test_trace_only_report.py.)"""

import json
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from transforms import warehouse
from transforms.ingest import ingest


def _otlp(spans: list[dict[str, Any]] | None = None,
          logs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]}
    if logs is not None:
        return {"resourceLogs": [{"resource": resource, "scopeLogs": [{"logRecords": logs}]}]}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": spans}]}]}


def _attrs(**values: Any) -> list[dict[str, Any]]:
    out = []
    for k, v in values.items():
        key = k.replace("__", ".")
        value = ({"stringValue": v} if isinstance(v, str) else {"doubleValue": v}
                 if isinstance(v, float) else {"intValue": str(v)})
        out.append({"key": key, "value": value})
    return out


T0 = int(datetime(2026, 10, 5, 1, tzinfo=UTC).timestamp() * 1e9)
"""An hour after midnight of the first night, in ns."""


def _span(trace: str, span: str, parent: str | None = None, start_s: float = 0,
          end_s: float = 10, error: str | None = None,
          events: list[dict[str, Any]] | None = None, **attrs: Any) -> dict[str, Any]:
    return {"traceId": trace, "spanId": span, **({"parentSpanId": parent} if parent else {}),
            "name": span, "kind": 1, "startTimeUnixNano": str(T0 + int(start_s * 1e9)),
            "endTimeUnixNano": str(T0 + int(end_s * 1e9)), "attributes": _attrs(**attrs),
            "events": events or [],
            "status": {"code": 2, "message": error} if error else {"code": 1}}


def _agent(trace: str, span: str = "a" * 16, **kw: Any) -> dict[str, Any]:
    return _span(trace, span, gen_ai__operation__name="invoke_agent",
                 gen_ai__agent__name="triage", **kw)


def _chat(trace: str, span: str, parent: str, tokens: int = 1000, **kw: Any) -> dict[str, Any]:
    return _span(trace, span, parent, 1, 2, gen_ai__operation__name="chat",
                 gen_ai__request__model="gpt-4.1", gen_ai__usage__input_tokens=tokens,
                 gen_ai__usage__output_tokens=100, **kw)


def _evaluation(name: str, label: str | None = None, value: float | None = None,
                **where: Any) -> dict[str, Any]:
    attrs: dict[str, Any] = {"gen_ai__evaluation__name": name}
    if label is not None:
        attrs["gen_ai__evaluation__score__label"] = label
    if value is not None:
        attrs["gen_ai__evaluation__score__value"] = value
    return {"eventName": "gen_ai.evaluation.result", "attributes": _attrs(**attrs), **where}


def _event(name: str, label: str | None = None, value: float | None = None) -> dict[str, Any]:
    e = _evaluation(name, label, value)
    return {"name": e["eventName"], "timeUnixNano": str(T0), "attributes": e["attributes"]}


@pytest.fixture
def lake(tmp_path: Path) -> Callable[..., list[tuple[Any, ...]]]:
    """Ingest OTLP records (a file per call, in the named night's folder) into one home, and
    query its warehouse."""
    home = tmp_path / "home"
    n = [0]

    def run(records: list[dict[str, Any]], query: str,
            night: str = "2026-10-05") -> list[tuple[Any, ...]]:
        if records:
            n[0] += 1
            path = tmp_path / "landing" / night / f"part-{n[0]}.otlp.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(r) + "\n" for r in records))
            ingest([path], home)
        con = warehouse.connect(home)
        try:
            return con.execute(query).fetchall()
        finally:
            con.close()

    return run


RUNS = ("SELECT run_id, status, test_case_id, input_tokens, agent_runtime_ms, record_shape "
        "FROM runs ORDER BY run_id")


def test_a_trace_split_over_files_and_ingests_is_one_run(lake: Callable[..., Any]) -> None:
    """The children arrive in one ingest, the root a night later in another: one run, its
    tokens those of both calls, its runtime the root's, its test case the root's."""
    t = "1" * 32
    first = lake([_otlp([_chat(t, "c" * 16, "a" * 16, 700), _chat(t, "d" * 16, "a" * 16, 300)])],
                 RUNS)
    assert first == [(t, "ungraded", None, 1000, 1000.0, "trace")]  # a root-less trace of calls
    assert lake([_otlp([_agent(t, test_case_id="case-9")])], RUNS, night="2026-10-06") == [
        (t, "ungraded", "case-9", 1000, 10_000.0, "trace")]


def test_a_response_line_claims_its_trace(lake: Callable[..., Any], tmp_path: Path) -> None:
    """A response line naming the trace is the run (its outcome, not the trace's evaluations);
    the trace makes no second run, and its evaluation still lands in scores."""
    t = "2" * 32
    line = {"run_id": "r-line", "agent": "triage", "trace_id": t,
            "started_at": "2026-10-05T00:00:00Z", "outcome": {"status": "passed"},
            "response": {"final_response": "done"}}
    path = tmp_path / "landing" / "2026-10-05" / "r.responses.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(line) + "\n")
    ingest([path], tmp_path / "home")
    rows = lake([_otlp([_agent(t, events=[_event("resolution", "fail")]),
                        _chat(t, "c" * 16, "a" * 16)])], RUNS)
    assert rows == [("r-line", "passed", None, 1000, 10_000.0, "envelope")]
    assert lake([], "SELECT run_id, name, verdict, source FROM scores") == [
        ("r-line", "resolution", "fail", "span_event")]


def test_a_root_naming_its_run(lake: Callable[..., Any]) -> None:
    """The run_id attribute on the root only: the run is named by it, and its children's
    tokens count toward it."""
    t = "3" * 32
    rows = lake([_otlp([_agent(t, run_id="nightly-42", events=[_event("ok", "PASSED")]),
                        _chat(t, "c" * 16, "a" * 16, 1234)])], RUNS)
    assert rows == [("nightly-42", "passed", None, 1234, 10_000.0, "trace")]


def test_a_log_record_a_night_late_grades_the_run(lake: Callable[..., Any]) -> None:
    """The evaluation arrives as a log record in the next night's file, with its time on the
    next day: the run goes from ungraded to failed, with the explanation."""
    t = "4" * 32
    assert lake([_otlp([_agent(t), _chat(t, "c" * 16, "a" * 16)])],
                "SELECT status FROM runs") == [("ungraded",)]
    late = _evaluation("safety", "Fail", 0.0, traceId=t, spanId="a" * 16,
                       timeUnixNano=str(T0 + 20 * 3600 * 10**9))
    late["attributes"] += _attrs(gen_ai__evaluation__explanation="leaked a key")
    rows = lake([_otlp(logs=[late, {"timeUnixNano": str(T0), "body": {"stringValue": "hi"}}])],
                "SELECT status, outcome_explanation FROM runs", night="2026-10-06")
    assert rows == [("failed", "safety: leaked a key")]
    assert lake([], "SELECT run_id, day, verdict, source FROM scores") == [
        (t, date(2026, 10, 5), "fail", "log_record")]
    assert lake([], "SELECT code, detail FROM flags") == [
        ("log_records_skipped", "1 of the line's 2 log records are not "
                                "gen_ai.evaluation.result events; not read")]


def test_a_log_record_by_response_id(lake: Callable[..., Any]) -> None:
    """A log record without trace context finds its run through gen_ai.response.id."""
    t = "5" * 32
    record = {"timeUnixNano": str(T0), "eventName": "gen_ai.evaluation.result",
              "attributes": _attrs(gen_ai__evaluation__name="judge",
                                   gen_ai__evaluation__score__label="correct",
                                   gen_ai__response__id="chatcmpl-7")}
    rows = lake([_otlp([_agent(t), _chat(t, "c" * 16, "a" * 16,
                                         gen_ai__response__id="chatcmpl-7")]),
                 _otlp(logs=[record])],
                "SELECT r.status, s.response_id FROM runs r JOIN scores s USING (run_id)")
    assert rows == [("passed", "chatcmpl-7")]


def test_an_evaluation_without_a_label_decides_nothing(lake: Callable[..., Any]) -> None:
    t = "6" * 32
    rows = lake([_otlp([_agent(t, events=[_event("helpfulness", value=4.0)])])],
                "SELECT r.status, s.value, s.label, s.verdict FROM runs r JOIN scores s "
                "USING (run_id)")
    assert rows == [("ungraded", 4.0, None, None)]


def test_a_crashed_root_is_an_error_whatever_its_evaluations(lake: Callable[..., Any]) -> None:
    t = "7" * 32
    rows = lake([_otlp([_agent(t, error="RateLimitError: 429", events=[_event("r", "pass")])])],
                "SELECT status, outcome_error FROM runs")
    assert rows == [("error", "RateLimitError: 429")]


def test_evaluations_that_disagree_fail_the_run(lake: Callable[..., Any]) -> None:
    """One pass, one fail: failed, with the failing one as the explanation; two passes and a
    number: passed."""
    t, u = "8" * 32, "9" * 32
    rows = lake([_otlp([_agent(t, events=[_event("style", "pass"), _event("facts", "incorrect")]),
                        _agent(u, "b" * 16, events=[_event("style", "True"),
                                                    _event("facts", "correct"),
                                                    _event("tone", value=2.0)])])],
                "SELECT run_id, status, outcome_explanation FROM runs ORDER BY 1")
    assert rows == [(t, "failed", "facts: incorrect"), (u, "passed", None)]


def test_imported_scores_grade_their_runs(tmp_path: Path) -> None:
    """A Langfuse trace's scores become evaluation events of its spans: the trace is a run of
    its own, passed by its boolean score; an Inspect log's scorers land in scores beside the
    run's own outcome."""
    from typer.testing import CliRunner

    from transforms.cli import app

    fixtures = Path(__file__).parents[1] / "fixtures" / "importers"
    landing = tmp_path / "landing" / "2025-03-04"
    for fmt, src in (("langfuse", "langfuse/input/trace-support-agent.json"),
                     ("inspect", "inspect/input")):
        res = CliRunner().invoke(app, ["import", fmt, str(fixtures / src), "--out",
                                       str(landing)])
        assert res.exit_code == 0, res.output
    home = tmp_path / "home"
    ingest([tmp_path / "landing"], home)
    con = warehouse.connect(home)
    try:
        lf = con.execute("SELECT status, record_shape, n_flags >= 0 FROM v_runs "
                         "WHERE trace_id = '7f3c2a91d4e84b0fa6c15e2b9d8a4f10'").fetchall()
        lf_scores = con.execute(
            "SELECT name, value, label, verdict, explanation, source FROM scores "
            "WHERE trace_id = '7f3c2a91d4e84b0fa6c15e2b9d8a4f10' ORDER BY name").fetchall()
        inspect = con.execute(
            "SELECT r.status, s.name, s.label, s.value FROM runs r JOIN scores s USING (run_id) "
            "WHERE r.run_id = 'Ws6YcM1pRt8KnB3xLh7QvD'").fetchall()
    finally:
        con.close()
    assert lf == [("passed", "trace", True)]
    assert lf_scores == [
        ("correctness", 1.0, "True", "pass", "the new address is confirmed", "span_event"),
        ("helpfulness", 0.8, None, None, None, "span_event")]
    assert inspect == [("failed", "model_graded_qa", "P", 0.5)]


def test_a_setting_names_the_evaluations_that_decide(tmp_path: Path) -> None:
    """tone fails, correctness passes: failed by default; passed when only correctness
    decides; failed again when the next ingest names no evaluation (the lake follows the last
    ingest's setting, as the Spark script does)."""
    from transforms.errors import InputError
    from transforms.warehouse.scripts import script

    t = "a" * 32
    path = tmp_path / "landing" / "2026-10-05" / "t.otlp.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(_otlp([_agent(t, events=[_event("tone", "fail"),
                                                        _event("correctness", "pass")])])) + "\n")
    home = tmp_path / "home"

    def status() -> str:
        con = warehouse.connect(home)
        try:
            return str(con.execute("SELECT status FROM runs").fetchone()[0])
        finally:
            con.close()

    ingest([path], home)
    assert status() == "failed"
    ingest([path], home, deciding_evaluations="correctness, factuality")
    assert status() == "passed"
    assert "'correctness'" in script(home, "spark")
    ingest([path], home)
    assert status() == "failed"
    with pytest.raises(InputError, match="empty evaluation"):
        ingest([path], home, deciding_evaluations="correctness,,tone")


def test_a_damaged_protobuf_line_is_quarantined(lake: Callable[..., Any], tmp_path: Path) -> None:
    """A landing line holding a protobuf request that does not decode (cut base64, bytes that
    are not a request, an unknown signal) goes to quarantine with the reason."""
    lake([{"otlpProtobuf": "not base64!", "signal": "traces"},
          {"otlpProtobuf": "AAAA/w==", "signal": "traces"},
          {"otlpProtobuf": "", "signal": "metrics"}], "SELECT 1")
    rows = lake([], "SELECT line_number, error_code, error_message FROM quarantine ORDER BY 1")
    assert [(n, code) for n, code, _ in rows] == [(1, "unrecognized_record")] * 1 + [
        (2, "unrecognized_record"), (3, "unrecognized_record")]
    assert "otlpProtobuf is not base64" in rows[0][2]
    assert "not an OTLP traces export request" in rows[1][2]
    assert "signal 'metrics' is not traces or logs" in rows[2][2]


def test_a_log_record_out_of_the_calendar_keeps_its_score(lake: Callable[..., Any]) -> None:
    """A record dated in the year 9999 (or not a time at all) is scored on its file's day,
    flagged evaluation_malformed, and the lake stays readable by the next ingest."""
    far = _evaluation("judge", "pass", traceId="b" * 32, spanId="a" * 16,
                      timeUnixNano=str(253402214400 * 10**9))
    odd = _evaluation("tone", value=3.0, timeUnixNano="soon")
    assert lake([_otlp(logs=[far, odd])], "SELECT name, day FROM scores ORDER BY 1") == [
        ("judge", date(2026, 10, 5)), ("tone", date(2026, 10, 5))]
    flags = lake([_otlp([_agent("b" * 32)])], "SELECT code, detail FROM flags ORDER BY 2")
    assert [c for c, _ in flags] == ["evaluation_malformed"] * 2
    assert all("timeUnixNano" in detail for _, detail in flags)
    assert lake([], "SELECT status FROM runs") == [("passed",)]


def test_one_run_however_its_roots_and_records_repeat(lake: Callable[..., Any],
                                                      tmp_path: Path) -> None:
    """A retried run (two traces whose roots carry one run_id) is one run, its last attempt;
    two agent spans without a start are one root; a log record delivered twice is one score;
    the trace of a response line that a later line replaced is no run; a failed run whose root
    has no status code says why."""
    first, second, unstarted = "c" * 32, "d" * 32, "e" * 32
    retry = _agent(second, "b" * 16, start_s=60, end_s=70, run_id="R1",
                   events=[_event("judge", "pass")])
    rows = lake([_otlp([_agent(first, run_id="R1", error="boom"), retry,
                        {**_agent(unstarted), "startTimeUnixNano": None},
                        {**_agent(unstarted, "b" * 16), "startTimeUnixNano": None}])],
                "SELECT run_id, trace_id, status FROM runs ORDER BY 1")
    assert rows == [("R1", second, "passed"), (unstarted, unstarted, "ungraded")]
    t = "f" * 32
    record = _evaluation("facts", "fail", traceId=t, spanId="a" * 16, timeUnixNano=str(T0))
    root = _agent(t)
    del root["status"]
    lake([_otlp([root]), _otlp(logs=[record]), _otlp(logs=[record])], "SELECT 1")
    assert lake([], f"SELECT status, outcome_explanation FROM runs WHERE trace_id = '{t}'") == [
        ("failed", "facts: fail")]
    assert lake([], f"SELECT count(*) FROM scores WHERE trace_id = '{t}'") == [(1,)]
    # A response line replaced by a later one: its trace (a crash) is no run of its own.
    old, new = "1" * 32, "2" * 32
    path = tmp_path / "landing" / "2026-10-05" / "r.responses.jsonl"
    path.write_text("".join(json.dumps({
        "run_id": "R2", "agent": "triage", "trace_id": tid,
        "started_at": "2026-10-05T00:00:00Z", "outcome": {"status": "passed"},
        "response": {"final_response": "done"}}) + "\n" for tid in (old, new)))
    ingest([path], tmp_path / "home")
    assert lake([_otlp([_agent(old, error="crash")])],
                f"SELECT count(*) FROM runs WHERE trace_id = '{old}'") == [(0,)]


def test_a_line_named_by_any_span_claims_the_trace(lake: Callable[..., Any],
                                                   tmp_path: Path) -> None:
    """A trace whose spans name two runs, one of them a response line's (not the least id): the
    line claims the trace, which makes no run of its own."""
    t = "9a" * 16
    path = tmp_path / "landing" / "2026-10-05" / "r.responses.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"run_id": "zz-line", "agent": "triage",
                                "started_at": "2026-10-05T00:00:00Z",
                                "outcome": {"status": "passed"},
                                "response": {"final_response": "done"}}) + "\n")
    ingest([path], tmp_path / "home")
    rows = lake([_otlp([_agent(t), _chat(t, "c" * 16, "a" * 16, run_id="zz-line"),
                        _chat(t, "d" * 16, "a" * 16, run_id="aa-other")])],
                "SELECT run_id, record_shape FROM runs ORDER BY 1")
    assert rows == [("zz-line", "envelope")]
