"""`tau2`: a tau2-bench results file `{info, tasks, simulations}`.

One simulation is one run: the domain policy becomes the system message, `messages` the
transcript (flat tool calls; a tool message's `id` is its call id), passed = `reward == 1.0`,
explanation = `reward_info` in a line (reward breakdown, database check, the failed checks of
the reward basis), runtime = `duration`, times from `start_time`/`end_time`, agent =
`info.agent_info.implementation`, model = `info.agent_info.llm`, tokens = the assistant
messages' `usage` (the user simulator's usage is not the agent's and is left out).
"""

import json
from pathlib import Path
from typing import Any

from transforms.importers import FORMATS
from transforms.importers.common import KEEP, Importer, Lines, explained, final, ms, num, utc


def matches(doc: Any) -> bool:
    return isinstance(doc, dict) and "simulations" in doc and "tasks" in doc


def _why(info: Any) -> str | None:
    """tau2's reward info in a line: the reward and its breakdown, the database check, and
    each action, assertion or communication check that failed, for the checks the reward is
    based on (`reward_basis`)."""
    if not isinstance(info, dict):
        return None
    parts = [f"reward {num(info.get('reward'))}"]
    breakdown = info.get("reward_breakdown")
    if isinstance(breakdown, dict) and breakdown:
        parts.append("breakdown " + ", ".join(f"{k} {num(v)}" for k, v in breakdown.items()))
    db = info.get("db_check")
    if isinstance(db, dict) and db.get("db_match") is not None:
        parts.append("database matches the expected one" if db["db_match"] else
                     "database differs from the expected one")
    basis = info.get("reward_basis")

    def scored(kind: str) -> bool:  # a check outside reward_basis did not decide the reward
        return not isinstance(basis, list) or kind in basis

    for c in info.get("action_checks") or [] if scored("ACTION") else []:
        if isinstance(c, dict) and c.get("action_match") is False:
            action: dict[str, Any] = c["action"] if isinstance(c.get("action"), dict) else {}
            args = json.dumps(action.get("arguments"), ensure_ascii=False, sort_keys=True)
            parts.append(f"expected action not taken: {action.get('name')} "
                         f"{args[:120] + ('...' if len(args) > 120 else '')}")
    for key, kind, what, text in (
            ("nl_assertions", "NL_ASSERTION", "assertion not met", "nl_assertion"),
            ("communicate_checks", "COMMUNICATE", "not communicated", "info"),
            ("env_assertions", "ENV_ASSERTION", "environment assertion not met", "")):
        for c in info.get(key) or [] if scored(kind) else []:
            if isinstance(c, dict) and c.get("met") is False:
                said = c.get(text) if text else c.get("env_assertion")
                parts.append(f"{what}: {said if isinstance(said, str) else json.dumps(said)}")
    return "; ".join(parts)[:2000]


def convert(src: Path, doc: Any, agent: str | None, model: str | None
            ) -> tuple[Lines, list[str]]:
    info = doc.get("info") or {}
    agent_info = info.get("agent_info") or {}
    env = info.get("environment_info") or {}
    domain = env.get("domain_name") or src.stem
    policy = env.get("policy")
    lines = []
    any_tokens = False
    for sim in doc["simulations"]:
        msgs: list[dict[str, Any]] = []
        if isinstance(policy, str) and policy:
            msgs.append({"role": "system", "content": policy})
        tokens_in = tokens_out = 0
        has_usage = False
        for m in sim.get("messages") or []:
            if not isinstance(m, dict):
                msgs.append(m)  # kept as is: the ingest flags it
                continue
            out = {k: m[k] for k in KEEP if m.get(k) is not None}
            if m.get("role") == "tool" and "tool_call_id" not in out and m.get("id"):
                out["tool_call_id"] = m["id"]
            if out.get("tool_calls"):
                out["tool_calls"] = [{k: v for k, v in c.items() if k != "requestor"}
                                     if isinstance(c, dict) else c for c in out["tool_calls"]]
            usage = m.get("usage")
            if m.get("role") == "assistant" and isinstance(usage, dict):
                has_usage = True
                tokens_in += usage.get("prompt_tokens") or 0
                tokens_out += usage.get("completion_tokens") or 0
            msgs.append(out)
        any_tokens = any_tokens or has_usage
        reward = (sim.get("reward_info") or {}).get("reward")
        duration = sim.get("duration")
        metadata: dict[str, Any] = {}
        if model or agent_info.get("llm"):
            metadata["model"] = model or agent_info.get("llm")
        if has_usage:
            metadata.update(total_input_tokens=tokens_in, total_output_tokens=tokens_out)
        if isinstance(duration, int | float):
            metadata["agent_runtime_ms"] = ms(src, duration, f"simulation "
                                              f"{str(sim.get('id'))[:40]}'s duration")
        line: dict[str, Any] = {
            "run_id": str(sim.get("id") or f"{src.stem}-{sim.get('task_id')}-"
                                              f"{sim.get('trial', 0)}"),
            "agent": agent or agent_info.get("implementation") or "tau2",
            "test_case_id": f"{domain}/{sim.get('task_id')}",
            "outcome": {"status": "passed" if reward == 1.0 else "failed", "score": reward,
                        **explained(_why(sim.get("reward_info")))},
            "response": {"final_response": final(msgs), "messages": msgs,
                         "metadata": metadata}}
        for key, value in (("started_at", utc(sim.get("start_time"))),
                           ("ended_at", utc(sim.get("end_time")))):
            if value:
                line[key] = value
        lines.append(line)
    lacks = [] if any_tokens else ["no agent token usage in the source (only the user "
                                   "simulator reports it): the token columns stay empty"]
    return lines, lacks


IMPORTER = Importer(
    name="tau2",
    describe=FORMATS["tau2"],
    matches=matches, convert=convert)
