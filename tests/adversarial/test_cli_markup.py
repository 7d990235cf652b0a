"""Data is never markup: trace text, file names and column names print as they are in every
command and every output mode (a pipe, a file, a terminal): no Rich markup (`[/INST]` in a
Llama transcript is text, not a closing tag), no emoji codes (`:smiley:` stays `:smiley:`), no
highlighting of data."""

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from transforms.cli import app

RUNNER = CliRunner()
TEXT = "<s>[INST] hi :smiley: [/INST] [b]y[/b] [link=https://e.x]x"  # under 60: unfolded
AGENT = ":smiley: [/INST] agent"
NAME = "[INST] :smiley: [red]x [bold]y"  # no slash: a file name
EMOJI = "\U0001f603"  # what Rich prints for :smiley:


def _line(run_id: str, status: str) -> dict[str, object]:
    line: dict[str, object] = {
        "run_id": run_id, "agent": AGENT, "test_case_id": "[/c] :smiley:",
        "started_at": "2026-11-20T02:00:00Z", "outcome": {"status": status},
        "response": {"metadata": {"model": "m [x] :smiley:"}}}
    if status == "error":
        line["outcome"] = {"status": "error", "error": TEXT}
    else:
        line["response"] = {"final_response": TEXT, "metadata": {"model": "m [x] :smiley:"},
                            "messages": [{"role": "user", "content": TEXT},
                                         {"role": "assistant", "content": TEXT}]}
    return line


@pytest.fixture(scope="module")
def markup_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("markup")
    landing = root / "landing" / f"{NAME}.responses.jsonl"
    landing.parent.mkdir()
    landing.write_text("".join(json.dumps(x) + "\n" for x in (_line("r1", "passed"),
                                                               _line("r2", "error"))))
    res = RUNNER.invoke(app, ["ingest", str(landing.parent), "--home", str(root / "home")])
    assert res.exit_code == 0, res.output
    assert EMOJI not in res.output, res.output  # the file table folds the name: no substring
    return root / "home"


def _ok(args: list[str], *expected: str) -> str:
    res = RUNNER.invoke(app, args)
    assert res.exit_code == 0, (args, res.output)
    assert EMOJI not in res.output, (args, res.output)
    for text in expected:
        assert text in res.output, (args, text, res.output)
    return res.output


def test_sql_prints_data_as_text_into_a_pipe(markup_home: Path, tmp_path: Path) -> None:
    home = ["--home", str(markup_home)]
    _ok(["sql", "select text from messages", *home], TEXT)
    _ok(["sql", "select agent, test_case_id, model, outcome_error from runs where run_id = 'r2'",
         *home], AGENT, "[/c] :smiley:", "m [x] :smiley:", TEXT)
    _ok(["sql", "select 1 as \"[/INST] :smiley:\", ':+1: [/]' as \"[b]\"", *home],
        "[/INST] :smiley:", ":+1: [/]", "[b]")
    _ok(["sql", "select * from duckdb_settings()", *home], "allowed_directories")
    _ok(["sql", "select regexp_extract(source_file, '[^/]*$') from ingest_files", *home], NAME)
    # The line saying where a result was written names the file as it is.
    target = tmp_path / "[o] :smiley: [bold]x.csv"
    _ok(["sql", "select text from messages", "--format", "csv", "--output", str(target),
         *home], str(target))
    assert TEXT in target.read_text()
    for fmt in ("csv", "json"):
        _ok(["sql", "select text from messages", "--format", fmt, *home],
            TEXT if fmt == "csv" else json.dumps(TEXT)[1:-1])


def test_other_commands_print_data_as_text(markup_home: Path, tmp_path: Path) -> None:
    home = ["--home", str(markup_home)]
    _ok(["history", *home], "[INST]")  # its table folds the name
    _ok(["views", *home], "runs")
    res = RUNNER.invoke(app, ["report", "--home", str(markup_home), "--day", "2026-11-20"])
    assert res.exit_code == 0, res.output
    assert f"CRASHED {AGENT} / m [x] :smiley:: 1 run ({TEXT})" in res.output, res.output
    assert EMOJI not in res.output
    bad = tmp_path / f"{NAME}.responses.jsonl"
    bad.write_text(json.dumps({"run_id": ":smiley: [/x]", "outcome": "[/INST]"}) + "\n")
    res = RUNNER.invoke(app, ["validate", str(bad)])
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    assert f"{bad}:1" in res.output and EMOJI not in res.output, res.output


def test_sql_prints_data_as_text_on_a_terminal(markup_home: Path) -> None:
    """On a terminal (a pseudo-terminal here) too: the data row holds the text as stored and no
    escape sequence (styles belong to the header only)."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "250", "LINES": "50", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    short = "[INST] :smiley: [/INST] [b]x[/b]"  # under the 60 columns a cell is folded at
    query = f"select '{short}' as \"[/h]\", 42 as n, 'True None 1.5 \"s\"' as w"
    proc = subprocess.run(
        [sys.executable, "-c", "from transforms.cli import main; main()", "sql", query,
         "--home", str(markup_home)], stdout=follower, stderr=follower, env=env, timeout=60,
        check=False)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    shown = b"".join(chunks).decode()
    assert proc.returncode == 0, shown
    assert "\x1b[" in shown, shown  # a terminal indeed: the header is styled
    row = next(line for line in shown.splitlines() if "[INST]" in line)
    assert short in row and "True None 1.5 \"s\"" in row and EMOJI not in row, row
    assert "[/h]" in shown
    assert "\x1b" not in row, repr(row)
