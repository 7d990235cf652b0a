"""Day partitions run in parallel under `dagster dev`: the landing sensor requests one run per
landing day, the run queue (pipelines/dagster.yaml: two runs at once) starts them side by side
in their own processes, and the lake equals one serial ingest of the same files.

The sensor requests the runs one after the other, and on a busy machine a short run can end
before the next is queued. So the runs are first queued with the queue closed
(max_concurrent_runs 0), then `dagster dev` starts again with pipelines/dagster.yaml as it is:
the queue finds the four waiting and starts two at once. That second `dagster dev` is also the
one whose GraphQL answers are checked (the assets, their checks, the latest materialization):
`dagster dev` starts twice in the suite, not three times."""

import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.pipelines.test_dagster_dev import REPO, dagster_dev, graphql_query
from tests.transforms.test_lake import table_digests
from transforms import warehouse
from transforms.ingest import ingest

# Slow: `dagster dev` twice, and the queue's runs in processes of their own
# (`make test-fast` leaves it out). Both tests read one pair of starts (the module's fixture;
# `--dist loadfile` keeps them on one worker).
pytestmark = pytest.mark.slow

DAYS = ("2026-11-14", "2026-11-15", "2026-11-16", "2026-11-17")
FINAL = {"SUCCESS", "FAILURE", "CANCELED"}


def _runs(port: int) -> list[dict[str, Any]]:
    body = graphql_query(port, "{ runsOrError { ... on Runs { results { status startTime endTime "
                          "tags { key value } eventConnection { events { __typename "
                          "... on MessageEvent { timestamp } } } } } } }")
    runs: list[dict[str, Any]] = body["data"]["runsOrError"]["results"]
    return runs


def _launched(run: dict[str, Any]) -> float:
    """When the queue launched a run (its process starting), in seconds: a run is in progress
    from then, not only once its steps begin (startTime)."""
    starting = [float(e["timestamp"]) / 1000 for e in run["eventConnection"]["events"]
                if e["__typename"] == "RunStartingEvent"]
    return min(starting) if starting else float(run["startTime"])


def _wait_for(port: int, done: Callable[[list[dict[str, Any]]], bool],
              what: str) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 420
    while time.monotonic() < deadline:
        runs = _runs(port)
        if done(runs):
            return runs
        time.sleep(2)
    pytest.fail(f"the sensor's runs were not {what}: {_runs(port)}")


@dataclass(frozen=True)
class Queued:
    """The runs the queue ran, the home they wrote, the landing they read, and the port of
    the `dagster dev` still serving them."""

    runs: list[dict[str, Any]]
    home: Path
    landing: Path
    port: int


@pytest.fixture(scope="module")
def queued(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Queued]:
    tmp_path = tmp_path_factory.mktemp("run-queue")
    dagster_home = tmp_path / "dagster_home"
    dagster_home.mkdir()
    config = (REPO / "pipelines" / "dagster.yaml").read_text()
    assert "max_concurrent_runs: 2" in config
    (dagster_home / "dagster.yaml").write_text(
        config.replace("max_concurrent_runs: 2", "max_concurrent_runs: 0"))
    landing = tmp_path / "landing"
    for day in DAYS:
        shutil.copytree(REPO / "data_samples" / day, landing / day)
    home = tmp_path / "home"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("RUNLAKE_")},
           "DAGSTER_HOME": str(dagster_home), "RUNLAKE_HOME": str(home),
           "RUNLAKE_LANDING": str(landing)}
    with dagster_dev(env, tmp_path / "dagster-dev-1.log") as port:
        _wait_for(port, lambda runs: len(runs) == len(DAYS)
                  and all(r["status"] == "QUEUED" for r in runs), "queued")
    (dagster_home / "dagster.yaml").write_text(config)
    with dagster_dev(env, tmp_path / "dagster-dev-2.log") as port:
        runs = _wait_for(port, lambda runs: len(runs) == len(DAYS)
                         and all(r["status"] in FINAL for r in runs), "finished")
        yield Queued(runs, home, landing, port)


def test_landing_days_run_two_at_a_time(queued: Queued, tmp_path: Path) -> None:
    runs = queued.runs
    partitions = sorted(next(t["value"] for t in r["tags"] if t["key"] == "dagster/partition")
                        for r in runs)
    assert partitions == list(DAYS)
    assert all(r["status"] == "SUCCESS" for r in runs), runs
    spans = sorted((_launched(r), float(r["endTime"])) for r in runs)
    overlapping = [(a, b) for a, b in zip(spans, spans[1:], strict=False) if b[0] < a[1]]
    assert overlapping, f"no two runs were in progress at once: {spans}"
    # Never more than two at once: the queue's limit.
    for start, _ in spans:
        assert sum(s <= start < e for s, e in spans) <= 2

    serial = tmp_path / "serial"
    ingest([queued.landing], serial)
    assert table_digests(queued.home) == table_digests(serial)


def test_dagster_dev_serves_materializations(queued: Queued) -> None:
    """The partitioned assets with their checks, and the latest materialization of runs with
    its partition, row count (the warehouse's runs of that day) and pass rate."""
    port = queued.port
    nodes = graphql_query(port, "{ assetNodes { assetKey { path } isPartitioned "
                           "assetChecksOrError { ... on AssetChecks { checks { name } } } } }")
    by_key = {"/".join(n["assetKey"]["path"]): n for n in nodes["data"]["assetNodes"]}
    assert by_key["runs"]["isPartitioned"] and not by_key["warehouse_views"]["isPartitioned"]
    assert {c["name"] for c in by_key["runs"]["assetChecksOrError"]["checks"]} == {
        "contract_violation_rate_below_limit", "truncation_rate_below_limit",
        "latest_day_is_fresh"}
    latest = graphql_query(port, """{ assetOrError(assetKey: {path: ["runs"]}) { ... on Asset {
        assetMaterializations(limit: 1) { partition metadataEntries { label
          ... on IntMetadataEntry { intValue }
          ... on FloatMetadataEntry { floatValue } } } } } }""")
    mat = latest["data"]["assetOrError"]["assetMaterializations"][0]
    assert mat["partition"] in DAYS
    entries = {e["label"]: e for e in mat["metadataEntries"]}
    con = warehouse.connect(queued.home)
    try:
        row = con.execute("SELECT count(*) FROM runs WHERE day = ?::DATE",
                          [mat["partition"]]).fetchone()
    finally:
        con.close()
    assert row is not None and row[0] > 0
    assert entries["dagster/row_count"]["intValue"] == row[0]
    assert 0 < entries["pass_rate"]["floatValue"] < 1
