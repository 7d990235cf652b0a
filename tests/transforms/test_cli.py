"""The runlake command as a user meets it: summaries, exports, and clear errors."""

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
from typer.testing import CliRunner

from transforms.cli import app

RUNNER = CliRunner()
LINE = {"run_id": "r1", "agent": "a", "outcome": {"status": "passed"},
        "response": {"final_response": "ok", "messages": [{"role": "assistant", "content": "ok"}]}}


def cli(*args: str) -> Any:
    return RUNNER.invoke(app, list(args))


def test_ingest_then_sql(write_lines: Callable[..., Path], home: Path) -> None:
    """ingest prints counts and where the warehouse is; sql answers from it."""
    path = write_lines([LINE, "oops"])
    res = cli("ingest", str(path), "--home", str(home))
    assert res.exit_code == 0, res.output
    assert "1 accepted, 1 quarantined" in res.output
    assert "invalid_json 1" in res.output
    assert "warehouse.duckdb" in res.output
    res = cli("sql", "select status, count(*) as n from runs group by 1", "--home", str(home))
    assert res.exit_code == 0, res.output
    assert "passed" in res.output and "1 row\n" in res.output


def test_sql_exports(write_lines: Callable[..., Path], home: Path, tmp_path: Path) -> None:
    """--format csv|json|parquet with --output writes the result."""
    cli("ingest", str(write_lines([LINE])), "--home", str(home))
    q = "select run_id, status from runs"
    for fmt in ("csv", "json", "parquet"):
        out = tmp_path / f"out.{fmt}"
        res = cli("sql", q, "--home", str(home), "--format", fmt, "--output", str(out))
        assert res.exit_code == 0, res.output
    assert pl.read_csv(tmp_path / "out.csv").rows() == [("r1", "passed")]
    assert json.loads((tmp_path / "out.json").read_text()) == [{"run_id": "r1",
                                                                "status": "passed"}]
    assert pl.read_parquet(tmp_path / "out.parquet").rows() == [("r1", "passed")]


def test_sql_table_into_a_pipe_keeps_its_width(write_lines: Callable[..., Path],
                                               home: Path) -> None:
    """Printed into a pipe, a wide result is one line per row, not folded into 80 columns."""
    cli("ingest", str(write_lines([LINE])), "--home", str(home))
    res = cli("sql", "select * from v_pass_rates", "--home", str(home))
    assert res.exit_code == 0, res.output
    header, _, row, *_ = res.output.splitlines()
    assert "n_contract_violations" in header and "pass_rate_high" in header
    assert [c.strip() for c in row.split("│")][1:5] == ["a", "unknown", "1", "1"]


def test_errors_are_one_clear_line(write_lines: Callable[..., Path], home: Path,
                                   tmp_path: Path) -> None:
    """Bad paths, bad SQL, writes and unreadable inputs exit non-zero with a message."""
    res = cli("ingest", str(tmp_path / "missing"), "--home", str(home))
    assert res.exit_code == 2 and "no such file or folder" in res.output
    res = cli("sql", "select 1", "--home", str(tmp_path / "nowhere"))
    assert res.exit_code == 2 and "runlake ingest" in res.output
    cli("ingest", str(write_lines([LINE])), "--home", str(home))
    res = cli("sql", "select * from no_such_view", "--home", str(home))
    assert res.exit_code == 1 and "query failed" in res.output
    res = cli("sql", "create table t (i int)", "--home", str(home))
    assert res.exit_code == 2 and "runs one query" in res.output and "CREATE" in res.output
    bad = write_lines(["not json", "[1]"], name="bad.responses.jsonl")
    res = cli("ingest", str(bad), "--home", str(tmp_path / "h2"))
    assert res.exit_code == 1 and "no line could be read as a run" in res.output
    odd = write_lines([LINE], name="odd.jsonl", folder="elsewhere")
    res = cli("ingest", str(odd), "--home", str(tmp_path / "h3"))
    assert res.exit_code == 2 and "kind unknown" in res.output
    res = cli("ingest", str(odd), "--home", str(tmp_path / "h3"), "--kind", "responses")
    assert res.exit_code == 0, res.output


