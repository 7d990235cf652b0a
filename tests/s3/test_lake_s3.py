"""The lake on an S3 API (moto's server): the same rows as on a local folder, concurrent
ingests and a kill mid-commit lose nothing, and `runlake sql`, `report`, `doctor` and
`history` work on it."""

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.transforms.test_lake import table_digests
from transforms import warehouse
from transforms.ingest import ingest
from transforms.lake import Lake

SAMPLES = REPO / "data_samples"
DAYS = sorted(p for p in SAMPLES.iterdir() if p.is_dir())


def test_samples_on_s3_equal_a_local_home(s3_home: str, tmp_path: Path) -> None:
    """data_samples/ into a bucket: the same rows as into a local folder; the warehouse file
    is local, under the cache folder; a second ingest changes nothing."""
    local = tmp_path / "local"
    ingest([SAMPLES], local, workers=1)
    report = ingest([SAMPLES], s3_home, workers=1)
    assert report.lines_read > 0
    assert table_digests(s3_home) == table_digests(local)
    wh = warehouse.path(s3_home)
    assert wh.is_relative_to(tmp_path / "cache" / "runlake") and wh.exists()
    uris = Lake(s3_home).file_uris("runs")
    assert uris and all(u.startswith(s3_home + "/lake/runs/month=") for u in uris)
    again = ingest([SAMPLES], s3_home, workers=1)
    assert all(f.skipped for f in again.files)
    assert Lake(s3_home).file_uris("runs") == uris
