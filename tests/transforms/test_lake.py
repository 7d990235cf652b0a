"""The lake: day partitions replaced whole, re-ingest is a no-op, duplicates resolve across
files and days, and a crash leaves the previous warehouse readable."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from transforms import lake as lake_mod
from transforms import warehouse
from transforms.ingest import ingest


def run(run_id: str, day: str, text: str = "ok") -> dict[str, Any]:
    return {"run_id": run_id, "agent": "a", "started_at": f"{day}T12:00:00Z",
            "response": {"final_response": text,
                         "messages": [{"role": "assistant", "content": text}]}}


def snapshot(home: Path) -> dict[str, bytes]:
    """Every Parquet file readers see, by the path they see it at."""
    return {str(p.relative_to(home)): p.read_bytes()
            for p in (home / "lake").glob("**/day=*/*.parquet") if "_versions" not in p.parts}


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
    assert not (home / "lake" / "runs" / "day=2026-11-20").exists()
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
    assert not (home / "lake" / "runs" / "day=2099-01-01").exists()


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


def test_crash_mid_commit_rolls_forward(write_lines: Callable[..., Path], home: Path,
                                        monkeypatch: pytest.MonkeyPatch,
                                        query: Callable[..., Any]) -> None:
    """A writer that dies between renames leaves a journal; the next writer finishes the commit."""
    path = write_lines([run("r1", "2026-11-20")])
    ingest([path], home)
    write_lines([run("r1", "2026-11-20", "v2"), run("r2", "2026-11-21")])
    real = lake_mod.os.replace
    calls = {"n": 0}

    def dying_replace(src: str, dst: str) -> None:
        if Path(src).name.startswith(".day="):  # a link switch
            calls["n"] += 1
            if calls["n"] == 4:
                raise OSError("disk vanished")
        real(src, dst)

    monkeypatch.setattr(lake_mod.os, "replace", dying_replace)
    with pytest.raises(OSError, match="disk vanished"):
        ingest([path], home)
    monkeypatch.setattr(lake_mod.os, "replace", real)
    assert (home / "lake" / lake_mod.JOURNAL).exists()
    # The views still open: the warehouse of the previous ingest is in place.
    assert query("SELECT count(*) FROM flag_codes")[0][0] > 0
    report = ingest([path], home)
    assert report.recovered
    assert query("SELECT run_id, final_response FROM runs ORDER BY 1") == [
        ("r1", "v2"), ("r2", "ok")]
    assert not (home / "lake" / lake_mod.JOURNAL).exists()


def test_failed_build_keeps_previous_warehouse(write_lines: Callable[..., Path], home: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    """A broken SQL file fails the build loudly, names the file, and leaves the old file."""
    ingest([write_lines([run("r1", "2026-11-20")])], home)
    before = warehouse.path(home).read_bytes()
    sql = tmp_path / "sql"
    (sql / "marts").mkdir(parents=True)
    (sql / "marts" / "v_broken.sql").write_text("CREATE VIEW v_broken AS SELECT * FROM nope")
    monkeypatch.setattr(warehouse, "SQL_DIR", sql)
    with pytest.raises(warehouse.WarehouseError, match="v_broken.sql"):
        warehouse.build(home)
    assert warehouse.path(home).read_bytes() == before
    assert not [p for p in home.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("step", ["derive", "build"])
def test_a_failed_publishing_step_is_redone_by_the_next_ingest(
        write_lines: Callable[..., Path], home: Path, monkeypatch: pytest.MonkeyPatch,
        query: Callable[..., Any], step: str) -> None:
    """A commit whose derive or build step dies: the next ingest, with nothing new to read,
    sees the derived tables or the published warehouse are older than the lake and computes
    and publishes them again."""
    path = write_lines([run("r1", "2026-11-20")])
    ingest([path], home)
    write_lines([run("r1", "2026-11-20", "v2"), run("r2", "2026-11-21")])
    real = getattr(warehouse, step)

    def dying(h: Path) -> None:
        raise OSError("killed")

    monkeypatch.setattr(warehouse, step, dying)
    with pytest.raises(OSError, match="killed"):
        ingest([path], home)
    monkeypatch.setattr(warehouse, step, real)
    assert not warehouse.is_current(home)
    if step == "derive":  # the views still read the derived tables of the previous commit
        assert query("SELECT run_id, final_response FROM runs") == [("r1", "ok")]
    report = ingest([path], home)
    assert [f.skipped for f in report.files] == [True]
    assert warehouse.is_current(home)
    assert query("SELECT run_id, final_response FROM runs ORDER BY 1") == [
        ("r1", "v2"), ("r2", "ok")]


def test_readers_survive_a_rebuild(write_lines: Callable[..., Path], home: Path) -> None:
    """A reader holding the warehouse read-only keeps querying while a writer ingests."""
    ingest([write_lines([run("r1", "2026-11-20")], name="a.responses.jsonl")], home)
    con = warehouse.connect(home)
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (1,)
    ingest([write_lines([run("r2", "2026-11-20")], name="b.responses.jsonl")], home)
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (2,)
    con.close()
    con = warehouse.connect(home)
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (2,)
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


def _parts(home: Path, table: str, day: str) -> list[str]:
    return sorted(p.name for p in (home / "lake" / table / f"day={day}").glob("*.parquet"))


def test_new_rows_are_added_without_rewriting(write_lines: Callable[..., Path], home: Path,
                                              query: Callable[..., Any]) -> None:
    """A second file for the same day adds its parts; the day's old parts are kept as they are."""
    ingest([write_lines([run("a", "2026-11-20")], name="a.responses.jsonl")], home)
    first = _parts(home, "runs", "2026-11-20")
    report = ingest([write_lines([run("b", "2026-11-20")], name="b.responses.jsonl")], home)
    assert report.rewritten_days == []
    parts = _parts(home, "runs", "2026-11-20")
    assert len(parts) == 2 and set(first) < set(parts)
    assert query("SELECT run_id FROM runs ORDER BY 1") == [("a",), ("b",)]