def test_no_traceback_from_the_installed_command(tmp_path: Path) -> None:
    """The console script prints a message, not a traceback, on a bad query."""
    runlake = Path(sys.executable).parent / "runlake"
    proc = subprocess.run([str(runlake), "sql", "select 1", "--home", str(tmp_path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "no warehouse" in proc.stderr


def test_schema_and_validate(write_lines: Callable[..., Path]) -> None:
    """schema prints the contracts' JSON Schema; validate explains a bad record by field."""
    res = cli("schema", "response")
    assert res.exit_code == 0
    doc = json.loads(res.output)
    assert "final_response" in doc["required"]
    path = write_lines([LINE, {"run_id": "x", "response": {"messages": [{"role": "bot"}]}}])
    res = cli("validate", str(path))
    assert res.exit_code == 1
    assert "final_response" in res.output and "role" in res.output


def test_span_schema_and_validate(write_lines: Callable[..., Path]) -> None:
    """The Span contract is exported; validate names the fields a bad span breaks."""
    res = cli("schema", "span")
    assert res.exit_code == 0
    assert {"context", "start_time", "end_time"} <= set(json.loads(res.output)["required"])
    good = {"name": "s", "context": {"trace_id": "t", "span_id": "s", "trace_state": ""},
            "kind": "SpanKind.INTERNAL", "start_time": 1, "end_time": 2,
            "status": {"status_code": "StatusCode.OK"}, "attributes": {},
            "resource": {"attributes": {}, "schema_url": ""}}
    bad = {**good, "kind": "CLIENT", "log_request": {"provider": "openai", "model": "m",
           "input": {"type": "chat", "messages": [{"role": "user", "content": "plain"}]},
           "output": {"type": "chat", "messages": []}}}
    path = write_lines([{"spans": [good]}, bad], name="x.spans.jsonl")
    res = cli("validate", str(path))
    assert res.exit_code == 1
    assert "x.spans.jsonl:2" in res.output and "kind" in res.output
    assert "x.spans.jsonl:1" not in res.output


def test_validate_otlp_and_durable_files_with_their_readers(write_lines: Callable[..., Path],
                                                            tmp_path: Path) -> None:
    """OTLP and durable files are explained by the reader that ingests them; a file whose kind
    its name does not tell is refused with the way out (--kind)."""
    good = {"traceId": "a" * 32, "spanId": "b" * 16, "startTimeUnixNano": "1",
            "endTimeUnixNano": "2", "attributes": []}
    bad = {**good, "spanId": "c" * 16, "kind": 9}
    path = write_lines([good, bad, {"x": 1}], name="t.otlp.jsonl")
    res = cli("validate", str(path))
    assert res.exit_code == 1
    assert "t.otlp.jsonl:1" not in res.output
    assert "t.otlp.jsonl:2" in res.output and "kind '9' is not an OTLP span kind" in res.output
    assert "t.otlp.jsonl:3" in res.output and "unrecognized_record" in res.output
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"schemaVersion": "v1", "data": {"conversationHistory": []}},
                                indent=2))
    res = cli("validate", str(state))
    assert res.exit_code == 2 and "pass --kind" in res.output
    res = cli("validate", "--kind", "durable", str(state))
    assert res.exit_code == 1
    assert "state.json:1" in res.output and "schema_version_invalid" in res.output


def test_validate_reports_a_reader_that_trips(write_lines: Callable[..., Path],
                                             monkeypatch: Any) -> None:
    """Should a reader raise on a record, validate names it for that line, no traceback."""
    from transforms.normalize.otlp import OtlpNormalizer

    def trips(*_: Any) -> None:
        raise KeyError("a reader bug")

    monkeypatch.setattr(OtlpNormalizer, "add", trips)
    path = write_lines([{"traceId": "a", "spanId": "b"}], name="t.otlp.jsonl")
    res = cli("validate", str(path))
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert "runlake could not read this record (KeyError" in res.output


