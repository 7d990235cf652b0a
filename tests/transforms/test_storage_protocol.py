"""One storage protocol: the lake's public tables hold what the warehouse's views show (any
Delta reader counts what the warehouse counts), and reading never writes: `runlake sql`,
`report` (but for its report) and `views` change no file of a home, and `runlake sql` answers
from a home that was moved, or that the user cannot write."""

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from tests.transforms.test_lake import run
from transforms import lake as lake_mod
from transforms import warehouse
from transforms.cli import app
from transforms.forget import forget
from transforms.ingest import ingest

SAMPLES = Path(__file__).resolve().parents[2] / "data_samples"


def _counts_agree(home: Path) -> dict[str, int]:
    """Each public lake table's row count by polars, checked against the warehouse's view."""
    con = warehouse.connect(home)
    try:
        out = {}
        for t in lake_mod.TABLES:
            n = pl.scan_delta(str(home / "lake" / t)).select(pl.len()).collect().item()
            (want,) = con.execute(f"SELECT count(*) FROM {t}").fetchone() or (None,)
            assert n == want, t
            out[t] = n
        return out
    finally:
        con.close()


def test_public_tables_hold_the_winning_line_of_a_repeated_run_id(
        write_lines: Callable[..., Path], home: Path) -> None:
    """A run_id carried by lines of two files: lake/runs, lake/messages and the rest hold the
    later line's rows only, as the views do; forgetting the later file brings the earlier
    line's rows back into them, and the lines as read stay in lake/_lines."""
    a = write_lines([run("r1", "2026-11-20", "first"), run("r2", "2026-11-20")],
                    name="a.responses.jsonl")
    b = write_lines([run("r1", "2026-11-23", "second")], name="b.responses.jsonl")
    ingest([a, b], home)
    counts = _counts_agree(home)
    assert counts["runs"] == 2 and counts["messages"] == 2
    runs = pl.read_delta(str(home / "lake" / "runs")).sort("run_id")
    assert runs.select("run_id", "final_response").rows() == [("r1", "second"), ("r2", "ok")]
    lines = pl.scan_delta(str(home / "lake" / "_lines" / "runs")).select(pl.len()).collect()
    assert lines.item() == 3
    forget([b], home)
    _counts_agree(home)
    runs = pl.read_delta(str(home / "lake" / "runs")).sort("run_id")
    assert runs.select("run_id", "final_response").rows() == [("r1", "first"), ("r2", "ok")]


