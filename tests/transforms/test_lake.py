"""The lake: Delta tables where a changed file's rows are replaced, re-ingest is a no-op,
duplicates resolve across files and days, concurrent ingests lose nothing, replaced files stay
for readers until the retention has passed, and a failed publishing step leaves the previous
warehouse readable. (Crashes at every stage: test_lake_crash.py.)"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SamplesLake
from transforms import lake as lake_mod
from transforms import warehouse
from transforms.contracts.schemas import RUN_TABLES
from transforms.ingest import ingest
from transforms.lake import commit as lakecommit
from transforms.warehouse import derive as derive_mod
from transforms.warehouse import publishing, sqlfiles


def run(run_id: str, day: str, text: str = "ok") -> dict[str, Any]:
    return {"run_id": run_id, "agent": "a", "started_at": f"{day}T12:00:00Z",
            "response": {"final_response": text,
                         "messages": [{"role": "assistant", "content": text}]}}


def snapshot(home: Path) -> dict[str, bytes]:
    """Every data file of every lake table at its current version, by path, with its bytes."""
    lake = lake_mod.Lake(home)
    return {f: Path(f).read_bytes() for t in lake.tables() for f in lake.file_uris(t)}


def delta_rows(home: Path, table: str) -> list[dict[str, Any]]:
    """The rows of a lake table as a Delta reader (polars) sees them."""
    import polars as pl

    return pl.read_delta(str(home / "lake" / table)).to_dicts()


def test_reingest_changes_nothing(write_lines: Callable[..., Path], home: Path) -> None:
    """The same files again: every file skipped, every lake byte and the warehouse unchanged."""
    path = write_lines([run("r1", "2026-11-20"), run("r2", "2026-11-21"), "bad line"])
    ingest([path], home)
    before, wh = snapshot(home), warehouse.path(home).stat().st_mtime_ns
    report = ingest([path], home)
    assert [f.skipped for f in report.files] == [True]
    assert snapshot(home) == before
    assert warehouse.path(home).stat().st_mtime_ns == wh


def test_changed_file_replaces_its_rows(write_lines: Callable[..., Path], home: Path,
                                        query: Callable[..., Any]) -> None:
    """A changed file's old rows go, in every day they were in; other files' rows stay."""
    a = write_lines([run("a1", "2026-11-20"), run("a2", "2026-11-21")], name="a.responses.jsonl")
    b = write_lines([run("b1", "2026-11-21")], name="b.responses.jsonl")
    ingest([a.parent], home)
    write_lines([run("a3", "2026-11-22", "new")], name="a.responses.jsonl")
    ingest([a.parent], home)
    assert query("SELECT run_id, day::VARCHAR FROM runs ORDER BY 1") == [
        ("a3", "2026-11-22"), ("b1", "2026-11-21")]
    assert query("SELECT count(*) FROM messages") == [(2,)]
    assert query("SELECT count(*) FROM ingest_files") == [(2,)]
    # In the Delta table itself: the old rows are gone, not only hidden by the views.
    assert sorted(r["run_id"] for r in delta_rows(home, "runs")) == ["a3", "b1"]
    assert b.exists()


def test_rewritten_day_after_a_day_that_only_gains_parts(
        write_lines: Callable[..., Path], home: Path, query: Callable[..., Any]) -> None:
    """A commit that moves staged parts into one day and rewrites a later day reads the staged
    rows before any of them move (whatever today's date is)."""
    a = write_lines([run("a1", "2099-01-01")], name="a.responses.jsonl")
    ingest([a], home)
    write_lines([run("a2", "2000-01-01")], name="a.responses.jsonl")
    ingest([a], home)
    assert query("SELECT run_id, day::VARCHAR FROM runs") == [("a2", "2000-01-01")]
    assert [r["run_id"] for r in delta_rows(home, "runs")] == ["a2"]


def test_duplicate_across_files_and_days(write_lines: Callable[..., Path], home: Path,
                                         query: Callable[..., Any]) -> None:
    """The later line (by path, then line) wins even on another day; when it goes away, the
    earlier line comes back."""
    write_lines([run("r1", "2026-11-20", "early")], name="a.responses.jsonl")
    later = write_lines([run("r1", "2026-11-21", "late")], name="b.responses.jsonl")
    ingest([later.parent], home)
    assert query("SELECT day::VARCHAR, final_response FROM runs") == [("2026-11-21", "late")]
    assert query("SELECT count(*) FROM messages") == [(1,)]
    assert query("SELECT code, day::VARCHAR, source_file LIKE '%a.responses.jsonl' FROM flags") == [
        ("run_id_duplicate", "2026-11-21", True)]
    write_lines([run("r2", "2026-11-21", "other")], name="b.responses.jsonl")
    ingest([later.parent], home)
    assert query("SELECT run_id, final_response FROM runs ORDER BY 1") == [
        ("r1", "early"), ("r2", "other")]
    assert query("SELECT count(*) FROM flags") == [(0,)]


def test_ingest_order_does_not_matter(write_lines: Callable[..., Path], tmp_path: Path) -> None:
    """Ingesting files one by one, in any order, gives the same lake as all at once."""
    a = write_lines([run("r1", "2026-11-20", "a"), run("r2", "2026-11-20")],
                    name="a.responses.jsonl")
    b = write_lines([run("r1", "2026-11-20", "b")], name="b.responses.jsonl")
    homes = [tmp_path / "h1", tmp_path / "h2"]
    ingest([a, b], homes[0])
    ingest([b], homes[1])
    ingest([a], homes[1])
    results = []
    for h in homes:
        con = warehouse.connect(h)
        results.append(con.execute(
            "SELECT run_id, final_response, source_file FROM runs ORDER BY 1").fetchall())
        con.close()
    assert results[0] == results[1]
    assert results[0][0][1] == "b"


def test_failed_build_keeps_previous_warehouse(write_lines: Callable[..., Path], home: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    """A broken SQL file fails the build loudly, names the file, and leaves the old file."""
    ingest([write_lines([run("r1", "2026-11-20")])], home)
    before = warehouse.path(home).read_bytes()
    sql = tmp_path / "sql"
    (sql / "marts").mkdir(parents=True)
    (sql / "marts" / "v_broken.sql").write_text("CREATE VIEW v_broken AS SELECT * FROM nope")
    monkeypatch.setattr(sqlfiles, "SQL_DIR", sql)
    with pytest.raises(warehouse.WarehouseError, match="v_broken.sql"):
        warehouse.build(home)
    assert warehouse.path(home).read_bytes() == before
    assert not [p for p in home.iterdir() if p.name.endswith(".tmp")]


def test_a_commit_that_dies_deriving_is_redone_by_the_next_ingest(
        write_lines: Callable[..., Path], home: Path, monkeypatch: pytest.MonkeyPatch,
        query: Callable[..., Any]) -> None:
    """A commit that dies while it derives its tables (step 2, before the manifest commit):
    readers keep the previous lake version whole, and the next ingest reads the file again
    and commits it whole."""
    path = write_lines([run("r1", "2026-11-20")])
    ingest([path], home)
    write_lines([run("r1", "2026-11-20", "v2"), run("r2", "2026-11-21")])

    def dying(*args: Any) -> None:
        raise OSError("killed")

    monkeypatch.setattr(derive_mod, "_compute", dying)
    with pytest.raises(OSError, match="killed"):
        ingest([path], home)
    monkeypatch.undo()
    assert query("SELECT run_id, final_response FROM runs") == [("r1", "ok")]
    report = ingest([path], home)
    assert [f.skipped for f in report.files] == [False]
    assert warehouse.is_current(home)
    assert query("SELECT run_id, final_response FROM runs ORDER BY 1") == [
        ("r1", "v2"), ("r2", "ok")]


def test_a_build_that_dies_is_redone_by_the_next_ingest(
        write_lines: Callable[..., Path], home: Path, monkeypatch: pytest.MonkeyPatch,
        query: Callable[..., Any]) -> None:
    """A lake version committed and its warehouse file not built: readers see the new version
    (made in memory, nothing written), and the next ingest, with nothing new to read, builds
    the file."""
    path = write_lines([run("r1", "2026-11-20")])
    ingest([path], home)
    write_lines([run("r1", "2026-11-20", "v2"), run("r2", "2026-11-21")])

    def dying(*args: Any) -> None:
        raise OSError("killed")

    monkeypatch.setattr(publishing, "build", dying)
    with pytest.raises(OSError, match="killed"):
        ingest([path], home)
    monkeypatch.undo()
    assert not warehouse.is_current(home)
    assert query("SELECT run_id, final_response FROM runs ORDER BY 1") == [
        ("r1", "v2"), ("r2", "ok")]
    assert not warehouse.is_current(home)  # the reader wrote nothing
    report = ingest([path], home)
    assert [f.skipped for f in report.files] == [True]
    assert warehouse.is_current(home)


def test_readers_survive_a_rebuild(write_lines: Callable[..., Path], home: Path) -> None:
    """A reader holding the warehouse read-only keeps querying the version it opened while a
    writer ingests and replaces rows; a new connection sees the new version."""
    a = write_lines([run("r1", "2026-11-20")], name="a.responses.jsonl")
    ingest([a], home)
    con = warehouse.connect(home)
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (1,)
    write_lines([run("r1", "2026-11-20", "v2")], name="a.responses.jsonl")
    ingest([a, write_lines([run("r2", "2026-11-20")], name="b.responses.jsonl")], home)
    # Its files were replaced, not deleted: the old version still reads whole.
    assert con.execute("SELECT run_id, final_response FROM runs").fetchall() == [("r1", "ok")]
    con.close()
    con = warehouse.connect(home)
    assert con.execute("SELECT run_id, final_response FROM runs ORDER BY 1").fetchall() == [
        ("r1", "v2"), ("r2", "ok")]
    con.close()


def test_warehouse_opens_with_older_duckdb_storage(home: Path,
                                                   write_lines: Callable[..., Path]) -> None:
    """The file is written in the v1.5.0 storage format, readable by older duckdb CLIs."""
    ingest([write_lines([run("r1", "2026-11-20")])], home)
    con = warehouse.connect(home)
    tags = con.execute("SELECT tags FROM duckdb_databases() WHERE database_name = "
                       "'warehouse'").fetchone()
    con.close()
    assert tags == ({"storage_version": "v1.5.0+"},)


def _files(home: Path, table: str) -> list[str]:
    return lake_mod.Lake(home).file_uris(table)


def test_lake_tables_are_delta_tables_polars_reads(samples_lake: SamplesLake) -> None:
    """Every lake table has a Delta log; pl.scan_delta counts in lake/<table> what the
    warehouse's view of that name counts, and in lake/_lines/<table> every line as read (the
    session's samples lake, read only)."""
    import polars as pl

    home = samples_lake.home
    con = warehouse.connect(home)
    try:
        for t in lake_mod.TABLES:
            assert (home / "lake" / t / "_delta_log").is_dir(), t
            n = pl.scan_delta(str(home / "lake" / t)).select(pl.len()).collect().item()
            assert [(n,)] == con.execute(f"SELECT count(*) FROM {t}").fetchall(), t
            if t in lake_mod.AS_READ:
                lines = pl.scan_delta(str(home / "lake" / lake_mod.lines_path(t))).select(
                    pl.len()).collect().item()
                assert [(lines,)] == con.execute(
                    f"SELECT count(*) FROM staging.stg_{t}"
                    + ("_lines" if t in RUN_TABLES else "")).fetchall(), t
        # The samples repeat run_ids: the lines that lose are in _lines/, not in lake/runs.
        assert con.execute("SELECT count(*) FROM staging.stg_superseded_runs").fetchall()[0][0] > 0
    finally:
        con.close()


def test_new_rows_are_added_without_rewriting(write_lines: Callable[..., Path], home: Path,
                                              query: Callable[..., Any]) -> None:
    """A second file for the same month adds its data file; the old files stay as they are."""
    ingest([write_lines([run("a", "2026-11-20")], name="a.responses.jsonl")], home)
    first = snapshot(home)
    ingest([write_lines([run("b", "2026-11-20")], name="b.responses.jsonl")], home)
    files = _files(home, "_lines/runs")
    assert len(files) == 2
    after = snapshot(home)
    assert all(after.get(f) == data for f, data in first.items() if "/_lines/" in f)
    assert query("SELECT run_id FROM runs ORDER BY 1") == [("a",), ("b",)]


def test_many_files_are_compacted(write_lines: Callable[..., Path], home: Path,
                                  monkeypatch: pytest.MonkeyPatch,
                                  query: Callable[..., Any]) -> None:
    """Past COMPACT_FILES a month partition is compacted, rows unchanged; a changed file is
    still replaced inside the compacted file."""
    monkeypatch.setattr(lakecommit, "COMPACT_FILES", 2)
    for name in "abc":
        ingest([write_lines([run(name, "2026-11-20")], name=f"{name}.responses.jsonl")], home)
    assert len(_files(home, "_lines/runs")) == 1
    assert query("SELECT run_id FROM runs ORDER BY 1") == [("a",), ("b",), ("c",)]
    b = write_lines([run("b", "2026-11-20", "v2")], name="b.responses.jsonl")
    ingest([b], home)
    assert query("SELECT run_id, final_response FROM runs ORDER BY 1") == [
        ("a", "ok"), ("b", "v2"), ("c", "ok")]
    assert sorted(r["run_id"] for r in delta_rows(home, "runs")) == ["a", "b", "c"]


def test_a_replaced_file_stays_for_the_retention_counted_from_its_replacement(
        write_lines: Callable[..., Path], home: Path) -> None:
    """A data file written long ago and replaced now is not deleted by the commit that replaces
    it (readers may be reading it): vacuum keeps it for the retention after the replacement,
    however old the file is, and then removes it."""
    import os
    import time

    path = write_lines([run("a", "2026-11-20")])
    ingest([path], home)
    old = _files(home, "_lines/runs")
    week_ago = time.time() - 7 * 86400
    for f in old:
        os.utime(f, (week_ago, week_ago))
    write_lines([run("a", "2026-11-20", "v2")])
    ingest([path], home)
    lake = lake_mod.Lake(home)
    assert lake.vacuum(retention_hours=1) == 0
    assert all(Path(f).exists() for f in old)
    assert lake.vacuum(retention_hours=0) > 0
    assert not any(Path(f).exists() for f in old)
    con = warehouse.connect(home)
    assert con.execute("SELECT final_response FROM runs").fetchall() == [("v2",)]
    con.close()


def test_concurrent_ingests_lose_nothing(write_lines: Callable[..., Path],
                                         tmp_path: Path) -> None:
    """Two runlake ingest processes on one home, each with half of a landing folder, give the
    same tables as one ingest of all of it."""
    import subprocess
    import sys

    from tests.test_end_to_end import SAMPLES

    files = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and ".jsonl" in p.name
                   or p.name.endswith(".durable.json"))
    halves = [files[0::2], files[1::2]]
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    ingest(files, serial, workers=1)
    procs = [subprocess.Popen([sys.executable, "-c", "from transforms.cli import main; main()",
                               "ingest",
                               *map(str, half), "--home", str(parallel), "--workers", "1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for half in halves]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
    assert table_digests(parallel) == table_digests(serial)


def table_digests(home: Path | str, landing: str = "") -> dict[str, str]:
    """A digest of each public lake view's rows (order-free, paths of the home left out; the
    `landing` folder's name, when given, too)."""
    import hashlib

    con = warehouse.connect(home)
    try:
        out = {}
        for t in lake_mod.TABLES:
            cols = [r[0] for r in con.execute(f"DESCRIBE {t}").fetchall()
                    if r[0] not in ("ingested_at",)]
            rows = sorted(repr(r) for r in con.execute(
                f"SELECT {', '.join(cols)} FROM {t}").fetchall())
            if landing:
                rows = sorted(r.replace(landing, "<landing>") for r in rows)
            out[t] = hashlib.sha256("\n".join(rows).encode()).hexdigest()
        return out
    finally:
        con.close()
