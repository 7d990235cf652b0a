"""What a new user met on a first walk through the command line: the default home named with
how to choose another, a bad setting told as the README says, the ingest summary giving what
the tables hold, --help without `<bool>` or `{PATHS...}...`, counts in the singular, dollars in
plain digits, file paths never folded into pieces at 80 columns."""

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from tests.conftest import REPO, SamplesLake
from transforms.cli import app
from transforms.cli import ingest as ingest_cli
from transforms.cli.query import cell
from transforms.ingest import FileReport

RUNNER = CliRunner()


def test_no_warehouse_at_the_default_home_names_runlake_home_and_home(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUNLAKE_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    res = RUNNER.invoke(app, ["sql", "select 1"])
    assert res.exit_code == 2
    assert res.output.count("\n") == 1
    assert (f"no warehouse at {tmp_path}/warehouse/warehouse.duckdb: neither --home nor "
            "RUNLAKE_HOME is set") in res.output
    assert "set RUNLAKE_HOME or pass --home" in res.output
    assert not (tmp_path / "warehouse").exists()
    # A home that was chosen is not second-guessed.
    res = RUNNER.invoke(app, ["sql", "select 1", "--home", str(tmp_path / "mine")])
    assert res.exit_code == 2 and "RUNLAKE_HOME" not in res.output


@pytest.mark.parametrize("value", ["notaurl", "ftp://example.com/hook", "http://"])
def test_a_bad_webhook_url_stops_the_command_naming_the_variable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("RUNLAKE_WEBHOOK_URL", value)
    res = RUNNER.invoke(app, ["sql", "select 1", "--home", str(tmp_path)])
    assert res.exit_code == 2
    assert res.output == (f"error: RUNLAKE_WEBHOOK_URL={value!r}: not an http:// or https:// "
                          "URL\n")
    # The README says so.
    readme = (REPO / "README.md").read_text()
    assert "A value that is not valid stops any command with one line naming the variable" \
        in readme


def test_ingest_summary_gives_what_the_tables_hold(samples_lake: SamplesLake,
                                                   tmp_path: Path) -> None:
    """The samples repeat one run_id (407 lines of runs read, 406 runs kept) and hold 85 traces
    that no response line names (84 of the trace-only agent, one whose line was cut), and the
    flags table counts each finding once and adds the checks across runs: the summary's
    numbers are the tables' counts, the lines read beside those that differ."""
    home = tmp_path / "home"
    res = RUNNER.invoke(app, ["ingest", str(REPO / "data_samples"), "--home", str(home),
                              "--tools", str(REPO / "data_samples" / "tools.yaml")])
    assert res.exit_code == 0, res.output
    [rows_line] = [ln for ln in res.output.splitlines()
                   if ln.startswith("rows in the tables: ")]
    [flags_line] = [ln for ln in res.output.splitlines() if ln.startswith("flags: ")]
    said = {m[1]: int(m[2].replace(",", "")) for m in re.finditer(
        r"(\w+) ([\d,]+)( \([\d,]+ read(, [\d,]+ made from traces)?\))?",
        rows_line.split(": ", 1)[1].split(" [")[0])}
    res = RUNNER.invoke(app, ["sql", " UNION ALL ".join(
        f"SELECT '{t}' AS t, count(*) AS n FROM {t}" for t in said), "--home", str(home),
        "--format", "csv"])
    held = {t: int(n) for t, n in (ln.split(",") for ln in res.output.splitlines()[1:])}
    assert said == held
    assert "runs 491 (407 read, 85 made from traces)" in rows_line
    assert "a repeated run_id keeps one" in rows_line
    by_code = {m[1]: int(m[2].replace(",", "")) for m in re.finditer(
        r"(\w+) ([\d,]+)", flags_line.split(": ", 1)[1])}
    assert sum(by_code.values()) == held["flags"]
    assert by_code["run_id_duplicate"] == 1


def test_help_shows_no_bool_for_flags_and_plain_argument_names() -> None:
    for command, usage in (("ingest", "Usage: runlake ingest [OPTIONS] PATH..."),
                           ("sql", "Usage: runlake sql [OPTIONS] QUERY"),
                           ("schema", "Usage: runlake schema [OPTIONS] [FMT]"),
                           ("report", "Usage: runlake report [OPTIONS]")):
        res = RUNNER.invoke(app, [command, "--help"], env={"COLUMNS": "100"}, prog_name="runlake")
        assert res.exit_code == 0
        assert usage in res.output
        assert "<bool>" not in res.output and "{" not in res.output


def test_counts_are_singular_for_one(tmp_path: Path, samples_lake: SamplesLake) -> None:
    res = RUNNER.invoke(app, ["sql", "select 1 as one", "--home", str(samples_lake.home)])
    assert res.exit_code == 0 and res.output.rstrip().endswith("\n1 row")
    res = RUNNER.invoke(app, ["sql", "select * from range(2)", "--home",
                              str(samples_lake.home)])
    assert res.output.rstrip().endswith("\n2 rows")
    one = tmp_path / "one.responses.jsonl"
    shutil.copy(REPO / "data_samples" / "2026-11-20" / "orchestrator.durable.json",
                tmp_path / "one.durable.json")
    res = RUNNER.invoke(app, ["ingest", str(tmp_path / "one.durable.json"), "--home",
                              str(tmp_path / "home")])
    assert res.exit_code == 0, res.output
    assert "1 file (0 unchanged): 1 line, 1 accepted" in res.output
    assert not one.exists()


def test_money_prints_in_dollars_without_an_exponent(samples_lake: SamplesLake) -> None:
    assert cell(5.67e-05, money=True) == "$0.0000567"
    assert cell(5.67e-05) == "0.0000567"
    assert cell(-0.004213) == "-0.004213"
    assert cell(1234.5678, money=True) == "$1234.57"
    res = RUNNER.invoke(app, ["sql", "select 0.0000567::DOUBLE as cost_usd, "
                              "0.0000567::DOUBLE as share", "--home", str(samples_lake.home)])
    assert "$0.0000567" in res.output and "e-05" not in res.output


def _files(paths: list[str]) -> list[FileReport]:
    return [FileReport(source_file=p, kind="responses", bytes=1000, lines=19, accepted=13,
                       quarantined=4, blank=2) for p in paths]


def test_at_80_columns_file_paths_are_never_folded(monkeypatch: pytest.MonkeyPatch) -> None:
    long = str(Path.cwd() / "data_samples" / "2026-11-20" / "support-bot.responses.jsonl")
    seen = io.StringIO()
    monkeypatch.setattr(ingest_cli, "out", Console(file=seen, width=80, force_terminal=True,
                                                   color_system=None, soft_wrap=True))
    ingest_cli.print_files(_files([long]))
    assert seen.getvalue() == ("data_samples/2026-11-20/support-bot.responses.jsonl\n"
                               "  responses: 19 lines, 13 accepted, 4 quarantined, 2 blank\n")
    wide = io.StringIO()
    monkeypatch.setattr(ingest_cli, "out", Console(file=wide, width=160, force_terminal=True,
                                                   color_system=None, soft_wrap=True))
    ingest_cli.print_files(_files([long]))
    [header, _, row] = wide.getvalue().splitlines()
    assert "quarantined" in header
    assert "data_samples/2026-11-20/support-bot.responses.jsonl │ responses │" in row


def test_the_ingest_summary_accounts_for_every_file(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """70 files read over 7 folders, one with quarantined lines: that one is listed by itself
    and the other 69 are counted by folder, so the rows add up to every file and every line,
    and the summary names the query that lists each file (the README says so)."""
    from transforms.ingest import IngestReport

    files = [FileReport(source_file=str(tmp_path / "landing" / f"2026-11-{14 + d}" /
                                        f"agent-{i}.responses.jsonl"),
                        kind="responses", bytes=100, lines=10 + i, accepted=10 + i)
             for d in range(7) for i in range(10)]
    files[-1] = FileReport(source_file=files[-1].source_file, kind="responses", bytes=100,
                           lines=19, accepted=15, quarantined=4)
    seen = io.StringIO()
    monkeypatch.setattr(ingest_cli, "out", Console(file=seen, width=200, color_system=None,
                                                   soft_wrap=True))
    ingest_cli.print_report(IngestReport(home=tmp_path / "home", files=files))
    table = [ln for ln in seen.getvalue().splitlines() if "│" in ln]
    named = [ln.split("│")[0].strip() for ln in table]
    assert named[0].endswith("2026-11-20/agent-9.responses.jsonl")
    assert named[1:] == [f"{tmp_path}/landing/2026-11-{14 + d}/ (10 files)" for d in range(6)] \
        + [f"{tmp_path}/landing/2026-11-20/ (9 other files)"]
    counts = [int(ln.split("│")[2].replace(",", "")) for ln in table]
    assert sum(counts) == sum(f.lines for f in files)
    assert ingest_cli.EVERY_FILE in seen.getvalue()
    assert "70 files (0 unchanged): 1,015 lines, 1,011 accepted, 4 quarantined" in seen.getvalue()
    readme = " ".join((REPO / "README.md").read_text().split())
    assert ("counts the others by folder, and names the query of the `ingest_files` table "
            "that lists every file") in readme


def test_more_folders_than_the_summary_lists_are_one_row(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    files = [FileReport(source_file=str(tmp_path / f"d{d:02d}" / "a.spans.jsonl"), kind="spans",
                        bytes=10, lines=1, accepted=1) for d in range(20)]
    seen = io.StringIO()
    monkeypatch.setattr(ingest_cli, "out", Console(file=seen, width=200, color_system=None,
                                                   soft_wrap=True))
    ingest_cli.print_files([], files)
    named = [ln.split("│")[0].strip() for ln in seen.getvalue().splitlines() if "│" in ln]
    assert len(named) == ingest_cli.LISTED_FILES
    assert named[-1] == "9 more folders (9 files)"


def _piped(args: list[str], **env: str) -> str:
    """`runlake ARGS | cat`: no standard stream a terminal, COLUMNS as given or unset."""
    full = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TERMINAL_WIDTH")}
    done = subprocess.run(
        [sys.executable, "-c", "import sys; sys.argv[0] = 'runlake'; "
         "from transforms.command import main; main()", *args],
        cwd=REPO, env={**full, **env}, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_piped_history_and_help_are_not_wrapped_at_80_columns(samples_lake: SamplesLake) -> None:
    """Into a pipe rich would wrap at 80 columns: `runlake history | cat` gives each version
    one line, whatever its cells hold, and `runlake --help | cat` gives each command's
    description as flowing text at 120 columns, not its docstring's line breaks cut again at
    80. COLUMNS, when set, is the width."""
    history = _piped(["history", "--home", str(samples_lake.home)])
    [row] = [ln for ln in history.splitlines() if "│ ingest │" in ln]
    assert row.lstrip().startswith("1 ") and "quarantine 4" in row
    assert len(history.splitlines()) == 3  # the header, its rule, the one version
    assert max(len(ln) for ln in history.splitlines()) > 80
    narrow = _piped(["history", "--home", str(samples_lake.home)], COLUMNS="60")
    assert max(len(ln) for ln in narrow.splitlines()) <= 60
    assert len(narrow.splitlines()) > 3
    help_text = _piped(["--help"])
    assert max(len(ln) for ln in help_text.splitlines()) == 120
    assert "with their grain and columns, or print them as Spark or Trino SQL" in help_text
    assert "and print what regressed. With" in help_text
    assert max(len(ln) for ln in _piped(["--help"], COLUMNS="100").splitlines()) == 100
