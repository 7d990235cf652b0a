"""Writes the sample landing folder: a week of nightly agent test runs, with realistic flaws.

    python data_samples/generate.py        # rewrites data_samples/YYYY-MM-DD/*.jsonl[.gz]

Deterministic: the same files every time. Four agents (one under the rich+strict response
contract), three models, both tool-call shapes, thinking blocks, content parts, the runs' spans
(LLM calls with tokens and prices, some partial or cut at max_tokens, a few runs whose own totals
disagree with their spans; research-agent's as OTLP/JSON in the OTel GenAI conventions), a
planted pass rate drop for travel-agent on the last day, an agent that sends OpenTelemetry only
(triage-agent: traces with evaluation events and log records, a planted drop and a crash on the
last day), and a handful of bad lines (a cut line,
a non-object, invalid UTF-8, NaN, a repeated run_id, a bare body without run_id), a BOM + CRLF
file and a gzip file.
"""

import gzip
import io
import json
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import random  # noqa: E402

from devtools.synth import dumps, make_spans, runs  # noqa: E402
from devtools.synth_otlp import TraceRun, to_otlp, trace_only_night  # noqa: E402

HERE = Path(__file__).resolve().parent
DAYS = [date(2026, 11, 14) + timedelta(days=i) for i in range(7)]
PER_AGENT_PER_DAY = 12
OTEL_AGENT = "research-agent"
"""The agent whose tracing writes OTLP/JSON with the GenAI conventions instead of span JSONL."""
TRACE_ONLY_AGENT = "triage-agent"
"""The agent that sends OpenTelemetry only: traces and evaluation events, no response line."""
TRACE_ONLY_CASES = 12
PLANTED_FAILURES = range(7)
"""The triage cases that fail on the last night after passing all week."""
PLANTED_CRASH = 11
"""The triage case whose root span fails on the last night."""


def triage_night(rng: random.Random, n: int, day: date) -> list[bytes]:
    """triage-agent's OTLP records of night `n`: twelve cases, each failing now and then over the
    week; on the last night cases 0 to 6 fail and case 11 crashes. Half the runs set run_id on
    their root span, half are known by their trace id."""
    last = n == len(DAYS) - 1
    plan = [TraceRun(
        case=f"triage/case-{c:02d}",
        passed=not (last and c in PLANTED_FAILURES) and (last or rng.random() > 0.06),
        crashed=last and c == PLANTED_CRASH,
        run_id=f"triage-{day.isoformat()}-{c:02d}" if c % 2 == 0 else None)
        for c in range(TRACE_ONLY_CASES)]
    return [dumps(r).encode() for r in trace_only_night(rng, TRACE_ONLY_AGENT, "gpt-4.1",
                                                          day, plan)]


