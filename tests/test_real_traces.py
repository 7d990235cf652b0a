"""Real agent traces from public projects (../shared/real_traces, see its SOURCES.md).

The tau-bench trajectories are OpenAI-style transcripts with nested tool calls: wrapped in a
run envelope line by line (the mapping SOURCES.md gives), they must normalize to the figures
SOURCES.md states. The SWE-agent predictions file is JSONL but not a run record: every line
must be quarantined with its reason, none lost. The other real formats need an importer.
"""

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import REAL_TRACES
from transforms import warehouse
from transforms.ingest import ingest

TAU = REAL_TRACES / "tau-bench" / "gpt-4o-airline.json"
SWE_PREDS = REAL_TRACES / "swe-agent" / "gpt4_swe-bench-dev-easy_all_preds.jsonl"

pytestmark = pytest.mark.skipif(not TAU.exists(), reason="../shared/real_traces not present")


def _tau_lines(path: Path) -> list[str]:
    out = []
    for r in json.loads(path.read_text()):
        answers = [m.get("content") for m in r["traj"] if m["role"] == "assistant"
                   and isinstance(m.get("content"), str)]
        out.append(json.dumps({
            "run_id": f"{r['task_id']}-{r['trial']}", "agent": "tau-bench-tool-calling",
            "model": "gpt-4o", "test_case_id": f"airline/{r['task_id']}",
            "outcome": {"status": "passed" if r["reward"] == 1.0 else "failed",
                        "score": r["reward"]},
            "response": {"final_response": answers[-1] if answers else "",
                         "messages": r["traj"]}}))
    return out


def test_tau_bench_airline(tmp_path: Path) -> None:
    """200 runs, 84 passed; 5,308 messages by role as SOURCES.md counts them; 1,164 nested
    tool calls, each answered by its tool message."""
    landing = tmp_path / "landing" / "tau.responses.jsonl"
    landing.parent.mkdir()
    landing.write_text("\n".join(_tau_lines(TAU)) + "\n")
    ingest([landing], tmp_path / "home")
    con = warehouse.connect(tmp_path / "home")
    q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
    assert q("SELECT count(*), count(*) FILTER (status = 'passed') FROM runs") == [(200, 84)]
    assert dict(q("SELECT role, count(*) FROM messages GROUP BY 1")) == {
        "system": 200, "user": 1490, "assistant": 2454, "tool": 1164}
    assert q("SELECT count(*), count(DISTINCT tool_name), count(*) FILTER (call_shape = 'nested'),"
             " count(result_message_index), bool_and(arguments_valid) FROM tool_calls") == [
        (1164, 14, 1164, 1164, True)]
    assert q("SELECT count(*) FROM runs WHERE input_tokens IS NOT NULL "
             "OR agent_runtime_ms IS NOT NULL") == [(0,)]
    flags = dict(q("SELECT code, count(*) FROM flags GROUP BY 1"))
    con.close()
    assert "tool_result_orphan" not in flags and "messages_malformed" not in flags
    # Independently: the same totals straight from the source file.
    src = json.loads(TAU.read_text())
    assert sum(len(r["traj"]) for r in src) == 5308
    assert Counter(r["reward"] for r in src)[1.0] == 84


def test_swe_agent_predictions_are_quarantined_not_lost(tmp_path: Path) -> None:
    """A JSONL file of another shape read as responses: each line quarantined with a reason."""
    report = ingest([SWE_PREDS], tmp_path / "home", kind="responses")
    (f,) = report.files
    n_lines = len(SWE_PREDS.read_bytes().splitlines())
    assert (f.lines, f.accepted, f.quarantined) == (n_lines, 0, n_lines)
    con = warehouse.connect(tmp_path / "home")
    rows = con.execute("SELECT error_code, octet_length(raw) FROM quarantine").fetchall()
    con.close()
    assert rows == [("unrecognized_record", len(SWE_PREDS.read_bytes().splitlines()[0]))]
