"""Constructed weeks for the verdict tests: one agent's runs on the seven baseline nights and the
latest, written as response lines, ingested, and queried."""

from datetime import date, timedelta
from pathlib import Path
from typing import Any

from tests.conftest import to_line
from transforms import warehouse
from transforms.ingest import ingest

LATEST = date(2026, 11, 20)
BASELINE = [LATEST - timedelta(days=d) for d in range(7, 0, -1)]
CRASH = "ToolTimeout: the billing API did not answer in 30 s"


def run_line(agent: str, case: str, day: date, trial: int, status: str, *,
         prompt: str = "sp-17", sha: str | None = None,
         scores: dict[str, float] | None = None, error: str | None = None) -> dict[str, Any]:
    outcome: dict[str, Any] = {"status": status}
    if error is not None:
        outcome["error"] = error
    if scores is not None:
        outcome["scores"] = scores
    metadata: dict[str, Any] = {"model": "gpt-4.1", "system_prompt_id": prompt,
                                "git_sha": sha or f"sha-{day:%m%d}"}
    return {"run_id": f"{agent}-{case}-{day}-{trial}", "agent": agent, "test_case_id": case,
            "agent_version": "1.4.0",
            "started_at": f"{day}T01:{trial:02d}:00Z", "outcome": outcome,
            "response": {"final_response": f"{case} answered",
                         "messages": [{"role": "user", "content": f"Please do {case}."},
                                      {"role": "assistant", "content": f"{case} answered"}],
                         "metadata": metadata}}


def home_of(root: Path, lines: list[dict[str, Any]]) -> Path:
    landing = root / "landing"
    landing.mkdir(parents=True)
    (landing / "week.responses.jsonl").write_bytes(b"".join(to_line(x) + b"\n" for x in lines))
    ingest([landing], root / "home")
    return root / "home"


def query(home: Path, sql: str) -> list[dict[str, Any]]:
    con = warehouse.connect(home)
    try:
        cur = con.execute(sql)
        names = [d[0] for d in cur.description or []]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    finally:
        con.close()
