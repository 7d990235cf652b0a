"""The lake on an S3 API (moto's server): the same rows as on a local folder, concurrent
ingests and a kill mid-commit lose nothing, and `runlake sql`, `report`, `doctor` and
`history` work on it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.transforms.test_lake import table_digests
from transforms import warehouse
from transforms.ingest import ingest
from transforms.lake import Lake

SAMPLES = REPO / "data_samples"
DAYS = sorted(p for p in SAMPLES.iterdir() if p.is_dir())


def test_samples_on_s3_equal_a_local_home(s3_home: str, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """data_samples/ into a bucket: the same rows as into a local folder; the warehouse file
    is local, under the cache folder; a second ingest changes nothing; another machine (its
    own cache folder) reads the bucket's tables without writing, and builds its own warehouse
    file when a writer publishes there."""
    local = tmp_path / "local"
    ingest([SAMPLES], local, workers=1)
    report = ingest([SAMPLES], s3_home, workers=1)
    assert report.lines_read > 0
    assert table_digests(s3_home) == table_digests(local)
    wh = warehouse.path(s3_home)
    assert wh.is_relative_to(tmp_path / "cache" / "runlake") and wh.exists()
    uris = Lake(s3_home).file_uris("_lines/runs")
    assert uris and all(u.startswith(s3_home + "/lake/_lines/runs/month=") for u in uris)
    again = ingest([SAMPLES], s3_home, workers=1)
    assert all(f.skipped for f in again.files)
    assert Lake(s3_home).file_uris("_lines/runs") == uris
    digests = table_digests(s3_home)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "elsewhere"))
    assert not warehouse.path(s3_home).exists()
    assert table_digests(s3_home) == digests  # read from the bucket, nothing written here
    assert not warehouse.path(s3_home).exists()
    warehouse.publish(s3_home)  # a writer builds this machine's file
    assert warehouse.path(s3_home).exists() and table_digests(s3_home) == digests


CHILD = """
import sys
from pathlib import Path
from transforms.ingest import ingest
ingest([Path(p) for p in sys.argv[2:]], sys.argv[1], workers=1)
"""


def test_two_ingests_at_once_lose_nothing(s3_home: str, tmp_path: Path) -> None:
    """Two processes ingest disjoint halves of data_samples/ into one bucket at the same time
    (they parse at once and take turns to commit, by a lock object created with a
    conditional put): the lake equals one ingest of everything."""
    halves = [DAYS[: len(DAYS) // 2], DAYS[len(DAYS) // 2:]]
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, s3_home, *map(str, half)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
             for half in halves]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()[-3000:]
    local = tmp_path / "local"
    ingest(DAYS, local, workers=1)
    warehouse.publish(s3_home)  # the views of the newest version (both ingests)
    assert table_digests(s3_home) == table_digests(local)
    con = warehouse.connect(s3_home)
    try:
        assert con.execute("SELECT count(*) FROM checks.lines_accounted_for").fetchone() == (0,)
    finally:
        con.close()