def test_public_tables_count_what_the_warehouse_counts_on_the_samples(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ingest([SAMPLES], home, tools=SAMPLES / "tools.yaml")
    counts = _counts_agree(home)
    assert all(counts[t] > 0 for t in ("runs", "messages", "spans", "llm_calls", "flags"))


def _files(home: Path) -> dict[str, tuple[int, int]]:
    """Every file under a home but its reports, with its size and mtime."""
    return {str(p.relative_to(home)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in home.rglob("*") if p.is_file() and p.relative_to(home).parts[0] != "reports"}


READS = [
    ["sql", "select status, count(*) from runs group by 1"],
    ["sql", "select count(*) from v_regressions", "--as-of", "1"],
    ["views"],
    ["views", "--dialect", "spark"],
    ["history"],
    ["report", "--day", "2026-11-20"],
]


def _read_everything(home: Path) -> None:
    for args in READS:
        res = CliRunner().invoke(app, [*args, "--home", str(home)])
        assert res.exit_code == 0, (args, res.output)


@pytest.mark.parametrize("state", ["current", "built_before_last_commit", "moved"])
def test_reading_never_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              state: str) -> None:
    """Whatever the warehouse file says (current, older than the lake, built in another
    folder), the reading commands change no file of the home but the report they write."""
    from transforms.warehouse import publishing

    home = tmp_path / "home"
    days = sorted(p for p in SAMPLES.iterdir() if p.is_dir())
    ingest(days[:-1], home, tools=SAMPLES / "tools.yaml")
    if state == "built_before_last_commit":
        def dying(*args: Any) -> None:
            raise OSError("killed")

        monkeypatch.setattr(publishing, "build", dying)
        with pytest.raises(OSError):
            ingest(days[-1:], home, tools=SAMPLES / "tools.yaml")
        monkeypatch.undo()
        assert not warehouse.is_current(home)
    else:
        ingest(days[-1:], home, tools=SAMPLES / "tools.yaml")
    if state == "moved":
        moved = tmp_path / "elsewhere" / "home"
        moved.parent.mkdir()
        shutil.move(str(home), str(moved))
        home = moved
    before = _files(home)
    _read_everything(home)
    assert _files(home) == before
    if state != "current":
        assert not warehouse.is_current(home)


def can_mount_read_only() -> bool:
    if shutil.which("unshare") is None:
        return False
    try:
        return subprocess.run(["unshare", "-rm", "true"], capture_output=True,
                              timeout=30).returncode == 0
    except OSError:
        return False


@pytest.mark.skipif(not can_mount_read_only(),
                    reason="this machine does not let a user make a mount namespace")
def test_sql_answers_on_a_read_only_mount_of_a_moved_home(tmp_path: Path) -> None:
    """A home copied elsewhere and mounted read-only (a mount namespace of its own, so nothing
    of it can be written): `runlake sql` answers from the lake's tables."""
    first = tmp_path / "first"
    ingest([SAMPLES / "2026-11-20"], first)
    home = tmp_path / "copy"
    shutil.copytree(first, home)
    shutil.rmtree(first)
    runlake = Path(sys.executable).parent / "runlake"
    script = (f'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && '
              f'! touch "$1/probe" 2>/dev/null && '
              f'"{runlake}" sql "select count(*) as n from runs" --home "$1" --format json')
    res = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", str(home)],
                         capture_output=True, timeout=300, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    con = warehouse.connect(home)
    try:
        (want,) = con.execute("SELECT count(*) FROM runs").fetchone() or (None,)
    finally:
        con.close()
    assert json.loads(res.stdout) == [{"n": want}]


@pytest.mark.skipif(not can_mount_read_only(),
                    reason="this machine does not let a user make a mount namespace")
def test_report_on_a_read_only_home_keeps_its_exit_code(tmp_path: Path) -> None:
    """`runlake report --fail-on-regression` on a home mounted read-only: the page goes to the
    cache folder (said in a warning) and the exit code stays 3; `--out` on the read-only
    mount is refused in one line (exit 2); `doctor` checks without writing."""
    home = tmp_path / "home"
    ingest([SAMPLES], home)
    runlake = Path(sys.executable).parent / "runlake"
    cache = tmp_path / "cache"
    script = (f'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && '
              f'! touch "$1/probe" 2>/dev/null && '
              f'"{runlake}" report --home "$1" --fail-on-regression; echo "report=$?"; '
              f'"{runlake}" report --home "$1" --out "$1/page.html"; echo "out=$?"; '
              f'"{runlake}" doctor --home "$1"; echo "doctor=$?"')
    res = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", str(home)],
                         capture_output=True, timeout=300, text=True,
                         env={**os.environ, "XDG_CACHE_HOME": str(cache)})
    said = res.stdout + res.stderr
    assert "report=3" in said and "out=2" in said and "doctor=0" in said, said[-3000:]
    assert "cannot be written (Read-only file system)" in said and "Traceback" not in said
    (page,) = cache.glob("runlake/reports/*/nightly-*.html")
    assert "<html" in page.read_text()[:500].lower()


def test_a_lake_of_the_layout_before_derived_tables_is_moved_once(
        write_lines: Callable[..., Path], home: Path, capfd: Any) -> None:
    """A lake whose tables as ingested sit at lake/<table> and whose last version names them
    so (the layout before the derived tables): readers say to publish; `runlake publish` moves
    them under lake/_lines/ once and derives the rest; the answers are what they were."""
    from deltalake import CommitProperties, write_deltalake

    from transforms.errors import InputError
    from transforms.lake import AS_READ, MANIFEST

    ingest([write_lines([run("r1", "2026-11-20"), run("r2", "2026-11-21")])], home)
    con = warehouse.connect(home)
    want = con.execute("SELECT run_id, final_response FROM runs ORDER BY 1").fetchall()
    con.close()
    lake = lake_mod.Lake(home)
    old = {}
    for t in AS_READ:
        shutil.rmtree(home / "lake" / t)
        shutil.move(str(home / "lake" / "_lines" / t), str(home / "lake" / t))
        old[t] = lake.open(t).version()
    shutil.rmtree(home / "lake" / "_lines")
    shutil.rmtree(home / "lake" / "_derived")
    meta = {"action": "ingest", "ingest_id": "old", "files": [], "n_files": 0,
            "tables": {**old, "quarantine": lake.open("quarantine").version()}}
    write_deltalake(lake.delta_uri(MANIFEST), lake.open(MANIFEST).to_pyarrow_table().slice(0, 0),
                    mode="overwrite", predicate="false", commit_properties=CommitProperties(
                        custom_metadata={"runlake": json.dumps(meta)}))
    with pytest.raises(InputError, match="runlake publish"):
        warehouse.connect(home)
    res = CliRunner().invoke(app, ["publish", "--home", str(home)])
    assert res.exit_code == 0, res.output
    assert "moving the lake's tables" in res.output + capfd.readouterr().err
    assert (home / "lake" / "_lines" / "runs" / "_delta_log").is_dir()
    _counts_agree(home)
    con = warehouse.connect(home)
    try:
        assert con.execute("SELECT run_id, final_response FROM runs ORDER BY 1").fetchall() \
            == want
    finally:
        con.close()
    assert warehouse.is_current(home)