def test_odd_outputs_and_arguments_get_one_line(write_lines: Callable[..., Path], home: Path,
                                                tmp_path: Path) -> None:
    """Raw bytes export as hex; bad numbers and unwritable outputs are refused in one line;
    a damaged warehouse file is named, never a traceback; terminal control characters from
    traces are shown escaped."""
    path = write_lines([{**LINE, "agent": "\x1b[2Jevil\u202e"}, "oops"])
    assert cli("ingest", str(path), "--home", str(home)).exit_code == 0
    res = cli("sql", "select raw from quarantine", "--home", str(home), "--format", "csv")
    assert res.exit_code == 0 and "6f6f7073" in res.output  # the raw line, as hex
    res = cli("sql", "select agent from runs", "--home", str(home))
    assert "\x1b" not in res.output and "\u202e" not in res.output
    assert "\\x1b[2Jevil\\u202e" in res.output
    for args, message in (
            (["ingest", str(path), "--home", str(home), "--workers", "0"], "--workers 0"),
            (["report", "--home", str(home), "--baseline-days", "99999999999"],
             "--baseline-days"),
            (["sql", "select 1", "--home", str(home), "--limit", "-5"], "--limit -5")):
        res = cli(*args)
        assert res.exit_code == 2 and message in res.output, res.output
    # A damaged warehouse file: readers answer from the lake's tables and leave it alone
    # (a writer builds it again); a bad output path is still one line.
    damaged = b"not a database" * 100
    (home / "warehouse.duckdb").write_bytes(damaged)
    runlake = Path(sys.executable).parent / "runlake"
    for args in (["sql", "select 1"], ["views"]):
        done = subprocess.run([str(runlake), *args, "--home", str(home)], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    assert (home / "warehouse.duckdb").read_bytes() == damaged
    done = subprocess.run([str(runlake), "sql", "select 1", "--output",
                           str(tmp_path / "no" / "x.csv"), "--format", "csv", "--home",
                           str(home)], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("error:"), done.stderr


def test_import_never_overwrites_within_one_run(tmp_path: Path) -> None:
    doc = [{"task_id": 1, "reward": 1.0, "info": {}, "traj": [{"role": "user", "content": "x"}]}]
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "results.json").write_text(json.dumps(doc))
    res = cli("import", "tau-bench", str(tmp_path / "a" / "results.json"),
              str(tmp_path / "b" / "results.json"), "--out", str(tmp_path / "o"))
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [
        "results-2.responses.jsonl", "results.responses.jsonl"]


def test_sql_runs_queries_only(write_lines: Callable[..., Path], home: Path,
                               tmp_path: Path) -> None:
    """No statement but one query: COPY could write files, ATTACH open others."""
    assert cli("ingest", str(write_lines([LINE])), "--home", str(home)).exit_code == 0
    target = tmp_path / "out.csv"
    for query in (f"copy (select 1) to '{target}'", "select 1; select 2",
                  f"attach '{tmp_path / 'x.db'}'"):
        res = cli("sql", query, "--home", str(home))
        assert res.exit_code == 2 and "runs one query" in res.output, res.output
    assert not target.exists()
    assert cli("sql", "describe runs", "--home", str(home)).exit_code == 0


def test_validate_reports_what_ingest_flags_and_csv_takes_lists(
        write_lines: Callable[..., Path], home: Path) -> None:
    """A strict run without its assistant reply passes the JSON Schema but breaks the
    contract: validate says so, as ingest does. Lists export to CSV as JSON text."""
    strict = {"run_id": "s1", "agent": "a", "response_contract": {
        "response_mode": "rich", "strictness": "strict"},
        "response": {"final_response": "ok", "messages": [{"role": "user", "content": "hi"}],
                     "metadata": {"total_input_tokens": "12"}}}
    path = write_lines([LINE, strict])
    res = cli("validate", str(path))
    assert res.exit_code == 1 and ":2" in res.output and ":1\n" not in res.output
    assert "response_contract_violation" in res.output and "metadata_malformed" in res.output
    assert cli("ingest", str(path), "--home", str(home)).exit_code == 0
    res = cli("sql", "select run_id, codes from v_contract_violations", "--home", str(home),
              "--format", "csv")
    assert res.exit_code == 0, res.output
    assert 's1,"[""response_contract_violation""]"' in res.output


def test_validate_does_not_hold_an_unfinished_run_to_its_answer(
        write_lines: Callable[..., Path]) -> None:
    """A run that crashed or was skipped has no answer: with final_response absent, null or
    empty it breaks no contract (the JSON Schema's required final_response included), while a
    failed run's empty answer, or an unfinished run's answer of the wrong type, still does."""
    def line(run_id: str, status: str, **response: Any) -> dict[str, Any]:
        return {"run_id": run_id, "agent": "a", "outcome": {"status": status},
                "response": {"messages": [{"role": "user", "content": "hi"}], **response}}

    fine = [line("skipped-absent", "skipped"), line("error-null", "error", final_response=None),
            line("error-empty", "error", final_response=""),
            line("skipped-blank", "skipped", final_response="  "),
            {"run_id": "turn", "agent": "a", "session_id": "s", "turn_index": 0,
             "outcome": {"status": "skipped"}, "response": {"messages": []}}]
    res = cli("validate", str(write_lines(fine)))
    assert res.exit_code == 0, res.output
    assert "every line fits the contracts" in res.output
    bad = [line("failed-empty", "failed", final_response=""),
           line("skipped-number", "skipped", final_response=42),
           line("passed-absent", "passed")]
    res = cli("validate", str(write_lines(bad, name="bad.responses.jsonl")))
    assert res.exit_code == 1
    assert "bad.responses.jsonl:1\n  final_response_empty: final_response is empty" \
        in res.output
    assert ":2\n  response.final_response: Input should be a valid string" in res.output
    assert ":3\n  response.final_response: Field required" in res.output
    assert "3 line(s) break the contracts" in res.output


def test_kind_and_format_choices_are_checked_by_the_cli(tmp_path: Path) -> None:
    """--kind offers exactly the kinds the readers know; a wrong --kind or --format is refused
    by the option itself (exit 2), listing the choices."""
    from typer.testing import CliRunner

    from transforms.cli import KindChoice, app
    from transforms.kinds import KINDS

    assert [k.value for k in KindChoice] == list(KINDS)
    res = CliRunner().invoke(app, ["ingest", str(tmp_path), "--kind", "nope"])
    assert res.exit_code == 2 and "responses" in res.output and "durable" in res.output
    res = CliRunner().invoke(app, ["sql", "select 1", "--home", str(tmp_path),
                                   "--format", "xml"])
    assert res.exit_code == 2 and "parquet" in res.output


def test_sql_table_prints_dates_in_lists_and_structs_as_text(write_lines: Callable[..., Path],
                                                              home: Path) -> None:
    """ingest_files.days, and any date, time or timestamp inside a list or struct, print as
    text (2026-11-14), as they do alone, never as Python's datetime.date(2026, 11, 14)."""
    line = {**LINE, "started_at": "2026-11-14T02:00:00Z"}
    assert cli("ingest", str(write_lines([line])), "--home", str(home)).exit_code == 0
    res = cli("sql", "select days from ingest_files", "--home", str(home))
    assert res.exit_code == 0 and "[2026-11-14, " in res.output, res.output
    query = ("select [DATE '2026-11-14', NULL] as d, {'t': TIMESTAMP '2026-11-14 02:03:04', "
             "'l': [[DATE '2026-01-02']], 's': 'x'} as s, [TIME '01:02:03'] as h, "
             "[0.5::double, 1234.5678::double] as f, [TIMESTAMPTZ '2026-11-14 02:03:04+00'] "
             "as z")
    res = cli("sql", query, "--home", str(home))
    assert res.exit_code == 0, res.output
    assert "datetime" not in res.output and "Decimal" not in res.output, res.output
    row = res.output.splitlines()[2]
    assert "[2026-11-14, NULL]" in row, row
    assert "{'t': 2026-11-14 02:03:04, 'l': [[2026-01-02]], 's': x}" in row, row
    assert "[01:02:03]" in row and "[0.5, 1234.57]" in row, row
    assert "[2026-11-14 02:03:04+00:00]" in row, row
