"""Damage to the lake from outside runlake: found by the next ingest (a one-line error) and by
`runlake doctor`, repaired by `runlake doctor --repair` to what a clean ingest of the same
files gives."""

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.transforms.test_lake import table_digests
from transforms import warehouse
from transforms.cli import app
from transforms.ingest import ingest
from transforms.lake import Lake, doctor, lines_path

SAMPLES = Path(__file__).resolve().parents[2] / "data_samples"
DAYS = ("2026-11-18", "2026-11-19", "2026-11-20")


@pytest.fixture
def landing(tmp_path: Path) -> Path:
    """Three nights of the samples (responses and spans), copied so they can be changed."""
    folder = tmp_path / "landing"
    for day in DAYS:
        shutil.copytree(SAMPLES / day, folder / day)
    return folder


@pytest.fixture
def clean(landing: Path, tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "clean"
    ingest([landing], home, workers=1)
    return table_digests(home)


def _data_files(home: Path, table: str) -> list[Path]:
    """The data files an ingest wrote for a lake table (its rows as read)."""
    return sorted((home / "lake" / lines_path(table)).glob("month=*/*.parquet"))


def _damaged_home(landing: Path, tmp_path: Path, damage: Callable[[Path], None]) -> Path:
    home = tmp_path / "home"
    ingest([landing], home, workers=1)
    damage(home)
    return home


def _repair_and_compare(home: Path, landing: Path, clean: dict[str, str],
                        expect: str) -> None:
    with pytest.raises(doctor.LakeDamaged, match=expect):
        ingest([landing], home, workers=1)
    runner = CliRunner()
    res = runner.invoke(app, ["doctor", "--home", str(home)])
    assert res.exit_code == 1 and "damaged:" in res.output, res.output
    res = runner.invoke(app, ["doctor", "--home", str(home), "--repair"])
    assert res.exit_code == 0, res.output
    assert "repaired" in res.output
    assert doctor.check(Lake(home)) == []
    assert table_digests(home) == clean
    res = runner.invoke(app, ["doctor", "--home", str(home)])
    assert res.exit_code == 0 and "nothing to repair" in res.output, res.output
    # And the next ingest of the same landing changes nothing.
    report = ingest([landing], home, workers=1)
    assert all(f.skipped for f in report.files)
    assert table_digests(home) == clean


def test_a_deleted_data_file_is_found_and_its_input_read_again(
        landing: Path, tmp_path: Path, clean: dict[str, str]) -> None:
    home = _damaged_home(landing, tmp_path, lambda h: _data_files(h, "messages")[0].unlink())
    _repair_and_compare(home, landing, clean, "missing or truncated")


def test_a_truncated_data_file_is_found_and_its_input_read_again(
        landing: Path, tmp_path: Path, clean: dict[str, str]) -> None:
    def cut(h: Path) -> None:
        f = _data_files(h, "runs")[-1]
        os.truncate(f, f.stat().st_size // 2)

    home = _damaged_home(landing, tmp_path, cut)
    _repair_and_compare(home, landing, clean, "missing or truncated")


def test_a_deleted_month_folder_is_found(landing: Path, tmp_path: Path,
                                         clean: dict[str, str]) -> None:
    home = _damaged_home(landing, tmp_path, lambda h: shutil.rmtree(
        _data_files(h, "tool_calls")[0].parent))
    _repair_and_compare(home, landing, clean, "tool_calls table")


def test_a_removed_ingest_files_table_is_found(landing: Path, tmp_path: Path,
                                               clean: dict[str, str]) -> None:
    home = _damaged_home(landing, tmp_path,
                         lambda h: shutil.rmtree(h / "lake" / "ingest_files"))
    _repair_and_compare(home, landing, clean, "ingest_files table is missing")


def test_a_damaged_log_entry_is_found_and_the_table_read_again(
        landing: Path, tmp_path: Path, clean: dict[str, str]) -> None:
    def garble(h: Path) -> None:
        log = sorted((h / "lake" / "spans" / "_delta_log").glob("*.json"))[-1]
        log.write_text('{"add": {"path": "month=2026-11/nowhere.parquet", "size": 1')

    home = _damaged_home(landing, tmp_path, garble)
    _repair_and_compare(home, landing, clean, "spans table cannot be read")
    assert any((home / "lake" / doctor.DAMAGED).iterdir())  # moved aside, not deleted


@pytest.mark.parametrize("table", ["_lines/runs", "_lines/messages", "ingest_files"])
def test_a_damaged_log_of_a_written_table_is_repaired(
        landing: Path, tmp_path: Path, clean: dict[str, str], table: str) -> None:
    """A written table whose log cannot be read is moved aside and made anew by the repair:
    the versions readers saw before name nothing in it any more, so every week is derived
    again (the derive failed on them with delta-rs's "LogSegment end version" error)."""
    def garble(h: Path) -> None:
        log = sorted((h / "lake" / table / "_delta_log").glob("*.json"))[-1]
        log.write_text('{"add": {"path": "month=2026-11/nowhere.parquet", "size": 1')

    home = _damaged_home(landing, tmp_path, garble)
    _repair_and_compare(home, landing, clean, "table cannot be read")
    assert any((home / "lake" / doctor.DAMAGED).iterdir())


def test_a_truncated_derived_file_is_computed_again(landing: Path, tmp_path: Path,
                                                    clean: dict[str, str]) -> None:
    """A derived table holds no input's rows of its own: a damaged file of one is found like
    any other, and the repair makes that table again from the rows as read (no input file is
    read again)."""
    def cut(h: Path) -> None:
        target = sorted((h / "lake" / "_derived" / "int_runs").glob("week=*/*.parquet"))[0]
        os.truncate(target, 10)

    home = _damaged_home(landing, tmp_path, cut)
    _repair_and_compare(home, landing, clean, "_derived/int_runs table")


def test_a_deleted_public_table_is_made_again(landing: Path, tmp_path: Path,
                                              clean: dict[str, str]) -> None:
    home = _damaged_home(landing, tmp_path, lambda h: shutil.rmtree(h / "lake" / "messages"))
    _repair_and_compare(home, landing, clean, "messages table is missing")


def test_an_input_file_that_is_gone_is_listed(landing: Path, tmp_path: Path) -> None:
    """The repair reads again what is still there and names what is not."""
    home = _damaged_home(landing, tmp_path, lambda h: _data_files(h, "runs")[0].unlink())
    lost = doctor.check(Lake(home))[0].sources or set()
    assert lost
    for s in lost:
        Path(s).unlink()
    res = CliRunner().invoke(app, ["doctor", "--home", str(home), "--repair"])
    assert res.exit_code == 0, res.output
    assert "gone, its rows are no longer in the lake" in res.output
    con = warehouse.connect(home)
    try:
        left = {r[0] for r in con.execute("SELECT DISTINCT source_file FROM runs").fetchall()}
        listed = {r[0] for r in con.execute("SELECT source_file FROM ingest_files").fetchall()}
    finally:
        con.close()
    assert not (left & lost) and not (listed & lost)
