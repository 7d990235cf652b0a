"""`tau-bench`: a historical trajectories array `[{task_id, trial, reward, info, traj}]`.

One element is one run: `traj` is the OpenAI-style transcript (nested tool calls), passed =
`reward == 1.0`, explanation = `info.reward_info` in a line (r_actions: the database check;
r_outputs: the outputs missing from the replies). The file names no model or agent
(`--model`, `--agent` supply them) and has no tokens, runtime or times.
"""

from pathlib import Path
from typing import Any

from transforms.importers import FORMATS
from transforms.importers.common import Importer, Lines, explained, final, num


def matches(doc: Any) -> bool:
    return isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict) and \
        "traj" in doc[0]


def _why(info: Any) -> str | None:
    """tau-bench's reward info in a line: the reward, and what decided it: the database
    after the run against the one the expected actions give (`r_actions`), or which expected
    outputs the agent's replies lacked (`r_outputs`)."""
    if not isinstance(info, dict):
        return None
    parts = [f"reward {num(info.get('reward'))}"]
    detail: dict[str, Any] = info["info"] if isinstance(info.get("info"), dict) else {}
    if "r_actions" in detail:
        parts.append(f"r_actions {num(detail['r_actions'])}" + (
            "" if detail["r_actions"] == 1 else
            " (the database after the run differs from the one the expected actions give)"))
    if "r_outputs" in detail:
        outputs: dict[str, Any] = detail["outputs"] if isinstance(detail.get("outputs"),
                                                                  dict) else {}
        missing = [str(k) for k, found in outputs.items() if not found]
        parts.append(f"r_outputs {num(detail['r_outputs'])}" + (
            f" (outputs missing from the replies: {', '.join(missing)})" if missing else ""))
    return "; ".join(parts)[:2000]


def convert(src: Path, doc: Any, agent: str | None, model: str | None
            ) -> tuple[Lines, list[str]]:
    lines = []
    for r in doc:
        traj = r.get("traj") or []
        reward = r.get("reward")
        lines.append({
            "run_id": f"{src.stem}-{r.get('task_id')}-{r.get('trial', 0)}",
            "agent": agent or "tau-bench",
            **({"model": model} if model else {}),
            "test_case_id": f"{src.stem}/{r.get('task_id')}",
            "outcome": {"status": "passed" if reward == 1.0 else "failed", "score": reward,
                        **explained(_why((r.get("info") or {}).get("reward_info")))},
            "response": {"final_response": final(traj), "messages": traj}})
    lacks = ["no tokens, runtime or times in the source: those columns stay empty"] + (
        [] if model else ["no model in the source (pass --model)"])
    return lines, lacks


IMPORTER = Importer(
    name="tau-bench",
    describe=FORMATS["tau-bench"],
    matches=matches, convert=convert)
