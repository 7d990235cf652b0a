"""The lake: Delta tables where a changed file's rows are replaced, re-ingest is a no-op,
duplicates resolve across files and days, concurrent ingests lose nothing, replaced files stay
for readers until the retention has passed, and a failed publishing step leaves the previous
warehouse readable. (Crashes at every stage: test_lake_crash.py.)"""

import json
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
from transforms.lake import tables as lake_tables
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
                lines = pl.scan_delta(str(home / "lake" / lake_mod.stored(t))).select(
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


def test_a_moved_home_still_answers(write_lines: Callable[..., Path], tmp_path: Path) -> None:
    """The whole home folder moved elsewhere: the views are made in memory over the moved
    lake's files, and answer."""
    import shutil

    first = tmp_path / "first"
    ingest([write_lines([run("a", "2026-11-20")])], first)
    moved = tmp_path / "moved"
    shutil.move(str(first), str(moved))
    con = warehouse.connect(moved)
    try:
        assert con.execute("SELECT run_id FROM runs").fetchall() == [("a",)]
        files = [r[0] for r in con.execute(
            "SELECT DISTINCT filename FROM read_parquet([" + ", ".join(
                f"'{f}'" for f in lake_mod.Lake(moved).file_uris("runs")) + "], "
            "filename = true)").fetchall()]
    finally:
        con.close()
    assert files and all(f.startswith(str(moved)) for f in files)


def test_a_copied_home_answers_from_its_own_lake(
        write_lines: Callable[..., Path], tmp_path: Path) -> None:
    """A home copied whole: its warehouse file names the first home's files, so `runlake sql`
    makes the views over the copy's own lake (which the sandbox lets it read), and writes
    nothing there."""
    import shutil

    from typer.testing import CliRunner

    from transforms.cli import app

    first = tmp_path / "first"
    ingest([write_lines([run("a", "2026-11-20")])], first)
    copy = tmp_path / "copy"
    shutil.copytree(first, copy)
    shutil.rmtree(first)
    res = CliRunner().invoke(app, ["sql", "select run_id from runs", "--home", str(copy),
                                   "--format", "csv"])
    assert res.exit_code == 0 and res.output.splitlines() == ["run_id", "a"], res.output
    assert not warehouse.is_current(copy)


def test_lake_written_before_a_new_column_still_reads(write_lines: Callable[..., Path],
                                                      home: Path, query: Callable[..., Any],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A column added to a table after its files were written reads as null, not an error."""
    import pyarrow as pa

    from transforms.contracts import schemas

    ingest([write_lines([run("a", "2026-11-20")])], home)
    extra = schemas.Column("added_later", pa.int64(), "A column of a newer runlake.")
    grown = schemas.Table("runs", schemas.RUNS.grain, (*schemas.RUNS.columns, extra))
    monkeypatch.setitem(schemas.TABLES, "runs", grown)
    warehouse.build(home)
    assert query("SELECT run_id, added_later FROM staging.stg_runs") == [("a", None)]


def test_a_damaged_warehouse_file_is_built_again(write_lines: Callable[..., Path], home: Path,
                                                 query: Callable[..., Any]) -> None:
    path = write_lines([run("r1", "2026-11-20")])
    ingest([path], home)
    warehouse.path(home).write_bytes(warehouse.path(home).read_bytes()[:5000])
    assert not warehouse.is_current(home)
    ingest([path], home)
    assert query("SELECT run_id FROM runs") == [("r1",)]


def test_the_same_files_from_another_directory_change_nothing(
        write_lines: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        query: Callable[..., Any]) -> None:
    """Files and home named relative to two working directories are the same files and home:
    the second ingest skips them, and a crash's journal names absolute paths."""
    path = write_lines([run("r1", "2026-11-20")])
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    ingest([Path(path.parent.name)], Path("home"))
    monkeypatch.chdir(tmp_path / "elsewhere")
    report = ingest([Path("..") / path.parent.name], Path("../home"))
    assert [f.skipped for f in report.files] == [True]
    assert lake_mod.Lake(Path("../home")).root == tmp_path / "home" / "lake"


def test_an_unreadable_file_is_reported_and_the_others_read(
        write_lines: Callable[..., Path], home: Path, monkeypatch: pytest.MonkeyPatch,
        query: Callable[..., Any]) -> None:
    good = write_lines([run("r1", "2026-11-20")], name="a.responses.jsonl")
    locked = write_lines([run("r2", "2026-11-20")], name="b.responses.jsonl")
    real_open = open

    def guarded(file: Any, *args: Any, **kw: Any) -> Any:
        if Path(str(file)).name == locked.name:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kw)

    monkeypatch.setattr("builtins.open", guarded)
    report = ingest([good.parent], home)
    assert [(Path(f.source_file).name, f.accepted, f.error) for f in report.files] == [
        ("a.responses.jsonl", 1, None),
        ("b.responses.jsonl", 0, "cannot read the file: Permission denied")]
    monkeypatch.setattr("builtins.open", real_open)
    assert query("SELECT run_id FROM runs") == [("r1",)]
    ingest([good.parent], home)  # readable again: read now
    assert query("SELECT run_id FROM runs ORDER BY 1") == [("r1",), ("r2",)]


def test_reading_a_file_as_another_kind_reads_it_again(write_lines: Callable[..., Path],
                                                       home: Path,
                                                       query: Callable[..., Any]) -> None:
    path = write_lines([run("r1", "2026-11-20")], name="data.jsonl")
    ingest([path], home, kind="spans")
    assert query("SELECT count(*) FROM runs") == [(0,)]
    report = ingest([path], home, kind="responses")
    assert [f.skipped for f in report.files] == [False]
    assert query("SELECT count(*), any_value(kind) FROM runs, ingest_files") == [
        (1, "responses")]


def test_a_home_path_with_glob_characters_is_refused(write_lines: Callable[..., Path],
                                                     tmp_path: Path) -> None:
    from transforms.errors import InputError

    with pytest.raises(InputError, match="cannot be read safely"):
        ingest([write_lines([run("r1", "2026-11-20")])], tmp_path / "h[1]")


def _month_boundary_landing(folder: Path, days: list[str], seed: int) -> list[Path]:
    """Runs and their spans on `days`, a fifth of them starting a second before midnight so
    their spans end on the next day (and month), and one run_id on two lines in two months
    (its spans within a day of both: how far a run reaches, see warehouse.NEIGHBOUR_DAYS)."""
    import random
    from datetime import date

    from devtools.synth import default_agents, make_run, make_spans

    rng = random.Random(seed)
    agents = default_agents([date.fromisoformat(d) for d in days])
    folder.mkdir(parents=True, exist_ok=True)
    runs, spans = [], []
    for n, day in enumerate(days):
        for i in range(12):
            line = make_run(rng, agents[i % len(agents)], date.fromisoformat(day), n * 100 + i,
                            case=i)
            if i % 5 == 0:
                line["started_at"] = f"{day}T23:59:59Z"
            runs.append(line)
            spans += make_spans(rng, line)
    if len(days) >= 3:  # a run of the second day that ends the next day, on a later line
        runs.append({**runs[12], "started_at": f"{days[2]}T08:00:00Z"})
    (folder / f"r-{seed}.responses.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in runs))
    (folder / f"s-{seed}.spans.jsonl").write_text("".join(json.dumps(s) + "\n" for s in spans))
    return sorted(folder.iterdir())


def _public_rows(con: Any) -> dict[str, list[str]]:
    views = [r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE "
                                       "schema_name = 'main' AND NOT internal").fetchall()]
    out = {}
    for v in views:
        cols = [r[0] for r in con.execute(f"DESCRIBE {v}").fetchall()]
        # Sums of floats may differ in their last digit with the order of summation.
        sel = ", ".join(f"round({c}, 9)" if t in ("DOUBLE", "FLOAT") else c for c, t in
                        ((r[0], r[1]) for r in con.execute(f"DESCRIBE {v}").fetchall()))
        del cols
        out[v] = sorted(repr(r) for r in con.execute(f"SELECT {sel} FROM {v}").fetchall())
    return out


def _week_files(home: Path, table: str) -> dict[str, set[str]]:
    """The data files of a derived table, by week partition."""
    import pyarrow as pa

    dt = lake_mod.Lake(home).open(table)
    actions = pa.table(dt.get_add_actions(flatten=True))
    out: dict[str, set[str]] = {}
    for path, week in zip(actions.column("path").to_pylist(),
                          actions.column("partition.week").to_pylist(), strict=True):
        out.setdefault(week, set()).add(path)
    return out


def test_derived_a_week_at_a_time_equals_the_whole_lake_computed_at_once(
        tmp_path: Path) -> None:
    """Every public view of the published warehouse (derived week by week, each week from its
    days and two days either side) equals the views computed over the whole lake at once,
    across week and month boundaries that runs and traces cross; a later night rewrites its
    own week and leaves the earlier week's files as they were."""
    home = tmp_path / "home"
    ingest(_month_boundary_landing(tmp_path / "landing", ["2026-10-31", "2026-11-01",
                                                          "2026-11-02"], 1), home)
    first = {t: _week_files(home, t) for t in ("runs", "_derived/int_span_runs")}
    assert sorted(first["runs"]) == ["2026-10-26", "2026-11-02"]
    ingest(_month_boundary_landing(tmp_path / "night", ["2026-11-04"], 2), home)
    assert lake_mod.Lake(home).meta()["weeks_derived"] == 1
    for t, weeks in first.items():
        after = _week_files(home, t)
        assert after["2026-10-26"] == weeks["2026-10-26"], t
        assert after["2026-11-02"].isdisjoint(weeks["2026-11-02"]), t
    pub, whole = warehouse.connect(home), publishing.computed(home)
    try:
        got, want = _public_rows(pub), _public_rows(whole)
    finally:
        pub.close()
        whole.close()
    assert got.keys() == want.keys()
    for v in want:
        assert got[v] == want[v], v
    assert want["runs"] and want["spans"] and any("run_id_duplicate" in r for r in want["flags"])


def test_history_lists_each_ingest_and_as_of_answers_from_it(
        write_lines: Callable[..., Path], home: Path) -> None:
    """runlake history lists a version per ingest with its files and rows; --as-of a version
    or a timestamp answers from that version."""
    import time
    from datetime import UTC, datetime

    from typer.testing import CliRunner

    from transforms.cli import app

    a = write_lines([run("r1", "2026-11-20")], name="a.responses.jsonl")
    ingest([a], home)
    # A timestamp after the first commit and before the second: the lake's commit times are
    # in milliseconds, so the clock need only move past it (a poll, not a sleep of a second).
    now = time.time()
    between = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    deadline = time.monotonic() + 10
    while time.time() * 1000 < now * 1000 + 2:
        assert time.monotonic() < deadline, "the clock did not move"
        time.sleep(0.001)
    write_lines([run("r1", "2026-11-20", "v2"), run("r2", "2026-11-20")],
                name="a.responses.jsonl")
    ingest([a], home)
    versions = lake_mod.history(lake_mod.Lake(home))
    assert [v["version"] for v in versions] == [2, 1]
    assert versions[0]["files"] == [str(a)]
    assert (versions[0]["rows_added"]["runs"], versions[0]["rows_removed"]["runs"]) == (2, 1)
    runner = CliRunner()
    res = runner.invoke(app, ["history", "--home", str(home)])
    assert res.exit_code == 0 and "runs 2" in res.output, res.output
    for as_of in ("1", between):
        res = runner.invoke(app, ["sql", "select run_id, final_response from runs", "--home",
                                  str(home), "--as-of", as_of, "--format", "csv"])
        assert res.exit_code == 0, res.output
        assert res.output.splitlines() == ["run_id,final_response", "r1,ok"]
    res = runner.invoke(app, ["sql", "select 1", "--home", str(home), "--as-of", "99"])
    assert res.exit_code == 2 and "no version 99" in res.output


def test_a_lake_of_the_previous_format_is_converted_on_first_use(tmp_path: Path,
                                                                 capfd: Any) -> None:
    """Day links to version folders (the format before Delta Lake): the next ingest converts
    them into Delta tables, superseded lines included, and nothing is read again."""
    import os

    import pyarrow as pa
    import pyarrow.parquet as pq

    from transforms.contracts.schemas import TABLES

    home = tmp_path / "home"
    lake = home / "lake"

    def legacy(table: str, rows: list[dict[str, Any]], superseded: bool = False) -> None:
        schema = pa.schema([f for f in TABLES[table].schema if f.name != "day"])
        version = lake / "_versions" / table / "day=2026-11-20.abc"
        version.mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), version / "part-0.parquet")
        link = (lake / "_superseded" if superseded else lake) / table / "day=2026-11-20"
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.relpath(version, link.parent), link)

    src = str(tmp_path / "old.responses.jsonl")
    legacy("runs", [{"run_id": "r1", "agent": "a", "status": "passed", "source_file": src,
                     "source_line": 2}])
    legacy("ingest_files", [{"source_file": src, "kind": "responses", "sha256": "x",
                             "bytes": 10, "lines": 2, "lines_accepted": 2,
                             "lines_quarantined": 0, "lines_blank": 0}])
    report = ingest([], home)
    assert report.files == []
    assert "converting the lake" in capfd.readouterr().err
    assert (lake / "_lines" / "runs" / "_delta_log").is_dir()
    assert (lake / "runs" / "_delta_log").is_dir()
    assert list(home.glob("lake.before-delta-*"))
    con = warehouse.connect(home)
    try:
        assert con.execute("SELECT run_id, day::VARCHAR FROM runs").fetchall() == [
            ("r1", "2026-11-20")]
        assert con.execute("SELECT source_file FROM ingest_files").fetchall() == [(src,)]
    finally:
        con.close()


