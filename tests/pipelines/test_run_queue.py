"""Day partitions run in parallel under `dagster dev`: the landing sensor requests one run per
landing day, the run queue (pipelines/dagster.yaml: two runs at once) starts them side by side
in their own processes, and the lake equals one serial ingest of the same files."""

import os
import shutil
import time
from pathlib import Path

import pytest

from tests.pipelines.test_dagster_dev import REPO, _graphql, dagster_dev
from tests.transforms.test_lake import table_digests
from transforms.ingest import ingest

DAYS = ("2026-11-14", "2026-11-15", "2026-11-16", "2026-11-17")
FINAL = {"SUCCESS", "FAILURE", "CANCELED"}


def _runs(port: int) -> list[dict[str, object]]:
    body = _graphql(port, "{ runsOrError { ... on Runs { results { status startTime endTime "
                          "tags { key value } } } } }")
    runs: list[dict[str, object]] = body["data"]["runsOrError"]["results"]
    return runs


def test_landing_days_run_two_at_a_time(tmp_path: Path) -> None:
    dagster_home = tmp_path / "dagster_home"
    dagster_home.mkdir()
    shutil.copy(REPO / "pipelines" / "dagster.yaml", dagster_home / "dagster.yaml")
    landing = tmp_path / "landing"
    for day in DAYS:
        shutil.copytree(REPO / "data_samples" / day, landing / day)
    home = tmp_path / "home"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("RUNLAKE_")},
           "DAGSTER_HOME": str(dagster_home), "RUNLAKE_HOME": str(home),
           "RUNLAKE_LANDING": str(landing)}
    with dagster_dev(env, tmp_path / "dagster-dev.log") as port:
        deadline = time.monotonic() + 420
        while time.monotonic() < deadline:
            runs = _runs(port)
            if len(runs) == len(DAYS) and all(r["status"] in FINAL for r in runs):
                break
            time.sleep(2)
        else:
            pytest.fail(f"the sensor's runs did not finish: {_runs(port)}")
    partitions = sorted(next(t["value"] for t in r["tags"] if t["key"] == "dagster/partition")
                        for r in runs)
    assert partitions == list(DAYS)
    assert all(r["status"] == "SUCCESS" for r in runs), runs
    spans = sorted((float(r["startTime"]), float(r["endTime"])) for r in runs)
    overlapping = [(a, b) for a, b in zip(spans, spans[1:], strict=False) if b[0] < a[1]]
    assert overlapping, f"no two runs were in progress at once: {spans}"
    # Never more than two at once: the queue's limit.
    for start, _ in spans:
        assert sum(s <= start < e for s, e in spans) <= 2

    serial = tmp_path / "serial"
    ingest([landing], serial)
    assert table_digests(home) == table_digests(serial)
