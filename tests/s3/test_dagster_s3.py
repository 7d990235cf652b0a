"""Two day partitions of ingest_day materialized at the same time, in two processes, into one
s3:// home (as tests/pipelines/test_parallel_partitions.py locally): the lake equals one
ingest of both days."""

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.pipelines.test_definitions import make_landing
from tests.pipelines.test_parallel_partitions import CHILD, DAYS
from tests.transforms.test_lake import table_digests
from transforms import warehouse
from transforms.ingest import ingest


def test_two_partitions_at_once_into_a_bucket(s3_home: str, tmp_path: Path) -> None:
    landing = make_landing(tmp_path, *DAYS)
    serial = tmp_path / "serial"
    env = {**os.environ, "PYTHONPATH": str(REPO), "DAGSTER_HOME": str(tmp_path / "dagster")}
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, day, s3_home, str(landing)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
             for day in DAYS]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err.decode()[-3000:]
    ingest([landing / d for d in DAYS], serial, workers=1)
    warehouse.publish(s3_home)
    assert table_digests(s3_home) == table_digests(serial)