def _far_links_landing(folder: Path) -> list[Path]:
    """Two weeks and a half of runs with spans, some of them out of a link's reach: spans two
    and four days after their run (across a week's end for some), a trace_id carried by two
    runs two days apart (with spans between them, within a day of both), and a span whose
    parent started two days before it."""
    import random
    from datetime import date, timedelta

    from devtools.synth import default_agents, make_run, make_spans

    rng = random.Random(5)
    days = [date(2026, 10, 25) + timedelta(days=i) for i in range(17)]
    agents = default_agents(days)
    runs, spans = [], []
    day_ns = 86_400 * 10**9
    for n, day in enumerate(days):
        for i in range(6):
            line = make_run(rng, agents[i % len(agents)], day, n * 100 + i, case=i)
            if i == 5:
                line["started_at"] = f"{day}T23:59:59Z"
            its = make_spans(rng, line)
            if i in (1, 4):  # spans two or four days after their run: not counted toward it
                for s in its:
                    s["start_time"] += (2 if i == 1 else 4) * day_ns
                    s["end_time"] += (2 if i == 1 else 4) * day_ns
            if i == 2 and n % 3 == 0:  # a child span whose parent started two days before
                its[0]["start_time"] -= 2 * day_ns
                its[0]["end_time"] -= 2 * day_ns
            runs.append(line)
            spans += its
    # One trace, two runs two days apart; spans on the day between and the day after the second.
    first, second = runs[6 * 8 + 3], runs[6 * 10 + 3]
    second["trace_id"] = first["trace_id"]
    for s in make_spans(rng, first):
        s["start_time"] += day_ns
        s["end_time"] += day_ns
        spans.append(s)
    for s in make_spans(rng, second):
        s["context"]["trace_id"] = first["trace_id"]
        s["start_time"] += day_ns
        s["end_time"] += day_ns
        spans.append(s)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "r.responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    (folder / "s.spans.jsonl").write_text("".join(json.dumps(s) + "\n" for s in spans))
    return sorted(folder.iterdir())


