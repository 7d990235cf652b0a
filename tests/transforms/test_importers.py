"""runlake import: wrong formats get a message naming what the file looks like; names never
escape the output folder."""

import json
from pathlib import Path

from typer.testing import CliRunner

from transforms.cli import app

RUNNER = CliRunner()


def _write(tmp_path: Path, name: str, doc: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_wrong_format_names_what_the_file_looks_like(tmp_path: Path) -> None:
    tau2 = _write(tmp_path, "r.json", {"info": {}, "tasks": [], "simulations": []})
    res = RUNNER.invoke(app, ["import", "tau-bench", str(tau2), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "not a tau-bench file; it looks like a tau2 file: use `runlake import tau2`" in \
        res.output.replace("\n", " ")
    state = _write(tmp_path, "s.json", {"schemaVersion": "1.0.0",
                                        "data": {"conversationHistory": []}})
    res = RUNNER.invoke(app, ["import", "tau2", str(state), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "*.durable.json" in res.output
    attrs = _write(tmp_path, "a.json", {"gen_ai.operation.name": "chat", "input": "{}"})
    res = RUNNER.invoke(app, ["import", "otlp", str(attrs), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "attributes without ids or times" in res.output
    spans = _write(tmp_path, "sp.json", [{"traceId": "a" * 32, "spanId": "b" * 16}])
    res = RUNNER.invoke(app, ["import", "agentops", str(spans), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "looks like an otlp file" in res.output.replace("\n", " ")


def test_otlp_import_names_the_agent(tmp_path: Path) -> None:
    """--agent reaches every span of a collector export (service.name) and of a span array
    (gen_ai.agent.name), replacing what the source said."""
    export = {"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "svc"}}]},
        "scopeSpans": [{"spans": [{"traceId": "a" * 32, "spanId": "b" * 16}]}]}]}
    array = [{"traceId": "c" * 32, "spanId": "d" * 16, "attributes": [
        {"key": "gen_ai.agent.name", "value": {"stringValue": "old"}}]}]
    res = RUNNER.invoke(app, ["import", "otlp", str(_write(tmp_path, "e.json", export)),
                              str(_write(tmp_path, "s.json", array)), "--out",
                              str(tmp_path / "o"), "--agent", "planner"])
    assert res.exit_code == 0, res.output
    (e,) = [json.loads(x) for x in (tmp_path / "o" / "e.otlp.jsonl").read_text().splitlines()]
    assert e["resourceSpans"][0]["resource"]["attributes"] == [
        {"key": "service.name", "value": {"stringValue": "planner"}}]
    (s,) = [json.loads(x) for x in (tmp_path / "o" / "s.otlp.jsonl").read_text().splitlines()]
    assert s["attributes"] == [{"key": "gen_ai.agent.name", "value": {"stringValue": "planner"}}]


def test_bad_inputs_are_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "b.json"
    broken.write_text("[{")
    cases = [(["import", "tau2", str(broken)], "not a JSON document"),
             (["import", "tau2", str(tmp_path / "missing.json")], "cannot read"),
             (["import", "langsmith", str(broken)], "unknown format 'langsmith'"),
             (["import", "tau2", str(tmp_path)], "a folder"),
             (["import", "tau2", str(_write(tmp_path, "odd.json", {
                 "info": {}, "tasks": [], "simulations": [1]}))],
              "not a tau2 file runlake can read: a part has an unexpected shape")]
    for args, message in cases:
        res = RUNNER.invoke(app, [*args, "--out", str(tmp_path / "o")])
        assert res.exit_code == 2 and message in res.output, res.output
        assert "Traceback" not in res.output


def test_output_names_stay_in_the_output_folder(tmp_path: Path) -> None:
    src = _write(tmp_path, "..%2F..%2Fevil name.json",
                 [{"task_id": 1, "trial": 0, "reward": 1.0, "info": {}, "traj": [
                     {"role": "user", "content": "hi"},
                     {"role": "assistant", "content": "<b>hello</b>"}]}])
    res = RUNNER.invoke(app, ["import", "tau-bench", str(src), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    written = list((tmp_path / "o").iterdir())
    assert [p.name for p in written] == ["2F.._2Fevil_name.responses.jsonl"]
    line = json.loads(written[0].read_text())
    assert line["response"]["final_response"] == "<b>hello</b>"
    assert line["outcome"] == {"status": "passed", "score": 1.0}


def test_agent_reaches_the_spans_of_an_export_record(tmp_path: Path) -> None:
    """--agent wins over the agent a span names, inside collector export records too."""
    from transforms import warehouse
    from transforms.ingest import ingest

    export = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [
        {"traceId": "a" * 32, "spanId": "b" * 16, "startTimeUnixNano": "1",
         "endTimeUnixNano": "2", "attributes": [
             {"key": "gen_ai.agent.name", "value": {"stringValue": "old"}}]}]}]}]}
    res = RUNNER.invoke(app, ["import", "otlp", str(_write(tmp_path, "e.json", export)),
                              "--out", str(tmp_path / "o"), "--agent", "planner"])
    assert res.exit_code == 0 and "1 span " in res.output, res.output
    ingest([tmp_path / "o"], tmp_path / "home")
    con = warehouse.connect(tmp_path / "home")
    assert con.execute("SELECT agent FROM spans").fetchall() == [("planner",)]
    con.close()


def test_odd_but_importable_sources(tmp_path: Path) -> None:
    """Odd shapes never give a traceback; NaN (which Python's json writes) becomes null with a
    note; an OpenHands step without its LLM response makes the run's tokens unknown."""
    odd = _write(tmp_path, "odd.json", {"resourceSpans": [{"scopeSpans": [[1], {"spans": 5}]}]})
    res = RUNNER.invoke(app, ["import", "otlp", str(odd), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0 and "0 spans" in res.output, res.output
    nan = tmp_path / "nan.json"
    nan.write_text('[{"task_id": 1, "reward": NaN, "info": {}, "traj": '
                   '[{"role": "user", "content": "hi"}]}]')
    res = RUNNER.invoke(app, ["import", "tau-bench", str(nan), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0 and "1 NaN or Infinity value(s)" in res.output, res.output
    assert '"score": null' in (tmp_path / "o" / "nan.responses.jsonl").read_text()
    events = [
        {"id": 0, "source": "user", "action": "message", "message": "fix it"},
        {"id": 1, "source": "agent", "action": "run", "args": {"command": "ls"},
         "tool_call_metadata": {"tool_call_id": "t1", "model_response": {
             "model": "m", "usage": {"prompt_tokens": 100, "completion_tokens": 10},
             "choices": [{"message": {"role": "assistant", "content": "step 1", "tool_calls": [
                 {"id": "t1", "type": "function", "function": {"name": "run",
                                                               "arguments": "{}"}}]}}]}}},
        {"id": 2, "source": "agent", "observation": "run", "content": "a b",
         "tool_call_metadata": {"tool_call_id": "t1"}},
        {"id": 3, "source": "agent", "action": "run", "args": {"command": "pwd"}},
        {"id": 4, "source": "environment", "observation": "agent_state_changed"}]
    res = RUNNER.invoke(app, ["import", "openhands", str(_write(tmp_path, "oh.json", events)),
                              "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert "1 agent step(s) carry no LLM response" in res.output
    assert "left out: 1 agent_state_changed" in res.output
    (line,) = [json.loads(x) for x in (tmp_path / "o" / "oh.responses.jsonl").read_text()
               .splitlines()]
    assert [m["role"] for m in line["response"]["messages"]] == [
        "user", "assistant", "tool", "assistant"]
    assert "total_input_tokens" not in line["response"]["metadata"]