def test_many_parts_are_compacted(write_lines: Callable[..., Path], home: Path,
                                  monkeypatch: pytest.MonkeyPatch,
                                  query: Callable[..., Any]) -> None:
    """Past MAX_PARTS a day is rewritten into one file, rows unchanged."""
    monkeypatch.setattr(lake_mod, "MAX_PARTS", 2)
    for name in "abc":
        ingest([write_lines([run(name, "2026-11-20")], name=f"{name}.responses.jsonl")], home)
    assert len(_parts(home, "runs", "2026-11-20")) == 1
    assert query("SELECT run_id FROM runs ORDER BY 1") == [("a",), ("b",), ("c",)]


def test_replaced_versions_are_collected_after_the_grace_period(
        write_lines: Callable[..., Path], home: Path) -> None:
    """Versions no link points to stay for readers mid-query, then go."""
    path = write_lines([run("a", "2026-11-20")])
    ingest([path], home)
    write_lines([run("a", "2026-11-20", "v2")])
    ingest([path], home)
    lake = lake_mod.Lake(home)
    versions = lambda: list((home / "lake" / lake_mod.VERSIONS).glob("*/day=*"))  # noqa: E731
    before = len(versions())
    assert lake.collect_garbage() == 0
    assert lake.collect_garbage(grace_seconds=-1) > 0
    assert len(versions()) < before
    con = warehouse.connect(home)
    assert con.execute("SELECT final_response FROM runs").fetchall() == [("v2",)]
    con.close()


def test_one_writer_at_a_time(write_lines: Callable[..., Path], home: Path) -> None:
    """A second writer fails at once with a clear message; the first is unharmed."""
    from transforms.errors import LakeBusy

    path = write_lines([run("a", "2026-11-20")])
    lake = lake_mod.Lake(home)
    with lake.writer(), pytest.raises(LakeBusy, match="another runlake ingest"):
        ingest([path], home)
    assert ingest([path], home).files[0].accepted == 1


def test_lake_written_before_a_new_column_still_reads(write_lines: Callable[..., Path],
                                                      home: Path, query: Callable[..., Any],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A column added to a table after its files were written reads as null, not an error."""
    import pyarrow as pa

    from transforms import schemas

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
