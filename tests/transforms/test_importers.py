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


def test_bad_inputs_are_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "b.json"
    broken.write_text("[{")
    cases = [(["import", "tau2", str(broken)], "not a JSON document"),
             (["import", "tau2", str(tmp_path / "missing.json")], "cannot read"),
             (["import", "langsmith", str(broken)], "unknown format 'langsmith'"),
             (["import", "tau2", str(tmp_path)], "a folder")]
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
