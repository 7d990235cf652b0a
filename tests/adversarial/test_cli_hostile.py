"""The runlake command on hostile settings and names: a bad RUNLAKE_* value is one line
naming the variable, control characters from traces never reach the terminal raw, and a
re-run over many unchanged files is counted in one line, not listed."""

import json
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.adversarial.lines import response_line
from transforms.cli import app

RUNNER = CliRunner()


def cli(*args: str, env: dict[str, str] | None = None) -> Any:
    return RUNNER.invoke(app, list(args), env=env)


@pytest.mark.parametrize(("variable", "value", "command"), [
    ("RUNLAKE_RETENTION_HOURS", "abc", "ingest"),
    ("RUNLAKE_WORKERS", "-x", "ingest"),
    ("RUNLAKE_WORKERS", "-x", "sql"),
    ("RUNLAKE_FRESHNESS_HOURS", "soon", "report"),
])
def test_a_bad_setting_is_one_line_naming_the_variable(variable: str, value: str, command: str,
                                                       write_lines: Callable[..., Path],
                                                       tmp_path: Path) -> None:
    args = {"ingest": ["ingest", str(write_lines([response_line("r1")]))],
            "sql": ["sql", "select 1"], "report": ["report"]}[command]
    res = cli(*args, env={variable: value, "RUNLAKE_HOME": str(tmp_path / "home")})
    assert res.exit_code == 2, res.output
    assert res.output.startswith(f"error: {variable}={value!r}:"), res.output
    assert len(res.output.strip().splitlines()) == 1 and "Traceback" not in res.output


def test_control_characters_in_names_are_escaped_in_the_terminal(
        tmp_path: Path, write_lines: Callable[..., Path], home: Path) -> None:
    """An agent whose name holds a newline, regressing: the report's lines and the sql table
    show it escaped, so it can never print a line of its own."""
    agent = "evil\nREGRESSION fake / gpt: pass rate 0% -> 100%\t\r"
    latest = date(2026, 11, 20)
    lines = [{"run_id": f"{d}-{i}", "agent": agent, "test_case_id": f"c{i}",
              "started_at": f"{latest - timedelta(days=d)}T10:00:00Z",
              "outcome": {"status": "failed" if d == 0 else "passed"},
              "response": {"final_response": "ok", "metadata": {"model": "m"}}}
             for d in range(8) for i in range(20)]
    assert cli("ingest", str(write_lines(lines)), "--home", str(home)).exit_code == 0
    res = cli("report", "--day", str(latest), "--home", str(home))
    assert res.exit_code == 0, res.output
    out = res.output.splitlines()
    assert not [x for x in out if x.startswith("REGRESSION") or x.startswith("evil")]
    assert any("REGRESSION evil\\nREGRESSION fake" in x and "\\t\\r" in x for x in out), out
    res = cli("sql", "select distinct agent from runs", "--home", str(home))
    assert "evil\\nREGRESSION" in res.output and "\r" not in res.output


def test_an_unchanged_rerun_over_many_files_is_one_line(tmp_path: Path, home: Path) -> None:
    """Unchanged files are counted in one line; the files read this time are listed."""
    landing = tmp_path / "landing"
    landing.mkdir()
    for i in range(40):
        (landing / f"f{i:03}.responses.jsonl").write_text(json.dumps(response_line(f"r{i}")) + "\n")
    assert cli("ingest", str(landing), "--home", str(home)).exit_code == 0
    res = cli("ingest", str(landing), "--home", str(home))
    assert res.exit_code == 0, res.output
    assert "40 files unchanged, skipped" in res.output
    assert "f001.responses.jsonl" not in res.output and len(res.output.splitlines()) <= 4
    (landing / "f007.responses.jsonl").write_text(json.dumps(response_line("r7b")) + "\n")
    res = cli("ingest", str(landing), "--home", str(home))
    assert "39 files unchanged, skipped" in res.output
    assert "f007.responses.jsonl" in res.output.replace("\n", "").replace(" ", "").replace(
        "│", "")
