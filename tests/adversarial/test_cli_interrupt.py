"""Ctrl-C ends `runlake sql` with one line and exit status 130, whenever it comes: while the
command line is still importing its libraries, or while DuckDB runs a long query (which
checks for no signal itself: the query is interrupted on the connection)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from transforms.cli import app

LINE = '{"run_id": "r1", "agent": "a", "outcome": {"status": "passed"}}\n'
SLOW = "select sum(hash(range)) from range(100000000000)"  # minutes of work


def _interrupt(args: list[str], when: str, wait: float, home: Path
               ) -> tuple[int, str, list[str], float]:
    """The exit status, stdout and stderr lines of `runlake ARGS` sent SIGINT `wait` seconds
    after it imported the module `when` (python -X importtime tells), and how long it took to
    end once signalled."""
    runlake = Path(sys.executable).parent / "runlake"  # the installed entry point
    proc = subprocess.Popen([sys.executable, "-X", "importtime", str(runlake), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "RUNLAKE_HOME": str(home)})
    assert proc.stderr is not None and proc.stdout is not None
    try:
        for line in proc.stderr:
            if line.rstrip().endswith(f"| {when}") or line.rstrip().endswith(f"  {when}"):
                break
        else:
            raise AssertionError(f"{when} was never imported")
        time.sleep(wait)
        proc.send_signal(signal.SIGINT)
        signalled = time.monotonic()
        out, err = proc.communicate(timeout=30)
        said = [x for x in err.splitlines() if not x.startswith("import time:")]
        return proc.returncode, out, said, time.monotonic() - signalled
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_ctrl_c_is_one_line_and_exit_130(tmp_path: Path) -> None:
    landing = tmp_path / "landing" / "a.responses.jsonl"
    landing.parent.mkdir()
    landing.write_text(LINE)
    home = tmp_path / "home"
    assert CliRunner().invoke(app, ["ingest", str(landing), "--home", str(home)]).exit_code == 0
    # While importing the command line's libraries; while DuckDB runs the query.
    for when, wait in (("typer", 0.0), ("transforms.warehouse.query", 1.5)):
        code, out, said, took = _interrupt(["sql", SLOW], when, wait, home)
        assert (code, out, said) == (130, "", ["interrupted"]), (when, code, out, said)
        assert took < 15, (when, took)
    assert not list(tmp_path.glob("**/*.tmp")), "a temp file left behind"
