"""Real agent traces from public projects: the collection in the folder RUNLAKE_REAL_TRACES
names (see its SOURCES.md); skipped when the setting is not given.

The tau-bench trajectories are OpenAI-style transcripts with nested tool calls: imported with
`runlake import tau-bench` (the mapping SOURCES.md gives), they must normalize to the figures
SOURCES.md states; tau2 results likewise with `runlake import tau2`. The SWE-agent
predictions file is JSONL but not a run record: every line must be quarantined with its
reason, none lost. Inspect AI logs, Langfuse exports, the Vercel AI SDK's OTel spans and the
AgentOps export go through their importers; each test derives its figures from the source
file itself.
"""

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import REAL_TRACES as _GIVEN
from tests.conftest import REAL_TRACES_SETTING
from transforms import warehouse
from transforms.cli import app
from transforms.ingest import ingest

# Slow as well: the full collection of real traces (`make test-fast` leaves it out).
pytestmark = [pytest.mark.skipif(_GIVEN is None, reason=f"set {REAL_TRACES_SETTING} to the "
                                 "folder of real traces to run these"), pytest.mark.slow]
REAL_TRACES = _GIVEN if _GIVEN is not None else Path("/nonexistent")
if _GIVEN is not None and not (_GIVEN / "tau-bench").is_dir():
    raise pytest.UsageError(f"{REAL_TRACES_SETTING}={_GIVEN}: no real traces there")

TAU = REAL_TRACES / "tau-bench" / "gpt-4o-airline.json"
SWE_PREDS = REAL_TRACES / "swe-agent" / "gpt4_swe-bench-dev-easy_all_preds.jsonl"



def test_tau_bench_airline(tmp_path: Path) -> None:
    """200 runs, 84 passed; 5,308 messages by role as SOURCES.md counts them; 1,164 nested
    tool calls, each answered by its tool message."""
    res = CliRunner().invoke(app, ["import", "tau-bench", str(TAU), "--out",
                                   str(tmp_path / "landing"), "--model", "gpt-4o"])
    assert res.exit_code == 0, res.output
    assert "200 runs (84 of 200 graded passed)" in res.output
    assert "no tokens, runtime or times" in res.output
    ingest([tmp_path / "landing"], tmp_path / "home")
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
    # Each failure says why: the database check (r_actions) or the missing outputs.
    assert q("SELECT count(*) FILTER (outcome_explanation LIKE '%r_actions 0 (%'), "
             "count(*) FILTER (outcome_explanation LIKE '%outputs missing from the replies%'),"
             " count(*) FILTER (outcome_explanation IS NULL) FROM runs") == [(101, 10, 5)]
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


TAU2 = sorted((REAL_TRACES / "tau2-bench").glob("*.json")) + sorted(
    (REAL_TRACES / "tau2-bench-oscaralvaro").glob("*.json"))


@pytest.mark.parametrize("src", TAU2, ids=[p.stem for p in TAU2])
def test_tau2_results(src: Path, tmp_path: Path) -> None:
    """Each simulation is a run: counts of runs, passes, messages (+ the policy as the system
    message), tool calls and the agent's tokens agree with the source read independently;
    every tool call is answered by its tool message."""
    res = CliRunner().invoke(app, ["import", "tau2", str(src), "--out", str(tmp_path / "l")])
    assert res.exit_code == 0, res.output
    ingest([tmp_path / "l"], tmp_path / "home")
    doc = json.loads(src.read_text())
    sims = doc["simulations"]
    usage = [m["usage"] for s in sims for m in s["messages"]
             if m["role"] == "assistant" and m.get("usage")]
    con = warehouse.connect(tmp_path / "home")
    q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
    assert q("SELECT count(*), count(*) FILTER (status = 'passed'), sum(n_messages), "
             "sum(n_tool_calls), sum(input_tokens), any_value(model_raw), "
             "any_value(model) FROM runs") == [(
        len(sims), sum(1 for s in sims if s["reward_info"]["reward"] == 1.0),
        sum(len(s["messages"]) + 1 for s in sims),
        sum(len(m.get("tool_calls") or []) for s in sims for m in s["messages"]),
        sum(u["prompt_tokens"] or 0 for u in usage) if usage else None,
        doc["info"]["agent_info"]["llm"],
        # the canonical model: the provider prefix (gemini/ in LiteLLM names) removed
        doc["info"]["agent_info"]["llm"].rsplit("/", 1)[-1])]
    assert q("SELECT count(*) FROM tool_calls WHERE result_message_index IS NULL") == [(0,)]
    assert q("SELECT count(*) FROM flags") == [(0,)]
    assert q("SELECT count(*) FROM runs WHERE outcome_explanation NOT LIKE 'reward %'") == [
        (0,)]
    con.close()