def test_derived_rows_do_not_depend_on_how_weeks_are_grouped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A backfill computes adjacent weeks in one pass, a night its own week alone: links reach
    one day across midnight (the within_reach macro), so every public view is the same either
    way, and equals the whole lake computed at once, with links out of reach in the data."""
    from datetime import UTC, datetime

    landing = _far_links_landing(tmp_path / "landing")
    now = datetime(2026, 11, 12, tzinfo=UTC)
    monkeypatch.setattr(derive_mod, "GROUP_WEEKS", 1)
    alone = tmp_path / "alone"
    ingest(landing, alone, now=now)
    monkeypatch.setattr(derive_mod, "GROUP_WEEKS", 8)
    grouped = tmp_path / "grouped"
    ingest(landing, grouped, now=now)
    assert len(_week_files(grouped, "_derived/int_runs")) == 4
    rows = {}
    for name, home in (("alone", alone), ("grouped", grouped)):
        con = warehouse.connect(home)
        try:
            rows[name] = _public_rows(con)
        finally:
            con.close()
    live = publishing.computed(grouped)
    try:
        rows["live"] = _public_rows(live)
        linked = dict(live.execute(
            "SELECT linked_by IS NULL, count(*) FROM spans GROUP BY 1").fetchall())
        near = live.execute("SELECT count(*) FROM intermediate.int_span_runs "
                            "WHERE run_id IS NOT NULL AND near_run_day IS NULL").fetchall()
        orphans = live.execute("SELECT count(*) FROM flags "
                               "WHERE code = 'span_parent_missing'").fetchall()
        far = live.execute("SELECT count(*), count(DISTINCT run_id) FROM flags "
                           "WHERE code = 'span_outside_run_window'").fetchall()
        # The SQL's reach is the one the weeks' margin is made for.
        reach = warehouse.NEIGHBOUR_DAYS
        assert live.execute(f"SELECT within_reach(DATE '2026-11-01' + {reach}, DATE "
                            f"'2026-11-01'), within_reach(DATE '2026-11-01' + {reach + 1}, "
                            "DATE '2026-11-01')").fetchall() == [(True, False)]
    finally:
        live.close()
    for v in rows["live"]:
        assert rows["alone"][v] == rows["live"][v], v
        assert rows["grouped"][v] == rows["live"][v], v
    # Out of reach: spans two days after their run unlinked (or, linked by their run_id
    # attribute, not counted toward it), the ambiguous trace's spans unlinked, and parents two
    # days away reported missing.
    assert linked[True] > 0 and linked[False] > 0
    assert linked[True] + near[0][0] >= 2 * 17 * 3 + 3
    assert orphans[0][0] >= 6
    # The runs whose spans lie two or four days after them are found, and say so (the
    # lake-wide findings, the same whichever way the weeks were computed).
    assert far[0][1] >= 2 * 17


def test_many_small_files_are_staged_together(tmp_path: Path) -> None:
    """A folder of many one-line files is normalized and staged in batches: the lake holds a
    few data files per table, not one per input file, and every file keeps its own counts."""
    from transforms.block_scheduler import BATCH_FILES

    folder = tmp_path / "landing"
    folder.mkdir()
    n = 1200
    for i in range(n):
        (folder / f"f{i:05d}.responses.jsonl").write_text(
            json.dumps(run(f"r{i}", "2026-11-20")) + "\n" + ("not json\n" if i % 100 == 0 else ""))
    home = tmp_path / "home"
    report = ingest([folder], home, workers=1)
    assert len(report.files) == n
    assert sum(f.accepted for f in report.files) == n
    assert [f.quarantined for f in report.files] == [1 if i % 100 == 0 else 0 for i in range(n)]
    files = list((home / "lake" / "_lines" / "runs").glob("month=*/*.parquet"))
    assert 1 <= len(files) <= -(-n // BATCH_FILES)
    con = warehouse.connect(home)
    try:
        assert con.execute("SELECT count(*), count(DISTINCT source_file) FROM runs").fetchall() \
            == [(n, n)]
        assert con.execute("SELECT count(*) FROM quarantine").fetchall() == [(n // 100,)]
    finally:
        con.close()


def test_the_newest_lake_version_is_read_from_the_newest_commits(
        write_lines: Callable[..., Path], home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest's commits that are no lake version (vacuum's) are passed over: the newest
    version is found past more of them than the first read takes, without reading the whole
    history, and an older version (--as-of) still answers."""
    from deltalake import DeltaTable

    a = write_lines([run("r1", "2026-11-20")], name="a.responses.jsonl")
    ingest([a], home)
    write_lines([run("r1", "2026-11-20", "v2"), run("r2", "2026-11-20")],
                name="a.responses.jsonl")
    ingest([a], home)
    lake = lake_mod.Lake(home)
    newest, meta, first, meta_first = lake.snapshot(), lake.meta(), lake.snapshot(1), lake.meta(1)
    manifest_uri = lake.delta_uri(lake_mod.MANIFEST)
    for _ in range(lake_tables.RECENT_COMMITS + 3):  # commits that change no row
        dt = DeltaTable(manifest_uri)
        dt.create_write_transaction([], mode="append", schema=dt.schema())
    windows: list[int | None] = []
    history = DeltaTable.history

    def counted(self: DeltaTable, limit: int | None = None) -> list[dict[str, Any]]:
        windows.append(limit)
        return history(self, limit)

    monkeypatch.setattr(DeltaTable, "history", counted)
    lake = lake_mod.Lake(home)
    assert lake.snapshot() == newest and lake.meta() == meta
    assert windows and None not in windows, windows
    assert lake.snapshot(1) == first and lake.meta(1) == meta_first != meta
    assert lake.snapshot(2) == newest
    with pytest.raises(lake_mod.InputError, match="no version 99"):
        lake.snapshot(99)


