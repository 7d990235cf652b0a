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
