"""An agent that sends OpenTelemetry only (spans, evaluation span events and log records, through
the real SDK and `runlake serve`) gets runs, outcomes, scores and the nightly report."""

import os
import subprocess
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.transforms.receiving import RUNLAKE, Served
from transforms import warehouse

NIGHTS = [date(2026, 10, 5) + timedelta(days=i) for i in range(7)]
CASES = 8
FAILING = range(5)
"""The cases whose evaluation fails on the last night, after passing every night before."""
CRASHING = 7
"""The case whose agent span fails on the last night."""
PRICE_IN, PRICE_OUT = 2.00, 8.00
"""gpt-4.1's USD per million tokens (its price page, as read for the shipped table)."""



def _ns(night: date, case: int, seconds: float = 0.0) -> int:
    start = datetime(night.year, night.month, night.day, 1, tzinfo=UTC) + timedelta(
        minutes=5 * case, seconds=seconds)
    return int(start.timestamp() * 1e9)


def _send_nights(url: str) -> dict[str, Any]:
    """Send every night's runs through the OpenTelemetry SDK (tracer, span events, logs API);
    what a run's tokens and status should be, worked out here."""
    from opentelemetry import trace
    from opentelemetry._logs import LogRecord
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.trace import Status, StatusCode

    base = url.rsplit("/v1/traces", 1)[0]
    resource = Resource.create({"service.name": "triage-service"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
        endpoint=f"{base}/v1/traces")))
    log_provider = LoggerProvider(resource=resource)
    log_provider.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter(
        endpoint=f"{base}/v1/logs")))
    tracer = tracer_provider.get_tracer("triage")
    evals = log_provider.get_logger("triage-evals")
    expected: dict[str, Any] = {"tokens": {}, "status": {}}
    for night in NIGHTS:
        last = night == NIGHTS[-1]
        for case in range(CASES):
            passed = not (last and case in FAILING)
            crashed = last and case == CRASHING
            root = tracer.start_span("invoke_agent triage-agent", start_time=_ns(night, case),
                                     attributes={"gen_ai.operation.name": "invoke_agent",
                                                 "gen_ai.agent.name": "triage-agent",
                                                 "test_case_id": f"case-{case}"})
            context = trace.set_span_in_context(root)
            tokens_in, tokens_out = 1000 + 10 * case, 100 + case
            chat = tracer.start_span("chat gpt-4.1", context=context,
                                     start_time=_ns(night, case, 1),
                                     attributes={"gen_ai.operation.name": "chat",
                                                 "gen_ai.provider.name": "openai",
                                                 "gen_ai.request.model": "gpt-4.1",
                                                 "gen_ai.usage.input_tokens": tokens_in,
                                                 "gen_ai.usage.output_tokens": tokens_out})
            chat.end(end_time=_ns(night, case, 3))
            label = "pass" if passed else "fail"
            if crashed:
                root.set_status(Status(StatusCode.ERROR, "ToolTimeout: the ticket API timed out"))
            elif case % 2:  # as an event on the agent's span
                root.add_event("gen_ai.evaluation.result", timestamp=_ns(night, case, 4),
                               attributes={"gen_ai.evaluation.name": "resolution",
                                           "gen_ai.evaluation.score.label": label,
                                           "gen_ai.evaluation.score.value": float(passed)})
            else:  # as a log record in the agent span's context
                evals.emit(LogRecord(timestamp=_ns(night, case, 4), context=context,
                                     event_name="gen_ai.evaluation.result",
                                     attributes={"gen_ai.evaluation.name": "resolution",
                                                 "gen_ai.evaluation.score.label": label,
                                                 "gen_ai.evaluation.explanation":
                                                     f"case {case} {label}ed"}))
            root.end(end_time=_ns(night, case, 5))
            expected["tokens"][(night, case)] = (tokens_in, tokens_out)
            expected["status"][(night, case)] = "error" if crashed else (
                "passed" if passed else "failed")
    assert tracer_provider.force_flush(60_000) and log_provider.force_flush(60_000)
    tracer_provider.shutdown()
    log_provider.shutdown()
    return expected


@pytest.mark.slow
def test_an_agent_that_sends_only_opentelemetry_gets_its_report(tmp_path: Path) -> None:
    """Seven nights of SDK traces, no response line: every trace is a run with its tokens,
    cost, test case and status; the report of the last night names the planted regression and
    the crash, with the pass rates worked out here."""
    served = Served(tmp_path / "landing")
    try:
        expected = _send_nights(served.url)
    finally:
        said = served.stop()
    assert "log record" in said, said
    home = tmp_path / "home"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("RUNLAKE_")},
           "RUNLAKE_HOME": str(home)}
    done = subprocess.run([str(RUNLAKE), "ingest", str(tmp_path / "landing")], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    con = warehouse.connect(home)
    rows = con.execute("SELECT day, test_case_id, status, input_tokens, output_tokens, "
                       "cost_usd, agent, model, record_shape, outcome_error FROM runs").fetchall()
    con.close()
    assert len(rows) == len(NIGHTS) * CASES
    for day, case_id, status, tin, tout, cost, agent, model, shape, error in rows:
        key = (day, int(case_id.removeprefix("case-")))
        assert (status, tin, tout) == (expected["status"][key], *expected["tokens"][key])
        assert cost == pytest.approx((tin * PRICE_IN + tout * PRICE_OUT) / 1e6)
        assert (agent, model, shape) == ("triage-agent", "gpt-4.1", "trace")
        assert (error is not None) == (status == "error")
    # The report of the last night, against the nights before (independent figures: every
    # baseline run passed; last night 2 of 7 graded runs passed, 1 crashed).
    graded_last = CASES - 1
    passed_last = graded_last - len(FAILING)
    report = subprocess.run([str(RUNLAKE), "report", "--day", NIGHTS[-1].isoformat()], env=env,
                            capture_output=True, text=True, timeout=600)
    assert report.returncode == 0, report.stdout + report.stderr
    out = report.stdout
    assert f"{NIGHTS[-1]}: {CASES} runs against {NIGHTS[0]} to {NIGHTS[-2]}" in out, out
    line = next(x for x in out.splitlines() if "REGRESSION triage-agent / gpt-4.1" in x)
    # One crash in the last night's 8 runs after none in 48: Fisher's exact p = 8 / 56, named
    # below and no significant rise.
    assert "crashed" not in line, out
    assert f"pass rate 100% -> {round(100 * passed_last / graded_last)}%" in line, out
    assert "CRASHED triage-agent / gpt-4.1: 1 run (ToolTimeout: the ticket API timed out)" \
        in out, out