INSPECT = sorted((REAL_TRACES / "inspect-ai").glob("*.json"))


def test_inspect_logs(tmp_path: Path) -> None:
    """Every sample of the three logs is a run; passes are the first scorer's C; messages,
    tool calls (Inspect's own shape, each answered) and tokens match the logs read directly."""
    res = CliRunner().invoke(app, ["import", "inspect", *map(str, INSPECT), "--out",
                                   str(tmp_path / "l")])
    assert res.exit_code == 0, res.output
    assert "status is 'cancelled'" in res.output
    ingest([tmp_path / "l"], tmp_path / "home")
    samples = [s for p in INSPECT for s in json.loads(p.read_text())["samples"]]
    # Independently: model events in a scorer span are the grader's (security-guide's
    # model_graded_fact); the run's tokens are the other model events'.
    calls = [(e["output"]["usage"], e["span_id"] in {
        b["id"] for b in s["events"] if b["event"] == "span_begin" and b["type"] == "scorer"})
        for s in samples for e in s["events"] if e["event"] == "model"]
    assert sum(u["input_tokens"] for u, _ in calls) == sum(
        u["input_tokens"] for s in samples for u in s["model_usage"].values())
    con = warehouse.connect(tmp_path / "home")
    q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
    assert q("SELECT count(*), count(*) FILTER (status = 'passed'), sum(n_messages), "
             "sum(n_tool_calls), sum(input_tokens), sum(output_tokens) FROM runs") == [(
        len(samples),
        sum(1 for s in samples if next(iter(s["scores"].values()))["value"] == "C"),
        sum(len(s["messages"]) for s in samples),
        sum(len(m.get("tool_calls") or []) for s in samples for m in s["messages"]),
        sum(u["input_tokens"] for u, grader in calls if not grader),
        sum(u["output_tokens"] for u, grader in calls if not grader))]
    assert q("SELECT key, sum(value::BIGINT) FROM metadata_kv WHERE key LIKE 'grader_%' "
             "GROUP BY 1 ORDER BY 1") == [
        ("grader_input_tokens", sum(u["input_tokens"] for u, grader in calls if grader)),
        ("grader_model_calls", sum(1 for _, grader in calls if grader)),
        ("grader_output_tokens", sum(u["output_tokens"] for u, grader in calls if grader))]
    # Dated by their samples' events (May 2025), not the ingest day; explained by the scorer.
    assert q("SELECT DISTINCT day::VARCHAR FROM runs") == [("2025-05-13",)]
    assert q("SELECT count(*) FROM runs WHERE outcome_explanation IS NULL") == [(0,)]
    assert q("SELECT tool_name, count(result_message_index) FROM tool_calls GROUP BY 1 "
             "ORDER BY 1") == [("web_browser_click", 3), ("web_browser_go", 1)]
    assert q("SELECT count(*) FROM flags") == [(0,)]
    con.close()


LANGFUSE = sorted((REAL_TRACES / "langfuse-framework-traces").glob("*.json"))


def test_langfuse_exports_land_as_spans_with_tokens(tmp_path: Path) -> None:
    """23 framework traces: every observation a span, every GENERATION an LLM call with its
    model and token usage, as the exports say. Two of the exports hold the same trace (the
    same trace and observation ids): its observations are one span each, counted once."""
    res = CliRunner().invoke(app, ["import", "langfuse", *map(str, LANGFUSE), "--out",
                                   str(tmp_path / "l")])
    assert res.exit_code == 0, res.output
    ingest([tmp_path / "l"], tmp_path / "home")
    by_id = {(o.get("traceId"), o["id"]): o
             for p in LANGFUSE for o in json.loads(p.read_text())["observations"]}
    obs = list(by_id.values())
    assert len(obs) < sum(len(json.loads(p.read_text())["observations"]) for p in LANGFUSE)
    gens = [o for o in obs if o["type"] == "GENERATION"]
    con = warehouse.connect(tmp_path / "home")
    q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
    assert q("SELECT count(*) FROM spans") == [(len(obs),)]
    assert q("SELECT count(*), sum(input_tokens), sum(output_tokens) FROM llm_calls") == [
        (len(gens), sum(o.get("inputUsage") or 0 for o in gens),
         sum(o.get("outputUsage") or 0 for o in gens))]
    assert sorted(r[0] for r in q("SELECT DISTINCT model FROM llm_calls")) == sorted(
        {o["model"] for o in gens})
    assert q("SELECT count(*) FROM quarantine") == [(0,)]
    con.close()


