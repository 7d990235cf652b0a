"""`swe-agent`: a SWE-agent trajectory (`.traj`). One file is one run.

`history` is the transcript (a tool message's `tool_call_ids` gives its call id), tokens from
`info.model_stats` (`tokens_sent` / `tokens_received`; a replay's zeros are left out), model
from `replay_config`, the instance id as the test case, `exit_status`, `instance_cost`,
`api_calls` and the tools' summed `execution_time` as metadata. No pass/fail: whether the
patch resolves the issue is the SWE-bench harness's verdict, not the trajectory's.
"""

from pathlib import Path
from typing import Any

from transforms.importers import FORMATS
from transforms.importers.common import KEEP, Importer, Lines, final, json_object, ms, safe_name


def matches(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("history"), list) and isinstance(
        doc.get("info"), dict) and "trajectory" in doc


def convert(src: Path, doc: Any, agent: str | None, model: str | None
            ) -> tuple[Lines, list[str]]:
    config = json_object(doc.get("replay_config"))
    agent_model = ((config.get("agent") or {}).get("model") or {}) if config else {}
    model = model or agent_model.get("name") or agent_model.get("model_name")
    instance = ((config.get("problem_statement") or {}).get("id") if config else None) \
        or src.name.removesuffix(".json").removesuffix(".traj")
    msgs = []
    for m in doc["history"]:
        if not isinstance(m, dict):
            msgs.append(m)
            continue
        out = {k: m[k] for k in KEEP if m.get(k) is not None}
        ids = m.get("tool_call_ids")
        if m.get("role") == "tool" and "tool_call_id" not in out and isinstance(ids, list) \
                and ids:
            out["tool_call_id"] = ids[0]
        msgs.append(out)
    info = doc["info"]
    stats = info.get("model_stats") or {}
    metadata: dict[str, Any] = {"model": model} if model else {}
    sent, received = stats.get("tokens_sent"), stats.get("tokens_received")
    notes = ["no pass/fail in a trajectory (the SWE-bench harness decides whether the patch "
             "resolves the issue): the run is ungraded",
             "no run time: the trajectory times only the tool executions (kept as metadata "
             "tool_execution_ms)"]
    if sent or received:
        metadata.update(total_input_tokens=sent, total_output_tokens=received)
    else:
        notes.append("model_stats report no tokens (a replayed demonstration): the token "
                     "columns stay empty")
    steps: list[float] = [t["execution_time"] for t in doc.get("trajectory") or []
                          if isinstance(t, dict)
                          and isinstance(t.get("execution_time"), int | float)]
    for key, value in (("exit_status", info.get("exit_status")),
                       ("instance_cost", stats.get("instance_cost")),
                       ("api_calls", stats.get("api_calls")),
                       ("tool_execution_ms", ms(src, sum(steps), "the summed execution_time")
                        if steps else None)):
        if value is not None:
            metadata[key] = value
    if not model:
        notes.append("no model in the trajectory (pass --model)")
    line = {"run_id": f"swe-agent-{safe_name(src)}", "agent": agent or "swe-agent",
            "test_case_id": str(instance),
            "response": {"final_response": final(msgs), "messages": msgs,
                         "metadata": metadata}}
    return [line], notes


IMPORTER = Importer(
    name="swe-agent",
    describe=FORMATS["swe-agent"],
    matches=matches, convert=convert)