def main() -> None:
    files: dict[Path, list[bytes]] = {}
    rng = random.Random(8)
    for day, agent, line in runs(seed=7, days=DAYS, per_agent_per_day=PER_AGENT_PER_DAY):
        path = HERE / day.isoformat() / f"{agent}.responses.jsonl"
        files.setdefault(path, []).append(dumps(line).encode())
        # Spans of the same runs, as the agents' tracing SDK writes them: one bulk line per
        # run, or one line per span.
        spans = make_spans(rng, line)
        bulk = rng.random() < 0.5
        if agent == OTEL_AGENT:  # an OpenTelemetry SDK: the collector's OTLP/JSON records
            otlp_path = HERE / day.isoformat() / f"{agent}.otlp.jsonl"
            files.setdefault(otlp_path, []).append(dumps(to_otlp(spans)).encode())
            continue
        span_path = HERE / day.isoformat() / f"{agent}.spans.jsonl"
        span_lines = [{"spans": spans}] if bulk else spans
        files.setdefault(span_path, []).extend(dumps(s).encode() for s in span_lines)
    last = HERE / DAYS[-1].isoformat() / "support-bot.responses.jsonl"
    good = files[last]
    files[last] = good[:3] + [
        good[3][: len(good[3]) // 2],                       # a line cut mid-write
        b"",                                                # blank lines
        b"   ",
        b'["not", "an", "object"]',
        b'{"run_id": "support-bot-bad-utf8", "response": {"final_response": "caf\xe9"}}',
        b'{"run_id": "support-bot-nan", "response": {"final_response": "x", '
        b'"metadata": {"total_input_tokens": NaN}}}',
        good[0],                                            # the same run delivered twice
        b'{"final_response": "Sorry, I could not finish.", "messages": []}',
    ] + good[4:]
    extra = random.Random(9)
    for n, day in enumerate(DAYS):
        files[HERE / day.isoformat() / "booking-assistant.responses.jsonl"] = [
            dumps(t).encode() for t in sessions(extra, day, n)]
        files[HERE / day.isoformat() / "orchestrator.durable.json"] = [durable_state(extra, day)]
        files[HERE / day.isoformat() / f"{TRACE_ONLY_AGENT}.otlp.jsonl"] = triage_night(
            random.Random(10 + n), n, day)
    for path in sorted(files):
        path.parent.mkdir(parents=True, exist_ok=True)
        data = b"\n".join(files[path]) + b"\n"
        if path.parent.name == DAYS[-2].isoformat() and "travel-agent" in path.name:
            data = b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n")
        if path.parent.name == DAYS[-3].isoformat() and "research-agent" in path.name:
            buf = io.BytesIO()
            with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
                gz.write(data)
            path = path.with_name(path.name + ".gz")
            data = buf.getvalue()
        path.write_bytes(data)
        print(f"wrote {path.relative_to(HERE.parent)} ({len(data):,} bytes)")


ROUTES = [("SFO", "Seattle"), ("JFK", "Madrid"), ("LHR", "Frankfurt"), ("CDG", "Chicago")]


def sessions(rng: random.Random, day: date, n_day: int) -> list[dict[str, Any]]:
    """Multi-turn booking sessions under the rich+strict contract: one line per turn, the reply
    in `message`, the outcome on the last turn, `session_done` when it ends. On the fourth day
    a turn returns only the history (a contract violation); on the fifth one turn answers with
    the lenient `final_response` alias; the last session of each day is left unfinished."""
    turns: list[dict[str, Any]] = []
    for k in range(3):
        origin, city = ROUTES[(n_day + k) % len(ROUTES)]
        sid = f"booking-{day.isoformat()}-{k}"
        asks = [f"I need a flight from {origin} to {city}.", "Next Friday, morning please.",
                "Economy, one passenger.", "Yes, book it."]
        replies = [f"Sure. Which day would you like to fly to {city}?",
                   "Morning flights on Friday: 07:10 and 09:45. Which class?",
                   "The 07:10 in economy is 312.40 EUR. Shall I book it?",
                   f"Booked: {origin} to {city}, Friday 07:10, seat 14C. "
                   f"Confirmation BK{k}{n_day}7."]
        n_turns = 2 + (k + n_day) % 3
        done = k < 2
        history: list[dict[str, Any]] = []
        started = datetime(day.year, day.month, day.day, 8 + k, 0, tzinfo=UTC)
        for t in range(n_turns):
            last = t == n_turns - 1
            reply = replies[3] if last and done else replies[min(t, 2)]
            history = history + [{"role": "user", "content": asks[min(t, 3)]}]
            msgs = history[-2:] + [{"role": "assistant", "content": reply}]
            if t == 1:
                call = {"id": f"call_{sid}_{t}", "name": "search_direct_flight",
                        "arguments": {"origin": origin, "destination": city[:3].upper(),
                                      "date": "2026-12-04"}}
                msgs = history[-1:] + [
                    {"role": "assistant", "content": None, "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": call["id"],
                     "content": '{"flights": ["07:10", "09:45"]}'},
                    {"role": "assistant", "content": reply}]
            body: dict[str, Any] = {"message": reply, "messages": msgs, "metadata": {
                "model": "gpt-4o-mini", "total_input_tokens": 900 + 400 * t + rng.randint(0, 200),
                "total_output_tokens": 40 + rng.randint(0, 60),
                "agent_runtime_ms": 1200 + rng.randint(0, 2500)}}
            if n_day == 3 and k == 0 and t == 1:
                body["messages"] = history[-1:]  # only the history: no reply for this turn
            if n_day == 4 and k == 1 and t == 0:
                body["final_response"] = body.pop("message")
            if last and done:
                body["session_done"] = True
            line: dict[str, Any] = {
                "run_id": f"{sid}-t{t}", "agent": "booking-assistant",
                "test_case_id": f"booking-assistant/case-{k}", "session_id": sid,
                "turn_index": t, "batch_id": f"{day.isoformat()}-nightly",
                "started_at": (started + timedelta(minutes=t)).isoformat().replace("+00:00", "Z"),
                "response_contract": {"response_mode": "rich", "strictness": "strict"},
                "response": body}
            if last and done:
                line["outcome"] = {"status": "passed" if rng.random() < 0.8 else "failed"}
            turns.append(line)
            history = history + [{"role": "assistant", "content": reply}]
    return turns


def durable_state(rng: random.Random, day: date) -> bytes:
    """One durable agent entity state document (pretty-printed, as the host stores it): an
    orchestrator that starts a workflow by a function call, reasons, and reports back."""
    at = datetime(day.year, day.month, day.day, 6, 30, tzinfo=UTC)

    def ts(minutes: float) -> str:
        return (at + timedelta(minutes=minutes)).isoformat()

    product = rng.choice(["Goldbrew Coffee", "Nimbus Kettle", "Atlas Backpack"])
    call_id = f"call_{rng.randrange(16 ** 12):012x}"
    doc = {"schemaVersion": "1.0.0", "data": {"conversationHistory": [
        {"$type": "request", "responseType": "text", "correlationId": f"{day:%Y%m%d}a",
         "createdAt": ts(0), "messages": [{"role": "user", "contents": [
             {"$type": "text", "text": f"Start the documentation workflow for '{product}'."}]}]},
        {"$type": "response", "correlationId": f"{day:%Y%m%d}a", "createdAt": ts(0.1),
         "usage": {"inputTokenCount": 580 + rng.randint(0, 40), "outputTokenCount": 60,
                   "totalTokenCount": 640},
         "messages": [
             {"authorName": "OrchestratorAgent", "role": "assistant", "createdAt": ts(0.05),
              "contents": [{"$type": "reasoning", "text": "The user wants the workflow "
                            "started; call StartDocumentGeneration with the product."},
                           {"$type": "functionCall", "callId": call_id,
                            "name": "StartDocumentGeneration",
                            "arguments": {"productName": product}}]},
             {"authorName": "OrchestratorAgent", "role": "tool", "createdAt": ts(0.1),
              "contents": [{"$type": "functionResult", "callId": call_id,
                            "result": f"{rng.randrange(16 ** 32):032x}"}]},
             {"authorName": "OrchestratorAgent", "role": "assistant", "createdAt": ts(0.1),
              "contents": [{"$type": "text", "text": f"The documentation workflow for "
                            f"'{product}' has started. I will report its progress."}]}]},
        {"$type": "request", "responseType": "text", "correlationId": f"{day:%Y%m%d}b",
         "createdAt": ts(1), "messages": [{"role": "system", "contents": [
             {"$type": "text", "text": "Tell the user you are gathering information."}]}]},
        {"$type": "response", "correlationId": f"{day:%Y%m%d}b", "createdAt": ts(1.1),
         "usage": {"inputTokenCount": 390, "outputTokenCount": 45, "totalTokenCount": 435},
         "messages": [{"authorName": "OrchestratorAgent", "role": "assistant",
                       "createdAt": ts(1.1), "contents": [{"$type": "text", "text":
                       f"I am gathering information for the '{product}' documentation."}]}]},
    ]}}
    return json.dumps(doc, indent=2, ensure_ascii=False).encode()


if __name__ == "__main__":
    main()
