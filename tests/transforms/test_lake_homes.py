"""A home as users move and keep it: moved or copied, written by an earlier runlake, damaged, read
from another directory, holding an unreadable file or a file read as another kind, and a home
path that would be a glob."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.transforms.test_lake import run
from transforms import lake as lake_mod
from transforms import warehouse
from transforms.ingest import ingest


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
