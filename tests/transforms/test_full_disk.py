"""An ingest that fails after committing some tables (a full disk, above all) leaves nothing
behind that a retry adds to, and says which disk is full and how much the ingest needs."""

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.transforms.test_storage_protocol import can_mount_read_only
from transforms import warehouse
from transforms.errors import DiskFull
from transforms.ingest import ingest
from transforms.lake import Lake
from transforms.warehouse import lake_version

SAMPLES = Path(__file__).resolve().parents[2] / "data_samples"


def _data_bytes(home: Path) -> int:
    """The bytes of the lake's data files (its logs left out)."""
    return sum(f.stat().st_size for f in (home / "lake").rglob("*.parquet"))


def test_a_failed_ingest_leaves_nothing_a_retry_adds_to(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The derive fails with a full disk after the written tables were committed, three times:
    each time the lake's data files are what they were, the tables' newest versions name the
    files readers see, and the retry that succeeds gives what one clean ingest gives."""
    home, clean = tmp_path / "home", tmp_path / "clean"
    first, second = SAMPLES / "2026-11-19", SAMPLES / "2026-11-20"
    ingest([first], home)
    before = _data_bytes(home)
    lake = Lake(home)
    seen = {t: sorted(lake.file_uris(t)) for t in lake.tables()}

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(lake_version, "derive", full)
    for _ in range(3):
        with pytest.raises(DiskFull, match="what this ingest wrote was removed"):
            ingest([second], home)
        assert _data_bytes(home) == before
        lake = Lake(home)
        assert {t: sorted(lake.file_uris(t)) for t in lake.tables()} == seen
    monkeypatch.undo()
    ingest([second], home)
    ingest([first, second], clean)
    got = []
    for h in (home, clean):
        con = warehouse.connect(h)
        try:
            got.append(con.execute("SELECT run_id, status, input_tokens FROM runs "
                                   "ORDER BY 1").fetchall())
        finally:
            con.close()
    assert got[0] == got[1] and got[0]


def _night(folder: Path, mb: int) -> Path:
    """About `mb` MB of a week of runs (bench/ingest.py's generator)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from bench.ingest import generate

    target = folder / "night.responses.jsonl"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(generate(mb), target)
    return target


@pytest.mark.slow
@pytest.mark.skipif(not can_mount_read_only(),
                    reason="this machine does not let a user make a mount namespace")
def test_a_full_disk_is_named_with_what_the_ingest_needs(tmp_path: Path) -> None:
    """A home on a file system of 2 MB and 40 MB of input: the ingest stops while staging
    rows, with one line naming the full disk, what it has free and about how much the ingest
    needs; no traceback; nothing left in the home. On 6 MB, it stops later (writing the lake
    or the warehouse file) and says what to run once there is room: run on a larger file
    system, that command succeeds."""
    night = _night(tmp_path / "landing", 40)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    runlake = Path(sys.executable).parent / "runlake"
    script = f"""
        mount -t tmpfs -o size=2m tmpfs "$1" || exit 9
        "{runlake}" ingest "$2" --home "$1/home" 2>&1; echo "small=$?"
        echo "kb=$(du -sk "$1/home" | cut -f1)"
        umount "$1" && mount -t tmpfs -o size=6m tmpfs "$1"
        "{runlake}" ingest "$2" --home "$1/home" > "$1/said" 2>&1; echo "later=$?"
        cat "$1/said"
        mount -o remount,size=64m "$1"
        if grep -q "runlake publish" "$1/said"; then "{runlake}" publish --home "$1/home" 2>&1
        else "{runlake}" ingest "$2" --home "$1/home" 2>&1; fi; echo "again=$?"
        "{runlake}" sql "select count(*) as n from runs" --home "$1/home" --format json
    """
    res = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", str(mnt), str(night)],
                         capture_output=True, timeout=600, text=True,
                         env={**os.environ, "RUNLAKE_WORKERS": "1"})
    said = res.stdout + res.stderr
    assert "small=1" in said and "later=1" in said and "again=0" in said, said[-3000:]
    assert "Traceback" not in said and "Exception ignored" not in said, said[-3000:]
    first = said.split("small=1")[0]
    assert f"the disk holding {mnt}" in first and "MB free of 2 MB" in first, said[-3000:]
    assert "this one, 40 MB of input, needs about 20 MB" in first, said[-3000:]
    assert int(said.split("kb=")[1].split()[0]) < 100, said[-3000:]  # nothing of it left
    later = said.split("later=1")[1].split("again=")[0]
    assert f"the disk holding {mnt}" in later and "is full" in later, said[-3000:]
    assert '[{"n":' in said.split("again=0")[1], said[-3000:]


def test_a_failure_after_the_manifest_commit_undoes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What fails after the manifest commit landed (the mark the commit leaves beside it, on a
    disk that just filled or a connection that just dropped) fails the ingest, but the lake
    version it made stays whole: its files are all there and readers see its rows."""
    from transforms.lake import core
    from transforms.lake.store import Store

    home = tmp_path / "home"
    ingest([SAMPLES / "2026-11-19"], home)
    real = Store.touch

    def touch(self: Store, *parts: str) -> None:
        if parts and parts[-1] == core.MANIFEST_MADE:
            raise OSError(errno.EIO, "the connection dropped")
        real(self, *parts)

    monkeypatch.setattr(Store, "touch", touch)
    with pytest.raises(OSError, match="the connection dropped"):
        ingest([SAMPLES / "2026-11-20"], home)
    monkeypatch.undo()
    lake = Lake(home)
    shown = lake.tables_at()
    missing = [u for t in lake.tables() for u in lake.file_uris(t, shown.get(t, -1))
               if not Path(u.removeprefix("file://")).exists()]
    assert missing == []
    con = warehouse.connect(home)
    try:
        days = {r[0].isoformat() for r in con.execute("SELECT DISTINCT day FROM runs").fetchall()}
    finally:
        con.close()
    assert "2026-11-20" in days
