"""Realistic synthetic agent runs: the committed samples, the benchmarks and the tests use them.

Deterministic for a seed. Runs look like what test platforms write: an envelope around the
agent's response, transcripts with both tool-call shapes, string and object arguments, thinking
blocks, content parts, token and runtime metadata, unknown metadata keys, and outcomes whose
pass rate depends on agent, model and day (so a planted drop is visible).
"""

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any


@dataclass(frozen=True)
class AgentProfile:
    name: str
    models: tuple[str, ...]
    tools: tuple[str, ...]
    nested_calls: bool
    strict: bool = False
    pass_rate: float = 0.8
    thinking: bool = False
    parts: bool = False
    long_answers: bool = False
    drop_on: dict[date, float] = field(default_factory=dict)


TOOLS_SUPPORT = ("get_order", "refund_order", "lookup_customer", "search_kb", "escalate")
TOOLS_TRAVEL = ("search_direct_flight", "get_reservation_details", "book_reservation",
                "cancel_reservation", "calculate")
TOOLS_RESEARCH = ("web_search", "fetch_page", "summarize")

USER_ASKS = [
    "I was charged twice for order #{n}. Can you refund the duplicate charge?",
    "Where is my package? The order number is {n}.",
    "Please change my flight {n} to the next morning, economy if possible.",
    "Cancel reservation {n}, I can't travel anymore.",
    "What's the baggage allowance on booking {n}? Also, can I add a seat upgrade?",
    "Summarize the latest findings on battery recycling for report {n}.",
    "Mi pedido {n} llegó dañado, ¿pueden reemplazarlo?",
    "Bestellung {n} ist nicht angekommen — können Sie das prüfen?",
]
ANSWERS = [
    "I've issued a refund of ${amt} for the duplicate charge on order #{n}. It should appear "
    "on your statement within 3–5 business days.",
    "Your package for order {n} is in transit and is expected to arrive on Thursday.",
    "Done: reservation {n} now departs at 08:15 tomorrow in economy; the fare difference was "
    "${amt}.",
    "Reservation {n} is cancelled and ${amt} will be refunded to the original payment method.",
    "Booking {n} includes one checked bag up to 23 kg. A seat upgrade costs ${amt}.",
    "Here is a summary of the findings for report {n}: recovery rates for lithium reached 95% "
    "in pilot plants, while costs remain the main barrier.",
    "He solicitado un reemplazo para el pedido {n}; recibirá un correo con el seguimiento.",
    "Ich habe Bestellung {n} geprüft: Sie wird morgen zugestellt. 📦",
]


def default_agents(days: list[date]) -> list[AgentProfile]:
    last = days[-1] if days else date(2026, 11, 20)
    return [
        AgentProfile("support-bot", ("claude-sonnet-4-5", "gpt-4.1"), TOOLS_SUPPORT,
                     nested_calls=False, pass_rate=0.82, thinking=True),
        AgentProfile("travel-agent", ("gpt-4o",), TOOLS_TRAVEL, nested_calls=True,
                     pass_rate=0.7, drop_on={last: 0.35}),
        AgentProfile("refund-agent", ("claude-sonnet-4-5",), TOOLS_SUPPORT, nested_calls=False,
                     strict=True, pass_rate=0.9),
        AgentProfile("research-agent", ("gemini-2.5-flash",), TOOLS_RESEARCH, nested_calls=True,
                     pass_rate=0.6, parts=True, long_answers=True, thinking=True),
    ]


EVENTS = [
    "order {n} moved to the regional sorting centre, parcel {k} of the shipment scanned",
    "customer contacted support about order {n} by e-mail; ticket {k} opened",
    "payment for {n} captured in two parts; the second capture was reversed {k} hours later",
    "policy check: refunds over the threshold for {n} need a supervisor (rule {k})",
    "search result {k}: lithium recovery above 90% reported by pilot plants for batch {n}",
]


def _plan(rng: random.Random, tool: str, n: int) -> str:
    """What a long-winded agent says before a call: about 500 bytes."""
    return (f"To resolve request {n} I will call {tool} next. " + rng.choice([
        "The policy says to confirm the customer's identity and the order's state before any "
        "refund, and to explain each step. ",
        "The previous result did not settle the question, so I will look again with the "
        "identifiers the customer gave and compare the two answers. ",
        "Before booking or cancelling anything I need the full reservation, the fare rules and "
        "whether a change fee applies to this passenger. "]) * 3).strip()