VERCEL = REAL_TRACES / "openinference" / "vercel-ai-sdk-v6_all-spans.json"
AGENTOPS = REAL_TRACES / "agentops-ibm-tutorial" / "agent_ops_traces.json"


def test_vercel_ai_sdk_spans_land_with_their_provider_calls(tmp_path: Path) -> None:
    """Ten ReadableSpans: every one a span with its HrTime duration; the provider calls
    (doGenerate/doStream, which carry gen_ai.usage) are the LLM calls, their outer
    generateText/streamText spans are not counted twice; embeddings are not chat calls."""
    res = CliRunner().invoke(app, ["import", "otlp", str(VERCEL), "--out", str(tmp_path / "l")])
    assert res.exit_code == 0 and "10 spans" in res.output, res.output
    ingest([tmp_path / "l"], tmp_path / "home")
    spans = json.loads(VERCEL.read_text())
    calls = [s["attributes"] for s in spans if "gen_ai.usage.input_tokens" in s["attributes"]]
    con = warehouse.connect(tmp_path / "home")
    q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
    assert q("SELECT count(*), count(parent_id), sum(duration_ms) FROM spans") == [(
        len(spans), 0, pytest.approx(sum(
            (s["endTime"][0] - s["startTime"][0]) * 1e3 + (s["endTime"][1] - s["startTime"][1])
            / 1e6 for s in spans)))]
    assert q("SELECT count(*), sum(input_tokens), sum(output_tokens), "
             "count(*) FILTER (n_output_messages = 1) FROM llm_calls") == [(
        len(calls), sum(a["gen_ai.usage.input_tokens"] for a in calls),
        sum(a["gen_ai.usage.output_tokens"] for a in calls), len(calls))]
    assert sorted(q("SELECT model FROM llm_calls")) == sorted(
        (a["gen_ai.response.model"],) for a in calls)
    assert q("SELECT count(*) FROM flags") == [(0,)]
    con.close()


def test_agentops_export_lands_as_a_span_tree(tmp_path: Path) -> None:
    """The CrewAI run: 7 spans in one tree; the two LLM spans carry the tokens (string numbers
    in the export), and their sum equals the totals the workflow span reports."""
    res = CliRunner().invoke(app, ["import", "agentops", str(AGENTOPS), "--out",
                                   str(tmp_path / "l")])
    assert res.exit_code == 0 and "7 spans" in res.output, res.output
    ingest([tmp_path / "l"], tmp_path / "home")
    doc = json.loads(AGENTOPS.read_text())
    llm = [s["span_attributes"]["gen_ai"] for s in doc["spans"]
           if s["span_attributes"].get("agentops", {}).get("span", {}).get("kind") == "llm"]
    root = next(s for s in doc["spans"] if not s["parent_span_id"])
    con = warehouse.connect(tmp_path / "home")
    q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
    assert q("SELECT count(*), count(parent_id), count(DISTINCT trace_id) FROM spans") == [
        (len(doc["spans"]), len(doc["spans"]) - 1, 1)]
    assert q("SELECT max(duration_ms) FROM spans") == [(root["duration"] / 1e6,)]
    assert q("SELECT count(*), sum(input_tokens), sum(output_tokens) FROM llm_calls") == [(
        len(llm), sum(int(g["usage"]["prompt_tokens"]) for g in llm),
        sum(int(g["usage"]["completion_tokens"]) for g in llm))]
    usage = root["span_attributes"]["gen_ai"]["usage"]
    assert q("SELECT sum(input_tokens), sum(output_tokens) FROM llm_calls") == [
        (int(usage["prompt_tokens"]), int(usage["completion_tokens"]))]
    assert q("SELECT role, count(*) FROM messages GROUP BY 1 ORDER BY 1") == sorted(
        Counter(m["role"] for g in llm for m in g["prompt"] + g["completion"]).items())
    assert sorted(q("SELECT DISTINCT agent FROM llm_calls")) == [
        ("Songwriter",), ("Website Researcher",)]
    assert q("SELECT count(*) FROM flags") == [(0,)]
    con.close()


