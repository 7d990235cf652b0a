"""What a walk of a landing folder meets besides plain files: links to folders are followed
(a link loop ends), and what cannot be read as a file (an unreadable folder, a dangling link,
a FIFO) is never opened and is named in the summary with the reason."""

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from transforms.block_scheduler import schedule_blocks
from transforms.ingest import FileReport, ingest
from transforms.read.discover import discover

LINE = b'{"run_id": "%s", "response": {"final_response": "ok"}}\n'


def _names(report: Any) -> list[str]:
    return sorted(Path(f.source_file).name for f in report.files)


def _runlake(*args: str) -> subprocess.CompletedProcess[str]:
    """The command in a process of its own, so that a read that blocks fails the test by
    timeout instead of hanging the suite."""
    return subprocess.run([sys.executable, "-c", "from transforms.cli import main; main()",
                           *args], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])


def test_a_linked_folder_is_read_and_a_loop_ends(tmp_path: Path, home: Path,
                                                 query: Callable[..., Any]) -> None:
    landing = tmp_path / "landing"
    (landing / "2026-11-20").mkdir(parents=True)
    (landing / "2026-11-20" / "a.responses.jsonl").write_bytes(LINE % b"a")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "b.responses.jsonl").write_bytes(LINE % b"b")
    (landing / "2026-11-21").symlink_to(elsewhere, target_is_directory=True)
    (landing / "2026-11-20" / "back").symlink_to(landing, target_is_directory=True)
    (landing / "again").symlink_to(elsewhere, target_is_directory=True)  # read once
    report = ingest([landing], home)
    assert _names(report) == ["a.responses.jsonl", "b.responses.jsonl"]
    assert report.skipped_paths == [
        (str(landing / "2026-11-20" / "back"), "a link to a folder above it (a loop)")]
    # A file reached through a link is named by its real path and dated by the folder
    # it was found in.
    assert query("SELECT run_id, day::VARCHAR, source_file FROM runs ORDER BY 1") == [
        ("a", "2026-11-20", str((landing / "2026-11-20" / "a.responses.jsonl").resolve())),
        ("b", "2026-11-21", str((elsewhere / "b.responses.jsonl").resolve()))]


def test_dangling_links_fifos_and_unreadable_folders_are_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    landing = tmp_path / "landing"
    (landing / "locked").mkdir(parents=True)
    (landing / "locked" / "c.responses.jsonl").write_bytes(LINE % b"c")
    (landing / "a.responses.jsonl").write_bytes(LINE % b"a")
    (landing / "gone.responses.jsonl").symlink_to(tmp_path / "nowhere.responses.jsonl")
    os.mkfifo(landing / "pipe.responses.jsonl")
    real_scandir = os.scandir

    def guarded(path: Any) -> Any:
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", guarded)
    skipped: list[tuple[str, str]] = []
    files = discover([landing], skipped=skipped)
    assert [f.path.name for f in files] == ["a.responses.jsonl"]
    assert sorted(skipped) == [
        (str(landing / "gone.responses.jsonl"), "a link to nothing (dangling link)"),
        (str(landing / "locked"), "cannot read the folder: Permission denied"),
        (str(landing / "pipe.responses.jsonl"), "not a regular file")]


def test_a_fifo_never_blocks_the_ingest(tmp_path: Path, home: Path) -> None:
    """A FIFO, met in a walk or named as a path, is skipped with the reason; the other files
    are read and the command exits 0."""
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "a.responses.jsonl").write_bytes(LINE % b"a")
    os.mkfifo(landing / "pipe.responses.jsonl")
    os.mkfifo(tmp_path / "named.responses.jsonl")
    res = _runlake("ingest", str(landing), str(tmp_path / "named.responses.jsonl"),
                   "--home", str(home))
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"skipped {landing / 'pipe.responses.jsonl'}: not a regular file" in res.stdout
    assert f"skipped {tmp_path / 'named.responses.jsonl'}: not a regular file" in res.stdout
    assert "1 file (0 unchanged): 1 line, 1 accepted" in res.stdout
    res = _runlake("validate", str(landing))
    assert f"skipped {landing / 'pipe.responses.jsonl'}: not a regular file" in res.stdout
    assert res.returncode == 0, res.stdout + res.stderr


def test_a_fifo_put_in_a_files_place_is_refused(tmp_path: Path) -> None:
    """A file replaced by a FIFO between discovery and reading is listed with the reason,
    not waited on."""
    path = tmp_path / "a.responses.jsonl"
    path.write_bytes(LINE % b"a")
    (found,) = discover([path])
    path.unlink()
    os.mkfifo(path)
    fr = FileReport(found.source_file, found.kind, found.size)
    (parts := tmp_path / "parts").mkdir()

    def blocked(signum: int, frame: Any) -> None:
        raise TimeoutError("the read waited on a FIFO")

    previous = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(30)
    try:
        list(schedule_blocks([(found, fr)], parts, 1 << 20, 1, None, datetime.now(UTC)))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert fr.error == "cannot read the file: not a regular file"


def test_a_folder_linked_from_its_own_landing_keeps_its_dates(tmp_path: Path) -> None:
    """A link to a folder that the walk reaches by its own path does not rename its files:
    they keep the date folder they are stored under."""
    landing = tmp_path / "landing"
    (landing / "2026-11-20").mkdir(parents=True)
    (landing / "2026-11-20" / "a.responses.jsonl").write_bytes(LINE % b"a")
    (landing / "0-latest").symlink_to(landing / "2026-11-20", target_is_directory=True)
    skipped: list[tuple[str, str]] = []
    (found,) = discover([landing], skipped=skipped)
    assert (found.path, skipped) == (landing / "2026-11-20" / "a.responses.jsonl", [])


def test_a_home_and_delta_tables_inside_the_landing_folder_are_not_input(
        tmp_path: Path) -> None:
    """`cd landing && runlake ingest .` with the default ./warehouse home: the second ingest
    reads the same files as the first, never the home's Delta logs or its other files; a Delta
    table or another home found in the landing folder is passed over too, with the reason."""
    import shutil

    from transforms import warehouse
    from transforms.read.landing import files_by_day

    samples = Path(__file__).resolve().parents[2] / "data_samples" / "2026-11-20"
    landing = tmp_path / "landing"
    shutil.copytree(samples, landing / "2026-11-20")
    home = landing / "warehouse"
    first = ingest([landing], home, workers=1)
    names = _names(first)
    assert names and all(not n.endswith(".json") or n.endswith(".durable.json")
                         for n in names)
    # A Delta table exported into the landing folder, and a copy of another home in it.
    table = landing / "export" / "runs_table"
    shutil.copytree(home / "lake" / "spans", table)
    shutil.copytree(home, landing / "old-home")
    shutil.rmtree(landing / "old-home" / "lake" / "ingest_files")  # a home, whatever it holds
    (landing / "old-home" / "warehouse.duckdb").unlink()
    second = ingest([landing], home, workers=1)
    assert _names(second) == names
    assert all(f.skipped for f in second.files)
    reasons = dict(second.skipped_paths)
    assert {Path(p).name for p in reasons} == {"warehouse", "runs_table", "old-home"}, reasons
    assert all("not input" in r for r in reasons.values())
    con = warehouse.connect(home)
    try:
        assert con.execute("SELECT count(*) FROM ingest_files WHERE source_file LIKE ?",
                           [f"%{home.name}%"]).fetchone() == (0,)
    finally:
        con.close()
    by_day = files_by_day(landing)
    assert sorted(Path(f.source_file).name for fs in by_day.values() for f in fs) == names
