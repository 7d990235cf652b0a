"""runlake import inspect: `.eval` logs (zip) read as their `.json` twins, eval-set folders,
damaged archives as one-line errors, grader tokens kept apart from the run's, the source's
times and grading explanations kept; tau-bench and tau2 reward info as explanations.

Fixtures: tests/fixtures/inspect/ (a real Inspect log in both forms; see SOURCES.md there)."""

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from transforms import warehouse
from transforms.cli import app
from transforms.importers import inspect_eval
from transforms.ingest import ingest

RUNNER = CliRunner()
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "inspect"
JSON_LOG = FIXTURES / "2025-05-12T20-28-26-04-00_security-guide.json"
EVAL_LOG = FIXTURES / "2025-05-12T20-28-26-04-00_security-guide.eval"


def _import(tmp_path: Path, *sources: Path, fmt: str = "inspect", out: str = "o") -> Any:
    return RUNNER.invoke(app, ["import", fmt, *map(str, sources), "--out", str(tmp_path / out)])


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _members(src: Path) -> dict[str, bytes]:
    """Every member of an .eval zip, inflated (zstd ones too), in order."""
    with zipfile.ZipFile(src) as z:
        return {i.filename: inspect_eval.read_member(src, z, i, 1 << 30) for i in z.infolist()}


def _zip(path: Path, members: dict[str, bytes],
         compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression=compression) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def test_eval_and_json_twins_import_to_the_same_runs(tmp_path: Path) -> None:
    """The real log as Inspect's `.json` and as its `.eval` (zstd members, times rewritten in
    UTC by a newer Inspect) give byte-identical landing lines, and so the same runs."""
    assert _import(tmp_path, JSON_LOG, out="j").exit_code == 0
    res = _import(tmp_path, EVAL_LOG, out="e")
    assert res.exit_code == 0, res.output
    assert "3 runs (3 of 3 graded passed)" in res.output
    name = "2025-05-12T20-28-26-04-00_security-guide.responses.jsonl"
    assert (tmp_path / "j" / name).read_bytes() == (tmp_path / "e" / name).read_bytes()
    ingest([tmp_path / "e"], tmp_path / "home")
    con = warehouse.connect(tmp_path / "home")
    rows = con.execute("SELECT run_id, day::VARCHAR, status, test_case_id, n_messages "
                       "FROM runs ORDER BY test_case_id").fetchall()
    con.close()
    doc = json.loads(JSON_LOG.read_text())
    assert rows == [(s["uuid"], "2025-05-13", "passed", f"security_guide/{s['id']}",
                     len(s["messages"])) for s in doc["samples"]]


def test_model_graded_sample_tokens_exclude_the_grader(tmp_path: Path) -> None:
    """Sample 1 answered with one 61 + 17 token call and was graded by one 259 + 292 token
    call; its model_usage (320 + 309) counts both. The run gets the solver's tokens, the
    grader's land in metadata_kv; the grader's explanation and the sample's times are kept."""
    sample = json.loads(JSON_LOG.read_text())["samples"][0]
    assert sample["model_usage"]["openai/gpt-4o-mini"]["input_tokens"] == 320
    assert sample["model_usage"]["openai/gpt-4o-mini"]["output_tokens"] == 309
    res = _import(tmp_path, EVAL_LOG)
    assert "3 sample(s) graded by a model" in res.output
    ingest([tmp_path / "o"], tmp_path / "home")
    con = warehouse.connect(tmp_path / "home")
    q = lambda sql: con.execute(sql, [sample["uuid"]]).fetchall()  # noqa: E731
    assert q("SELECT input_tokens, output_tokens, started_at::VARCHAR, ended_at::VARCHAR, "
             "left(outcome_explanation, 54) FROM runs WHERE run_id = ?") == [(
                 61, 17, "2025-05-13 00:28:26.845209+00", "2025-05-13 00:28:33.125961+00",
                 "To evaluate the submission against the expert's answer")]
    assert dict(q("SELECT key, value FROM metadata_kv WHERE run_id = ? AND key LIKE 'grader%'")
                ) == {"grader_input_tokens": "259", "grader_output_tokens": "292",
                      "grader_model_calls": "1"}
    con.close()