SWE = sorted((REAL_TRACES / "swe-agent").glob("*.traj.json"))
OPENHANDS = sorted((REAL_TRACES / "openhands").glob("*.json"))


def test_swe_agent_trajectories(tmp_path: Path) -> None:
    """Four trajectories, old (actions in text) and function-calling format: every history
    entry a message, every nested call answered by the tool message naming it, tokens from
    model_stats unless the replay reports none; ungraded, as the trajectories carry no
    verdict."""
    res = CliRunner().invoke(app, ["import", "swe-agent", *map(str, SWE), "--out",
                                   str(tmp_path / "l")])
    assert res.exit_code == 0 and res.output.count("1 run (ungraded)") == len(SWE), res.output
    ingest([tmp_path / "l"], tmp_path / "home")
    docs = [json.loads(p.read_text()) for p in SWE]
    stats = [d["info"]["model_stats"] for d in docs]
    con = warehouse.connect(tmp_path / "home")
    q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
    assert q("SELECT count(*), count(*) FILTER (status = 'ungraded'), sum(n_messages), "
             "sum(n_tool_calls), sum(input_tokens), sum(output_tokens) FROM runs") == [(
        len(docs), len(docs), sum(len(d["history"]) for d in docs),
        sum(len(m.get("tool_calls") or []) for d in docs for m in d["history"]),
        sum(s["tokens_sent"] for s in stats), sum(s["tokens_received"] for s in stats))]
    assert q("SELECT count(*) FROM tool_calls WHERE result_message_index IS NULL") == [(0,)]
    assert sorted(q("SELECT DISTINCT model FROM runs")) == [("gpt-4o",), ("unknown",)]
    assert q("SELECT count(*) FROM metadata_kv WHERE key = 'exit_status' "
             "AND value = '\"submitted\"'") == [(len(docs),)]
    con.close()


def test_openhands_event_lists(tmp_path: Path) -> None:
    """Each event list is a run: user messages, one assistant message per distinct LLM
    response (with its tool calls), observations answering them, plain agent messages; tokens
    only where every agent step has its LLM response; runtime without the user's waits."""
    res = CliRunner().invoke(app, ["import", "openhands", *map(str, OPENHANDS), "--out",
                                   str(tmp_path / "l")])
    assert res.exit_code == 0, res.output
    ingest([tmp_path / "l"], tmp_path / "home")
    con = warehouse.connect(tmp_path / "home")
    q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
    for path in OPENHANDS:
        events = json.loads(path.read_text())
        responses = {e["tool_call_metadata"]["model_response"]["id"]:
                     e["tool_call_metadata"]["model_response"] for e in events
                     if (e.get("tool_call_metadata") or {}).get("model_response")}
        plain = [e for e in events if e["source"] == "agent" and not e.get("tool_call_metadata")
                 and e.get("action") == "message"]
        users = [e for e in events if e["source"] == "user"]
        observations = [e for e in events if "observation" in e and e.get("tool_call_metadata")]
        run = f"openhands-{path.stem}"
        usage = [r["usage"] for r in responses.values()]
        tokens = (sum(u["prompt_tokens"] for u in usage),
                  sum(u["completion_tokens"] for u in usage)) if not plain else (None, None)
        assert q(f"SELECT n_messages, n_tool_calls, input_tokens, output_tokens FROM runs "
                 f"WHERE run_id = '{run}'") == [(
                     len(users) + len(responses) + len(observations) + len(plain),
                     sum(len(r["choices"][0]["message"].get("tool_calls") or [])
                         for r in responses.values()), *tokens)]
        # Every observation answers the call it names.
        assert q(f"SELECT count(*) FROM tool_calls WHERE run_id = '{run}' "
                 "AND result_message_index IS NOT NULL") == [(len(observations),)]
    assert q("SELECT agent_runtime_ms < 10000, ended_at - started_at > INTERVAL 4 MINUTE "
             "FROM runs WHERE run_id = 'openhands-basic_interactions'") == [(True, True)]
    con.close()
