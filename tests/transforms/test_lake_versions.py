"""The lake's versions: each ingest listed in the history and answered as of, a lake of the
previous format converted, the newest version read from the newest commits, a table's newest
version opened once, and every table's log checkpointed."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.transforms.test_lake import run
from transforms import lake as lake_mod
from transforms import warehouse
from transforms.ingest import ingest
from transforms.lake import tables as lake_tables


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
    newest, meta = lake.tables_at(), lake.commit_meta()
    first, meta_first = lake.tables_at(1), lake.commit_meta(1)
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
    assert lake.tables_at() == newest and lake.commit_meta() == meta
    assert windows and None not in windows, windows
    assert lake.tables_at(1) == first and lake.commit_meta(1) == meta_first != meta
    assert lake.tables_at(2) == newest
    with pytest.raises(lake_mod.InputError, match="no version 99"):
        lake.tables_at(99)


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
    runs = lake_mod.lines_path("runs")
    version = lake.newest_version(runs)
    # The ingest's commit of the runs rows, not opened again (by this Lake or another).
    opened.clear()
    dt = lake_mod.Lake(home).newest_table(runs)
    assert lake.newest_table(runs) is dt and lake.open(runs, version) is dt
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
    later = lake.newest_table(runs)
    assert later.version() > version
    assert len(later.file_uris()) == len(fresh.file_uris()) + 1
    # A long-lived process keeps a table's newest versions only.
    assert 0 < len(lake_tables.kept_versions(lake.delta_uri(runs))) <= lake_tables.KEPT_VERSIONS
    # The same table removed and made again up to the same version, with no rows: that
    # version is not the old one's.
    shutil.rmtree(lake.root / runs)
    made = DeltaTable.create(lake.delta_uri(runs), lake_mod.lake_schema("runs"),
                             partition_by=["month"])
    for _ in range(later.version()):
        made.create_write_transaction([], mode="append", schema=made.schema())
    again = lake_mod.Lake(home).newest_table(runs)
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
