"""`openhands`: an OpenHands event list. One file is one run.

User messages, each distinct LLM response (`tool_call_metadata.model_response`: the assistant
message with its tool calls, model and usage), observations as tool results, agent messages;
times from the first to the last event, runtime the time the agent worked (gaps ending at an
agent event, so time spent waiting for the user is left out); tokens only when every agent
step carries its LLM response.
"""

import json
from collections import Counter
from pathlib import Path
from typing import Any

from transforms.importers import FORMATS
from transforms.importers.common import Importer, Lines, final, parse_time, safe_name, utc


def matches(doc: Any) -> bool:
    return isinstance(doc, list) and bool(doc) and all(
        isinstance(e, dict) and "source" in e and ("action" in e or "observation" in e)
        for e in doc)


_NOT_RESULTS = ("agent_state_changed", "null")
"""OpenHands observations that report the agent's state, not a tool's result."""


def convert(src: Path, doc: Any, agent: str | None, model: str | None
            ) -> tuple[Lines, list[str]]:
    msgs: list[dict[str, Any]] = []
    seen: set[str] = set()
    models: list[str] = []
    tokens_in = tokens_out = 0
    steps_without_usage = n_responses = 0
    skipped: Counter[str] = Counter()
    for e in doc:
        meta = e.get("tool_call_metadata") if isinstance(e.get("tool_call_metadata"),
                                                          dict) else None
        response = meta.get("model_response") if meta and isinstance(
            meta.get("model_response"), dict) else None
        text = e.get("message") if isinstance(e.get("message"), str) else None
        if e.get("source") == "user" and e.get("action") == "message":
            msgs.append({"role": "user", "content": text or ""})
        elif "observation" in e and meta:
            content = e.get("content") if isinstance(e.get("content"), str) else text
            msgs.append({"role": "tool", "tool_call_id": meta.get("tool_call_id"),
                         "content": content or ""})
        elif e.get("source") == "agent" and response:
            rid = response.get("id")
            if isinstance(rid, str) and rid in seen:
                continue  # the same LLM response behind several actions
            if isinstance(rid, str):
                seen.add(rid)
            n_responses += 1
            choice = (response.get("choices") or [{}])[0]
            message = choice.get("message") if isinstance(choice, dict) else None
            if isinstance(message, dict):
                msgs.append({k: message[k] for k in ("role", "content", "tool_calls")
                             if message.get(k) is not None})
            usage = response.get("usage") or {}
            tokens_in += usage.get("prompt_tokens") or 0
            tokens_out += usage.get("completion_tokens") or 0
            if isinstance(response.get("model"), str):
                models.append(response["model"])
        elif e.get("action") == "system":
            args = e.get("args") if isinstance(e.get("args"), dict) else {}
            msgs.append({"role": "system", "content": args.get("content") or text or ""})
        elif e.get("source") == "agent" and "action" in e:
            # An agent step without its LLM response: its text, else what it did.
            args = e.get("args")
            msgs.append({"role": "assistant", "content": text or (
                f"[{e.get('action')}] " + (json.dumps(args) if args else "")).strip()})
            steps_without_usage += 1
        elif "observation" in e and e.get("observation") not in _NOT_RESULTS:
            # A result no call names: kept (the ingest flags it as an orphan).
            content = e.get("content") if isinstance(e.get("content"), str) else text
            msgs.append({"role": "tool", "content": content or ""})
        else:
            skipped[str(e.get("action") or e.get("observation"))] += 1
    stamps = [t for t in (utc(e.get("timestamp")) for e in doc) if t]
    # The agent's time: each gap between events that ends at an agent event (waiting for the
    # user's next message is not the agent's runtime).
    busy = 0.0
    timed = [(e.get("source"), parse_time(utc(e.get("timestamp")))) for e in doc]
    for (_, t0), (who, t1) in zip(timed, timed[1:], strict=False):
        if who == "agent" and t0 is not None and t1 is not None:
            busy += (t1 - t0).total_seconds()
    metadata: dict[str, Any] = {}
    model = model or (max(set(models), key=models.count) if models else None)
    if model:
        metadata["model"] = model
    notes = ["no pass/fail in an OpenHands event list: the run is ungraded",
             "event times carry no zone and are read as UTC"]
    if skipped:
        notes.append("events that are not part of the transcript left out: " + ", ".join(
            f"{n} {kind}" for kind, n in sorted(skipped.items())))
    if n_responses and not steps_without_usage:
        metadata.update(total_input_tokens=tokens_in, total_output_tokens=tokens_out)
    elif steps_without_usage:
        notes.append(f"{steps_without_usage} agent step(s) carry no LLM response, so the "
                     "run's token totals are unknown and stay empty")
    line: dict[str, Any] = {
        "run_id": f"openhands-{safe_name(src)}", "agent": agent or "openhands",
        "test_case_id": safe_name(src),
        "response": {"final_response": final(msgs), "messages": msgs, "metadata": metadata}}
    if stamps:
        line["started_at"], line["ended_at"] = stamps[0], stamps[-1]
        metadata["agent_runtime_ms"] = round(busy * 1000)
    return [line], notes


IMPORTER = Importer(
    name="openhands",
    describe=FORMATS["openhands"],
    matches=matches, convert=convert)
