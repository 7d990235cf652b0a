"""A full disk is told as a full disk (ENOSPC) with the path being written, in one line:
never as a warehouse that "could not be read", a traceback or a bare "os error 28", whichever
library met it (DuckDB, delta-rs, pyarrow, polars, the OS)."""

import errno
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from transforms.cli import app
from transforms.cli.app import error_line
from transforms.errors import RunlakeError

RUNNER = CliRunner()
LINE = '{"run_id": "r1", "agent": "a", "outcome": {"status": "passed"}}\n'
DELTA = ("Generic LocalFileSystem error\n          \x1b[31m↳\x1b[0m Unable to copy data to file\n"
         "           \x1b[31m↳\x1b[0m No space left on device (os error 28)\n")


def _cause(outer: BaseException, inner: BaseException) -> BaseException:
    outer.__cause__ = inner
    return outer


@pytest.mark.parametrize(("e", "path"), [
    (OSError(errno.ENOSPC, "No space left on device", "/h/lake/runs/part-0.parquet"),
     "/h/lake/runs/part-0.parquet"),
    # pyarrow: the errno, no file name; delta-rs: neither (the home being written is named).
    (OSError(errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left on "
             "device"), "/the/home"),
    (OSError(DELTA), "/the/home"),
    (duckdb.FatalException('FATAL Error: Failed to create checkpoint because of error: Could '
                           'not write file "/h/.warehouse.duckdb.1f.tmp": No space left on '
                           'device'), "/h/.warehouse.duckdb.1f.tmp"),
    (duckdb.IOException('IO Error: Could not write file "/h/lake/_derived/x.parquet": No space '
                        'left on device'), "/h/lake/_derived/x.parquet"),
    (pl.exceptions.ComputeError("parquet: File out of specification: underlying IO error: No "
                                "space left on device (os error 28)"), "/the/home"),
    (_cause(RunlakeError("the lake could not be written"), OSError(DELTA)), "/the/home"),
])
def test_a_full_disk_says_so_with_the_path(e: BaseException, path: str) -> None:
    told = error_line(e, "/the/home")
    assert told is not None, e
    line, code = told
    assert code == 1
    assert line.startswith("the disk is full (ENOSPC: no space left on device) writing "), line
    assert path in line and "could not be read" not in line, line
    assert "\x1b" not in line and "\n" not in line, line


def test_sql_output_onto_a_full_disk(tmp_path: Path) -> None:
    """/dev/full: every write fails with ENOSPC, as on a full disk."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    landing = tmp_path / "a.responses.jsonl"
    landing.write_text(LINE)
    home = tmp_path / "home"
    assert RUNNER.invoke(app, ["ingest", str(landing), "--home", str(home)]).exit_code == 0
    for fmt in ("csv", "json", "parquet"):
        res = RUNNER.invoke(app, ["sql", "select * from runs", "--format", fmt, "--output",
                                  "/dev/full", "--home", str(home)])
        assert res.exit_code == 1, (fmt, res.output)
        assert res.output.startswith("error: the disk is full (ENOSPC: no space left on device) "
                                     "writing /dev/full"), (fmt, res.output)
        assert len(res.output.strip().splitlines()) == 1, (fmt, res.output)
    # Printed to a standard output on a full disk: the table, CSV or JSON.
    runlake = Path(sys.executable).parent / "runlake"
    for fmt in ("table", "csv", "json"):
        with open("/dev/full", "w") as full:
            done = subprocess.run([str(runlake), "sql", "select * from runs", "--format", fmt,
                                   "--home", str(home)], stdout=full, stderr=subprocess.PIPE,
                                  text=True, check=False, timeout=60)
        assert done.returncode == 1, (fmt, done.stderr)
        assert done.stderr == ("error: the disk is full (ENOSPC: no space left on device) "
                               "writing the standard output: free some space and run the "
                               "command again\n"), (fmt, done.stderr)