def _args(rng: random.Random, tool: str, n: int) -> dict[str, Any]:
    if tool in ("get_order", "refund_order"):
        return {"order_id": str(n), "reason": rng.choice(["duplicate", "damaged", "late"])}
    if tool in ("search_direct_flight",):
        return {"origin": rng.choice(["SFO", "JFK", "LHR", "CDG"]),
                "destination": rng.choice(["SEA", "ORD", "MAD", "FRA"]),
                "date": "2026-12-0" + str(rng.randint(1, 9))}
    if tool in ("get_reservation_details", "cancel_reservation", "book_reservation"):
        return {"reservation_id": f"R{n:06d}", "passengers": [
            {"first_name": "Ana", "last_name": "García"}][: rng.randint(0, 1)]}
    if tool == "web_search":
        return {"query": "battery recycling lithium recovery 2026", "top_k": rng.randint(3, 10)}
    return {"id": n, "note": "customer asked for an update"}


def _result(rng: random.Random, tool: str, n: int, long: bool = False) -> str:
    body: dict[str, Any] = {
        "status": rng.choice(["shipped", "delivered", "pending", "ok"]), "id": n,
        "items": [{"sku": f"SKU-{rng.randint(100, 999)}", "qty": rng.randint(1, 3)}
                  for _ in range(rng.randint(1, 4))]}
    if long:  # a page of history, policy or search results: about 1.3 KB
        body["history"] = [{"at": f"2026-11-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}"
                                  f":{rng.randint(0, 59):02d}:00Z",
                            "event": rng.choice(EVENTS).format(n=n, k=rng.randint(1, 99))}
                           for _ in range(rng.randint(8, 16))]
    elif tool in ("web_search", "fetch_page"):
        body["text"] = "Lithium-ion recycling recovered 95% of lithium in 2026 pilots. " * \
            rng.randint(2, 30)
    return json.dumps(body, ensure_ascii=False)


LONG_STEPS = 7
"""Tool steps of a long transcript (`make_run(..., long=True)`): with the system prompt, the
ask and the answer, 16 messages, about 19 KB a line, as agents that plan, call and read at
length write them. Memory depends on such row widths, not only on bytes."""


