"""Vacuum and retention: a fractional retention is kept (rounded up, never down to zero), an
unbounded one is refused before anything is written, and vacuum's own Delta commits are not
lake versions (history does not list them, a snapshot never lands on them)."""

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.transforms.test_lake import run
from transforms import lake as lake_mod
from transforms import settings
from transforms.errors import InputError
from transforms.ingest import ingest


def _replaced(write_lines: Callable[..., Path], home: Path) -> tuple[Path, list[str]]:
    """A lake where one data file of runs was just replaced: (the input file, old data files)."""
    path = write_lines([run("a", "2026-11-20")])
    ingest([path], home)
    old = lake_mod.Lake(home).file_uris("runs")
    write_lines([run("a", "2026-11-20", "v2")])
    ingest([path], home)
    return path, old


def test_a_fractional_retention_keeps_a_file_just_replaced(
        write_lines: Callable[..., Path], home: Path) -> None:
    """0.5 hours is not 0 hours: a file replaced a moment ago stays (vacuum counts in whole
    hours, rounded up: 0.5 h keeps it for 1 h)."""
    _, old = _replaced(write_lines, home)
    lake = lake_mod.Lake(home)
    assert lake.vacuum(retention_hours=0.5) == 0
    assert lake.vacuum(retention_hours=0.01) == 0
    assert all(Path(f).exists() for f in old)
    assert lake.vacuum(retention_hours=0) > 0
    assert not any(Path(f).exists() for f in old)


@pytest.mark.parametrize("value", ["inf", "Infinity", "nan", "1e20", "-1"])
def test_an_unbounded_retention_setting_is_refused_in_one_line(
        monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("RUNLAKE_RETENTION_HOURS", value)
    with pytest.raises(InputError) as e:
        settings.load()
    assert "RUNLAKE_RETENTION_HOURS" in str(e.value) and "\n" not in str(e.value)


def test_the_longest_retention_allowed_vacuums(write_lines: Callable[..., Path],
                                               home: Path, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    monkeypatch.setenv("RUNLAKE_RETENTION_HOURS", str(settings.MAX_RETENTION_HOURS))
    assert settings.load().retention_hours == settings.MAX_RETENTION_HOURS
    _, old = _replaced(write_lines, home)
    assert lake_mod.Lake(home).vacuum(settings.MAX_RETENTION_HOURS) == 0
    assert all(Path(f).exists() for f in old)


@pytest.mark.parametrize("hours", [float("inf"), 1e20, float("nan"), -1.0])
def test_an_unbounded_retention_given_to_an_ingest_changes_nothing(
        write_lines: Callable[..., Path], home: Path, hours: float) -> None:
    """Refused before the first commit, not at the vacuum after the data tables committed."""
    path, _ = _replaced(write_lines, home)
    before = lake_mod.Lake(home).newest_versions()
    write_lines([run("a", "2026-11-20", "v3")])
    with pytest.raises(InputError, match="retention"):
        ingest([path], home, retention_hours=hours)
    assert lake_mod.Lake(home).newest_versions() == before


def _vacuumed(write_lines: Callable[..., Path], home: Path) -> Path:
    """Two ingests, then a vacuum that deletes files of every table it touched (it commits
    VACUUM START and VACUUM END to each Delta table, ingest_files among them)."""
    path, _ = _replaced(write_lines, home)
    assert lake_mod.Lake(home).vacuum(0) > 0
    return path


def test_vacuum_adds_no_version_to_history(write_lines: Callable[..., Path],
                                           home: Path) -> None:
    """The lake's versions are its ingests: vacuum's own commits are not listed, and --as-of
    one of them is no version of the lake."""
    from typer.testing import CliRunner

    from transforms.cli import app

    _vacuumed(write_lines, home)
    lake = lake_mod.Lake(home)
    assert lake.open("ingest_files").version() == 4  # 0 create, 1-2 ingests, 3-4 vacuum
    assert [(v["version"], v["action"]) for v in lake_mod.history(lake)] == [
        (2, "ingest"), (1, "ingest")]
    runner = CliRunner()
    res = runner.invoke(app, ["history", "--home", str(home)])
    assert res.exit_code == 0 and "0 files" not in res.output, res.output
    res = runner.invoke(app, ["sql", "select final_response from runs", "--home", str(home),
                              "--as-of", "3"])
    assert res.exit_code == 2 and "no version 3" in res.output, res.output
    assert lake.tables_at()["ingest_files"] == 2


@pytest.mark.parametrize("stop", ["after vacuum", "between vacuum start and end"])
def test_a_crash_in_vacuum_leaves_every_row_readable(
        write_lines: Callable[..., Path], home: Path, monkeypatch: pytest.MonkeyPatch,
        stop: str) -> None:
    """An ingest that dies in its vacuum (its data tables committed, its manifest not): the
    lake's newest version is still the last ingest's, `runlake doctor` builds its views, and
    they hold every row; the next ingest completes the interrupted one."""
    from typer.testing import CliRunner

    from transforms import warehouse
    from transforms.cli import app
    from transforms.lake import commit as lakecommit

    path, _ = _replaced(write_lines, home)
    real = lakecommit.vacuum

    def dies(lake: lake_mod.Lake, hours: float) -> int:
        real(lake, hours)
        if stop != "after vacuum":
            # A kill between the two commits of the manifest's vacuum: its END is not written.
            log = home / "lake" / "ingest_files" / "_delta_log"
            max(log.glob("*.json")).unlink()
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(lakecommit, "VACUUM_EVERY", 1)
    monkeypatch.setattr(lakecommit, "vacuum", dies)
    write_lines([run("a", "2026-11-20", "v3"), run("b", "2026-11-20")])
    with pytest.raises(KeyboardInterrupt):
        ingest([path], home, retention_hours=0)
    monkeypatch.setattr(lakecommit, "vacuum", real)
    res = CliRunner().invoke(app, ["doctor", "--home", str(home)])
    assert res.exit_code == 0, res.output
    con = warehouse.connect(home)
    try:
        assert con.execute("SELECT run_id, final_response FROM runs").fetchall() == [
            ("a", "v2")]
    finally:
        con.close()
    ingest([path], home, retention_hours=0)
    con = warehouse.connect(home)
    try:
        assert con.execute("SELECT run_id, final_response FROM runs ORDER BY 1").fetchall() == [
            ("a", "v3"), ("b", "ok")]
    finally:
        con.close()


def test_as_of_a_vacuumed_version_says_it_is_older_than_the_retention(
        write_lines: Callable[..., Path], home: Path) -> None:
    from typer.testing import CliRunner

    from transforms.cli import app

    _vacuumed(write_lines, home)
    runner = CliRunner()
    res = runner.invoke(app, ["sql", "select final_response from runs", "--home", str(home),
                              "--as-of", "1"])
    assert res.exit_code == 2, res.output
    assert "older than the retention" in res.output and "doctor" not in res.output
    assert len(res.output.strip().splitlines()) == 1
    res = runner.invoke(app, ["sql", "select final_response from runs", "--home", str(home),
                              "--as-of", "2", "--format", "csv"])
    assert res.exit_code == 0 and res.output.splitlines() == ["final_response", "v2"]


def test_history_limit_counts_lake_versions_not_vacuum_commits(
        write_lines: Callable[..., Path], home: Path) -> None:
    _vacuumed(write_lines, home)
    lake = lake_mod.Lake(home)
    assert [v["version"] for v in lake_mod.history(lake, 1)] == [2]
    assert [v["version"] for v in lake_mod.history(lake, 2)] == [2, 1]
    assert [v["version"] for v in lake_mod.history(lake, 5)] == [2, 1]