def test_a_tables_newest_version_is_opened_once_and_a_commit_is_not_opened_again(
        write_lines: Callable[..., Path], home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Readers of a table's newest version share one DeltaTable per version in a process
    (one listing of the log each time, no second open); the table a commit wrote is handed
    on to them without being opened again, and holds what a fresh open reads; a new commit,
    or a table removed and written again under the same name, is seen at once."""
    import shutil
    import subprocess
    import sys

    import pyarrow as pa
    from deltalake import DeltaTable

    monkeypatch.setattr(lake_tables, "_AT_VERSION", {})
    opened: list[tuple[str, int | None]] = []
    init = DeltaTable.__init__

    def counted(self: DeltaTable, table_uri: Any, version: int | None = None,
                **kw: Any) -> None:
        opened.append((str(table_uri), version))
        init(self, table_uri, version=version, **kw)

    monkeypatch.setattr(DeltaTable, "__init__", counted)
    a = write_lines([run("r1", "2026-11-20")], name="a.responses.jsonl")
    ingest([a], home)
    lake = lake_mod.Lake(home)
    runs = lake_mod.stored("runs")
    version = lake.log_version(runs)
    # The ingest's commit of the runs rows, not opened again (by this Lake or another).
    opened.clear()
    dt = lake_mod.Lake(home).newest(runs)
    assert lake.newest(runs) is dt and lake.open(runs, version) is dt
    assert opened == [] and dt.version() == version
    fresh = DeltaTable(lake.delta_uri(runs))
    assert sorted(dt.file_uris()) == sorted(fresh.file_uris())
    assert pa.table(dt.get_add_actions(flatten=True)).to_pydict() == \
        pa.table(fresh.get_add_actions(flatten=True)).to_pydict()
    # Another process's commit: the next read sees it.
    b = write_lines([run("r2", "2026-11-21")], name="b.responses.jsonl")
    subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                    "from transforms.ingest import ingest; ingest([Path(sys.argv[1])], "
                    "sys.argv[2])", str(b), str(home)], check=True)
    later = lake.newest(runs)
    assert later.version() > version
    assert len(later.file_uris()) == len(fresh.file_uris()) + 1
    # A long-lived process keeps a table's newest versions only.
    shared = lake_tables._AT_VERSION
    assert 0 < sum(k[0] == lake.delta_uri(runs) for k in shared) <= lake_tables.KEPT_VERSIONS
    # The same table removed and made again up to the same version, with no rows: that
    # version is not the old one's.
    shutil.rmtree(lake.root / runs)
    made = DeltaTable.create(lake.delta_uri(runs), lake_mod.lake_schema("runs"),
                             partition_by=["month"])
    for _ in range(later.version()):
        made.create_write_transaction([], mode="append", schema=made.schema())
    again = lake_mod.Lake(home).newest(runs)
    assert again.version() == later.version() and again.file_uris() == []


def test_every_lake_table_checkpoints_its_log_every_few_commits(
        write_lines: Callable[..., Path], home: Path) -> None:
    """Every table (written, derived, the manifest) checkpoints its log every
    CHECKPOINT_INTERVAL commits, so an open reads a checkpoint and a few commits, not a
    night's worth of them each; a table made without that setting gets it at the next ingest."""
    from deltalake import DeltaTable

    from transforms.lake.files import CHECKPOINT_INTERVAL

    a = write_lines([run("r1", "2026-11-20")], name="a.responses.jsonl")
    ingest([a], home)
    lake = lake_mod.Lake(home)
    tables = lake.tables()
    assert {"runs", lake_mod.MANIFEST} <= set(tables) and any(
        t.startswith("_derived/") for t in tables), tables

    def interval(t: str) -> str | None:
        return DeltaTable(lake.delta_uri(t)).metadata().configuration.get(
            "delta.checkpointInterval")

    assert {t: interval(t) for t in tables} == {t: str(CHECKPOINT_INTERVAL) for t in tables}
    older = ["runs", lake_mod.MANIFEST, next(t for t in tables if t.startswith("_derived/"))]
    for t in older:  # as delta-rs makes a table by default: every 100 commits
        DeltaTable(lake.delta_uri(t)).alter.set_table_properties(
            {"delta.checkpointInterval": "100"})
    write_lines([run("r1", "2026-11-20", "v2")], name="a.responses.jsonl")
    ingest([a], home)
    assert {t: interval(t) for t in older} == {t: str(CHECKPOINT_INTERVAL) for t in older}