def _event(kind: str, span: str | None, **kw: Any) -> dict[str, Any]:
    return {"event": kind, "span_id": span, "timestamp": kw.pop("ts", None), **kw}


def _model(span: str | None, tokens_in: int, tokens_out: int, ts: str | None = None
           ) -> dict[str, Any]:
    return _event("model", span, ts=ts, output={"usage": {"input_tokens": tokens_in,
                                                           "output_tokens": tokens_out}})


def _log(samples: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    return {"version": 2, "status": "success", "eval": {"task": "qa", "model": "m",
                                                         "run_id": "r"},
            "stats": {"started_at": "2026-11-20T01:00:00+00:00",
                      "completed_at": "2026-11-20T02:00:00+00:00"}, "samples": samples, **kw}


def _sample(sid: int, events: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    return {"id": sid, "epoch": 1, "uuid": f"s{sid}",
            "messages": [{"role": "user", "content": "q"},
                         {"role": "assistant", "content": "a"}],
            "scores": {"model_graded_qa": {"value": "I", "explanation": "GRADE: I"}},
            "events": events, **kw}


def test_grader_calls_are_told_by_scorer_spans_and_steps(tmp_path: Path) -> None:
    """Constructed samples with the figures of the issue (53 + 46 to answer, 221 + 143 to
    grade): a scorer span (nested in `scorers`, model call in a child span), an older log's
    scorer step, and a sample without events (model_usage, grader included, with a note)."""
    spans = [_event("span_begin", "a", id="a", type="solver", name="generate"),
             _model("a", 53, 46),
             _event("span_begin", "s", id="s", name="scorers", type="scorers"),
             _event("span_begin", "g", id="g", parent_id="s", type="scorer",
                    name="model_graded_qa"),
             _event("span_begin", "c", id="c", parent_id="g", type=None, name="call"),
             _model("c", 221, 143)]
    steps = [_event("step", None, action="begin", type="solver", name="generate"),
             _model(None, 53, 46),
             _event("step", None, action="end", type="solver", name="generate"),
             _event("step", None, action="begin", type="scorer", name="model_graded_qa"),
             _model(None, 221, 143),
             _event("step", None, action="end", type="scorer", name="model_graded_qa")]
    usage = {"m": {"input_tokens": 274, "output_tokens": 189}}
    doc = _log([_sample(1, spans, model_usage=usage), _sample(2, steps, model_usage=usage),
                _sample(3, [], model_usage=usage)])
    src = tmp_path / "log.json"
    src.write_text(json.dumps(doc))
    res = _import(tmp_path, src)
    assert res.exit_code == 0, res.output
    assert "2 sample(s) graded by a model" in res.output
    assert "1 sample(s) without model events" in res.output
    meta = [line["response"]["metadata"] for line in _lines(tmp_path / "o" / "log.responses.jsonl")]
    grader = {"grader_input_tokens": 221, "grader_output_tokens": 143, "grader_model_calls": 1}
    assert meta[0] == meta[1] == {"model": "m", "total_input_tokens": 53,
                                  "total_output_tokens": 46, **grader}
    assert meta[2] == {"model": "m", "total_input_tokens": 274, "total_output_tokens": 189}


def test_attachments_are_resolved(tmp_path: Path) -> None:
    """Inspect moves long text to `attachments`, leaving `attachment://<hash>`: the run gets
    the text, in string content, in text parts, in the output and in the score's
    explanation."""
    big = "x" * 200
    sample = _sample(1, [], attachments={"h1": big, "h2": "long reason"})
    sample["messages"] = [{"role": "user", "content": "attachment://h1"},
                          {"role": "assistant", "content": [
                              {"type": "text", "text": "attachment://h1"}]}]
    sample["scores"] = {"s": {"value": "C", "explanation": "attachment://h2"}}
    sample["output"] = {"completion": "attachment://h1"}
    src = tmp_path / "log.json"
    src.write_text(json.dumps(_log([sample])))
    assert _import(tmp_path, src).exit_code == 0
    (line,) = _lines(tmp_path / "o" / "log.responses.jsonl")
    assert line["response"]["messages"][0]["content"] == big
    assert line["response"]["messages"][1]["content"] == [{"type": "text", "text": big}]
    assert line["response"]["final_response"] == big
    assert line["outcome"]["explanation"] == "long reason"


def test_times_come_from_the_sample_then_its_events_then_the_eval(tmp_path: Path) -> None:
    """A run is dated by its sample (started_at/completed_at), else its events' first and last
    timestamps, else the eval's stats (with a note), always in UTC; never the ingest day."""
    doc = _log([
        _sample(1, [_model("a", 1, 1, ts="2026-11-19T23:59:00-05:00")],
                started_at="2026-11-19T10:00:00+01:00",
                completed_at="2026-11-19T10:05:00+01:00"),
        _sample(2, [_event("span_begin", "a", id="a", ts="2026-11-18T08:00:05+00:00"),
                    _model("a", 1, 1, ts="2026-11-18T08:00:00.5+00:00"),
                    _event("span_end", "a", ts="2026-11-18T08:00:09+00:00")]),
        _sample(3, [])])
    src = tmp_path / "log.json"
    src.write_text(json.dumps(doc))
    res = _import(tmp_path, src)
    assert "1 sample(s) without times of their own" in res.output
    lines = _lines(tmp_path / "o" / "log.responses.jsonl")
    assert [(x["started_at"], x["ended_at"]) for x in lines] == [
        ("2026-11-19T09:00:00Z", "2026-11-19T09:05:00Z"),
        ("2026-11-18T08:00:00.500000Z", "2026-11-18T08:00:09Z"),
        ("2026-11-20T01:00:00Z", "2026-11-20T02:00:00Z")]
    assert [x["outcome"] for x in lines] == [
        {"status": "failed", "score": 0.0, "explanation": "GRADE: I",
         "scores": {"model_graded_qa": {"label": "I", "value": 0.0,
                                        "explanation": "GRADE: I"}}}] * 3


def test_an_eval_set_folder_imports_in_one_command(tmp_path: Path) -> None:
    """A folder: its `.eval` logs (zstd, or deflate as older Inspect wrote them) and its
    `.json` logs named by their start time, in subfolders too; the eval set's own files
    (logs.json, eval-set.json) and hidden files are left alone."""
    logs = tmp_path / "logs"
    (logs / "retry").mkdir(parents=True)
    (logs / "a.eval").write_bytes(EVAL_LOG.read_bytes())
    _zip(logs / "retry" / "b.eval", _members(EVAL_LOG))  # deflated members
    (logs / JSON_LOG.name).write_bytes(JSON_LOG.read_bytes())
    (logs / "logs.json").write_text("{}")
    (logs / "eval-set.json").write_text("{}")
    (logs / ".hidden.eval").write_text("not a log")
    res = _import(tmp_path, logs)
    assert res.exit_code == 0, res.output
    out = sorted(p.name for p in (tmp_path / "o").iterdir())
    assert out == ["2025-05-12T20-28-26-04-00_security-guide.responses.jsonl",
                   "a.responses.jsonl", "b.responses.jsonl"]
    texts = {(tmp_path / "o" / n).read_text() for n in out}
    assert len(texts) == 1  # the three forms of one log: the same lines
    res = _import(tmp_path, tmp_path / "logs" / "retry" / "..", fmt="tau2")
    assert res.exit_code == 2 and "a folder" in res.output
    empty = tmp_path / "empty"
    empty.mkdir()
    res = _import(tmp_path, empty)
    assert res.exit_code == 2 and "no Inspect logs" in res.output


def _damaged(tmp_path: Path) -> list[tuple[Path, str]]:
    members = _members(EVAL_LOG)
    cases = []
    data = EVAL_LOG.read_bytes()
    cut = tmp_path / "cut.eval"
    cut.write_bytes(data[: len(data) // 2])
    cases.append((cut, "its zip directory is missing or cut short"))
    text = tmp_path / "text.eval"
    text.write_text('{"eval": {}}')
    cases.append((text, "not a zip archive"))
    cases.append((_zip(tmp_path / "other.eval", {"README.md": b"hi"}),
                  "no header.json or _journal/start.json member"))
    cases.append((_zip(tmp_path / "badjson.eval", {**members, "samples/2_epoch_1.json": b"{"}),
                  "member 'samples/2_epoch_1.json' is not a JSON document"))
    cases.append((_zip(tmp_path / "list.eval", {**members, "samples/9_epoch_1.json": b"[]"}),
                  "is not an Inspect sample"))
    cases.append((_zip(tmp_path / "head.eval", {"header.json": b"[1]"}),
                  "is not an Inspect log header"))
    cases.append((_zip(tmp_path / "bz.eval", members, zipfile.ZIP_BZIP2),
                  "zip method 12"))
    # zstd data flipped inside the sample member: a CRC or zstd error, not a traceback
    with zipfile.ZipFile(EVAL_LOG) as z:
        info = z.getinfo("samples/1_epoch_1.json")
    flipped = bytearray(data)
    at = info.header_offset + 30 + len(info.filename) + len(info.extra) + 40
    flipped[at:at + 8] = bytes(b ^ 0xFF for b in flipped[at:at + 8])
    bad = tmp_path / "flipped.eval"
    bad.write_bytes(bytes(flipped))
    cases.append((bad, "damaged .eval log"))
    return cases


def test_damaged_eval_logs_are_one_line_errors(tmp_path: Path) -> None:
    for src, message in _damaged(tmp_path):
        res = _import(tmp_path, src)
        assert res.exit_code == 2, (src.name, res.output)
        assert message in res.output.replace("\n", " "), (src.name, res.output)
        assert "Traceback" not in res.output
    # An .eval given to another importer names what it is.
    res = _import(tmp_path, EVAL_LOG, fmt="tau2")
    assert res.exit_code == 2 and "use `runlake import inspect`" in res.output.replace("\n", " ")


def test_zip_bombs_and_member_names_are_contained(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A member that inflates past the limit is refused before or while inflating (its
    declared size may lie); member names are only matched, never turned into paths."""
    members = _members(EVAL_LOG)
    bomb = _zip(tmp_path / "bomb.eval", {**members, "samples/9_epoch_1.json": b" " * 300_000})
    monkeypatch.setattr(inspect_eval, "EVAL_MEMBER_LIMIT", 100_000)
    res = _import(tmp_path, bomb)
    assert res.exit_code == 2 and "100,000-byte limit" in res.output.replace("\n", " ")
    monkeypatch.setattr(inspect_eval, "EVAL_MEMBER_LIMIT", 512 * 1024 * 1024)
    monkeypatch.setattr(inspect_eval, "EVAL_TOTAL_LIMIT", 50_000)
    res = _import(tmp_path, EVAL_LOG)
    assert res.exit_code == 2 and "limit" in res.output and "Traceback" not in res.output
    monkeypatch.undo()
    sample = json.loads(members["samples/1_epoch_1.json"])
    evil = _zip(tmp_path / "names.eval", {
        "header.json": members["header.json"],
        "samples/../../../escaped_epoch_1.json": json.dumps({**sample, "uuid": "x"}).encode(),
        "/abs/samples/1_epoch_1.json": b"{",
        "samples/1_epoch_1.json": members["samples/1_epoch_1.json"]})
    res = _import(tmp_path, evil, out="out/inner")
    assert res.exit_code == 0, res.output
    assert "1 run " in res.output  # only the well-named sample member is read
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()
                  and "escaped" in p.name) == []
    assert [p.name for p in (tmp_path / "out" / "inner").iterdir()] == ["names.responses.jsonl"]


def test_a_journal_only_log_is_read_as_started(tmp_path: Path) -> None:
    """An eval still running (or killed) has `_journal/start.json` and no header.json."""
    members = _members(EVAL_LOG)
    header = json.loads(members["header.json"])
    start = {k: header[k] for k in ("version", "eval", "plan")}
    src = _zip(tmp_path / "running.eval", {"_journal/start.json": json.dumps(start).encode(),
                                           "samples/2_epoch_1.json":
                                               members["samples/2_epoch_1.json"]})
    res = _import(tmp_path, src)
    assert res.exit_code == 0, res.output
    assert "status is 'started'" in res.output and "1 run " in res.output


def test_tau_bench_and_tau2_reward_info_become_explanations(tmp_path: Path) -> None:
    """tau-bench's reward_info (r_actions / r_outputs) and tau2's (breakdown, database check,
    failed checks the reward is based on) become runs.outcome_explanation."""
    tau = [{"task_id": 1, "trial": 0, "reward": 0.0, "traj": [], "info": {"reward_info": {
                "reward": 0.0, "info": {"r_actions": 0.0, "gt_data_hash": "ab"}}}},
           {"task_id": 2, "trial": 0, "reward": 0.0, "traj": [], "info": {"reward_info": {
               "reward": 0.0, "info": {"r_outputs": 0.0, "outputs": {"23553": False,
                                                                     "12": True}}}}},
           {"task_id": 3, "trial": 0, "reward": 1.0, "traj": [], "info": {}}]
    (tmp_path / "tau.json").write_text(json.dumps(tau))
    tau2 = {"info": {}, "tasks": [], "simulations": [{
        "id": "sim-1", "task_id": "7", "messages": [], "start_time": "2026-11-19T10:00:00",
        "reward_info": {
            "reward": 0.0, "reward_basis": ["DB", "COMMUNICATE"],
            "reward_breakdown": {"DB": 0.0, "COMMUNICATE": 0.0},
            "db_check": {"db_match": False, "db_reward": 0.0},
            "action_checks": [{"action": {"name": "cancel", "arguments": {"id": "X"}},
                               "action_match": False}],
            "communicate_checks": [{"info": "1628", "met": False},
                                   {"info": "4", "met": True}]}}]}
    (tmp_path / "t2.json").write_text(json.dumps(tau2))
    assert _import(tmp_path, tmp_path / "tau.json", fmt="tau-bench").exit_code == 0
    assert _import(tmp_path, tmp_path / "t2.json", fmt="tau2").exit_code == 0
    ingest([tmp_path / "o"], tmp_path / "home")
    con = warehouse.connect(tmp_path / "home")
    rows = dict(con.execute("SELECT test_case_id, outcome_explanation FROM runs").fetchall())
    con.close()
    assert rows == {
        "tau/1": "reward 0; r_actions 0 (the database after the run differs from the one the "
                 "expected actions give)",
        "tau/2": "reward 0; r_outputs 0 (outputs missing from the replies: 23553)",
        "tau/3": None,
        "t2/7": "reward 0; breakdown DB 0, COMMUNICATE 0; database differs from the "
                     "expected one; not communicated: 1628"}


def test_zstd_reader_matches_deflate(tmp_path: Path) -> None:
    """The zstd path and zipfile's deflate path read the same document."""
    deflated = _zip(tmp_path / "d.eval", _members(EVAL_LOG))
    assert inspect_eval.read_eval_log(EVAL_LOG) == inspect_eval.read_eval_log(deflated)