def make_run(rng: random.Random, agent: AgentProfile, day: date, index: int,
             case: int, long: bool = False) -> dict[str, Any]:
    """One envelope line for `agent` on `day` (`long`: a long transcript, LONG_STEPS steps
    that each explain the call and read a long result)."""
    model = agent.models[index % len(agent.models)]
    n = rng.randint(1000, 99999)
    started = datetime(day.year, day.month, day.day, 1, 0, tzinfo=UTC) + timedelta(
        seconds=rng.randint(0, 20 * 3600))
    runtime_ms = int(rng.lognormvariate(8.6, 0.5))
    ask = rng.choice(USER_ASKS).format(n=n)
    answer = rng.choice(ANSWERS).format(n=n, amt=f"{rng.randint(5, 400)}.{rng.randint(0, 99):02d}")
    msgs: list[dict[str, Any]] = [
        {"role": "system", "content": f"You are {agent.name}, a careful assistant. Follow the "
                                      "policy, confirm before acting, and use tools."},
        {"role": "user", "content": ask},
    ]
    for step in range(LONG_STEPS if long else rng.randint(0, 4)):
        tool = rng.choice(agent.tools)
        cid = f"call_{n}_{step}"
        args = _args(rng, tool, n)
        if agent.nested_calls:
            call: dict[str, Any] = {"id": cid, "type": "function",
                                    "function": {"name": tool, "arguments": json.dumps(args)}}
        else:
            call = {"id": cid, "name": tool, "arguments": args}
        flaw = rng.random()
        if flaw < 0.02:  # a client that cut the arguments mid-string
            if agent.nested_calls:
                call["function"]["arguments"] = call["function"]["arguments"][:-3]
            else:
                call["arguments"] = json.dumps(args)[:-3]
        elif flaw < 0.03:  # a call the agent gave up on: no tool message answers it
            msgs.append({"role": "assistant", "content": None, "tool_calls": [call]})
            continue
        msg: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        if long:
            msg["content"] = _plan(rng, tool, n)
        if agent.thinking and rng.random() < 0.6:
            msg["thinking"] = [{"type": "thinking", "text": f"The user needs {tool} first; "
                                                            "check the policy before acting."}]
        msgs.append(msg)
        msgs.append({"role": "tool", "tool_call_id": cid, "name": tool,
                     "content": _result(rng, tool, n, long)})
    final = answer
    if agent.long_answers and (day.toordinal() * 7 + index) % 41 == 0:
        final = (answer + " ") * (50_001 // len(answer) + 2)
    if agent.parts:
        msgs.append({"role": "assistant", "content": [
            {"type": "text", "text": final[:2000]},
            {"type": "image_url", "image_url": {"url": f"https://example.com/chart-{n}.png"}}]})
    elif not (agent.strict and rng.random() < 0.06):
        msgs.append({"role": "assistant", "content": final})
    rate = agent.drop_on.get(day, agent.pass_rate)
    if model == "gpt-4.1":
        rate -= 0.05
    r = rng.random()
    status = "passed" if r < rate else ("failed" if r < 0.97 else rng.choice(["error", "skipped"]))
    outcome: dict[str, Any] = {"status": status,
                               "score": 1.0 if status == "passed" else round(rng.random() * 0.5,
                                                                             2)}
    if status == "error":
        outcome = {"status": "error", "error": "agent endpoint timed out after 120 s"}
    metadata: dict[str, Any] | None = {
        "model": model, "system_prompt_id": f"{agent.name}-v{1 + index % 3}",
        "total_input_tokens": rng.randint(800, 9000) * (1 + len(msgs) // 4),
        "total_output_tokens": rng.randint(60, 900), "agent_runtime_ms": runtime_ms,
        "temperature": 0.2, "region": rng.choice(["eu-west-1", "us-east-1"]),
    }
    if rng.random() < 0.05:
        metadata = None
    elif rng.random() < 0.02 and metadata is not None:  # a wrapper that stringified counters
        metadata["total_output_tokens"] = str(metadata["total_output_tokens"])
    line: dict[str, Any] = {
        "run_id": f"{agent.name}-{day.isoformat()}-{index:05d}",
        "agent": agent.name, "agent_version": "1.4.2",
        "test_case_id": f"{agent.name}/case-{case:03d}", "batch_id": f"{day.isoformat()}-nightly",
        "trace_id": f"{rng.getrandbits(128):032x}",
        "started_at": started.isoformat().replace("+00:00", "Z"),
        "ended_at": (started + timedelta(milliseconds=runtime_ms)).isoformat().replace(
            "+00:00", "Z"),
        "outcome": outcome,
        "response": {"final_response": final, "messages": msgs, "metadata": metadata},
    }
    if agent.strict:
        line["response_contract"] = {"response_mode": "rich", "strictness": "strict"}
    if metadata is None:
        del line["response"]["metadata"]
        line["model"] = model
    return line


def runs(seed: int, days: list[date], per_agent_per_day: int,
         agents: list[AgentProfile] | None = None) -> Iterator[tuple[date, str, dict[str, Any]]]:
    """(day, agent, line) for every synthetic run, in a stable order."""
    rng = random.Random(seed)
    agents = agents or default_agents(days)
    for day in days:
        for agent in agents:
            for i in range(per_agent_per_day):
                yield day, agent.name, make_run(rng, agent, day, i, case=i % 40)


def dumps(line: dict[str, Any]) -> str:
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def _blocks(msg: dict[str, Any]) -> dict[str, Any]:
    """A transcript message as a log_request chat message: content as typed blocks."""
    content = msg.get("content")
    blocks: list[dict[str, Any]] = []
    for t in msg.get("thinking") or []:
        blocks.append({"type": "thinking", "thinking": t.get("text", "")})
    if isinstance(content, str):
        blocks.append({"type": "text", "text": content})
    elif isinstance(content, list):
        blocks += content
    out: dict[str, Any] = {"role": msg["role"], "content": blocks}
    if msg.get("tool_calls"):
        calls = []
        for c in msg["tool_calls"]:
            fn = c.get("function") or c
            args = fn.get("arguments")
            calls.append({"id": c.get("id"), "type": "function", "function": {
                "name": fn.get("name"),
                "arguments": args if isinstance(args, str) else json.dumps(args)}})
        out["tool_calls"] = calls
    if msg.get("tool_call_id"):
        out["tool_call_id"] = msg["tool_call_id"]
    return out


def make_spans(rng: random.Random, line: dict[str, Any]) -> list[dict[str, Any]]:
    """The spans a tracing SDK would write for one run: a root span for the agent and one span
    per LLM call with its log_request, tokens adding up to the run's metadata (with rare,
    realistic disagreements, partial responses, max-token cut-offs and provider errors)."""
    resp = line["response"]
    meta = resp.get("metadata") or {}
    msgs = resp["messages"]
    model = meta.get("model") or line.get("model") or "unknown"
    started = datetime.fromisoformat(line["started_at"].replace("Z", "+00:00"))
    start_ns = int(started.timestamp() * 1e9)
    runtime_ms = meta.get("agent_runtime_ms") or rng.randint(2000, 9000)
    if rng.random() < 0.02:  # a wrapper that timed only part of the run
        runtime_ms = int(runtime_ms * 0.5)
    trace_id = line["trace_id"]
    root_id = f"{rng.getrandbits(64):016x}"
    by_attr = rng.random() < 0.5
    attrs = {"run_id": line["run_id"]} if by_attr else {}
    resource = {"attributes": {"service.name": line["agent"]}, "schema_url": ""}
    root: dict[str, Any] = {
            "name": "agent.run",
            "context": {"trace_id": trace_id, "span_id": root_id, "trace_state": ""},
            "kind": "SpanKind.SERVER", "parent_id": None, "start_time": start_ns,
            "end_time": start_ns + int(runtime_ms * 1e6),
            "status": {"status_code": "StatusCode.OK", "description": None},
            "attributes": {**attrs, "gen_ai.agent.name": line["agent"]}, "events": [],
            "links": [], "resource": resource}
    turns = [i for i, m in enumerate(msgs) if m["role"] == "assistant"]
    total_in = meta.get("total_input_tokens")
    total_out = meta.get("total_output_tokens")
    total_in = total_in if isinstance(total_in, int) else rng.randint(2000, 9000)
    total_out = total_out if isinstance(total_out, int) else rng.randint(100, 900)
    if rng.random() < 0.02:  # a provider that reports fewer tokens than the agent counted
        total_in = int(total_in * 0.8)
    spans = [root]
    n = max(len(turns), 1)
    step_ns = int(runtime_ms * 1e6) // (n + 1)
    for k, i in enumerate(turns or [len(msgs) - 1]):
        in_tok = total_in // n + (total_in % n if k == n - 1 else 0)
        out_tok = total_out // n + (total_out % n if k == n - 1 else 0)
        lr: dict[str, Any] = {
            "provider": "anthropic" if "claude" in model else (
                "google" if "gemini" in model else "openai"),
            "model": model,
            "input": {"type": "chat", "messages": [_blocks(m) for m in msgs[:i]]},
            "output": {"type": "chat", "messages": [_blocks(msgs[i])] if msgs else []},
            "input_tokens": in_tok, "output_tokens": out_tok,
            "price": round(in_tok * 3e-6 + out_tok * 1.5e-5, 6),
            "parameters": {"max_tokens": 4096, "temperature": 0.2},
            "prompt_name": f"{line['agent']}-system", "prompt_version_number": 3,
        }
        r = rng.random()
        if r < 0.01:
            lr.update(status="WARNING", error_type="PROVIDER_PARTIAL_RESPONSE")
        elif r < 0.02:
            lr["parameters"]["max_tokens"] = out_tok
        elif r < 0.025:
            lr.update(status="ERROR", error_type="PROVIDER_TIMEOUT",
                      error_message=("upstream request timed out after 60 s; " * 40)[:1024])
        call_start = start_ns + step_ns * k + 1_000_000
        spans.append({
            "name": "llm.chat", "context": {"trace_id": trace_id,
                                            "span_id": f"{rng.getrandbits(64):016x}",
                                            "trace_state": ""},
            "kind": "SpanKind.CLIENT", "parent_id": root_id, "start_time": call_start,
            "end_time": call_start + step_ns - 2_000_000,
            "status": {"status_code": "StatusCode.ERROR" if lr.get("status") == "ERROR"
                       else "StatusCode.OK", "description": None},
            "attributes": {**attrs, "gen_ai.request.model": model}, "events": [], "links": [],
            "resource": resource, "log_request": lr})
    return spans
