"""The Dagster definitions: they load with no environment, the graph, partitions, checks and
automation are pinned, one sample day materializes in-process with its checks, the blocking
check keeps a broken lake from being published, the sensor's run keys are stable, its cursor
stays small, and the landing days become the partitions."""

import os
import shutil
from datetime import UTC, date, datetime
from pathlib import Path

import dagster as dg
import pytest
import yaml
from deltalake import DeltaTable

import pipelines.automation as automation
from pipelines.assets.lake import add_landing_days
from pipelines.automation import landing_requests, landing_sensor, nightly
from pipelines.definitions import defs
from pipelines.resources import RunlakeResource
from tests.pipelines.jobs import run_day
from transforms import warehouse
from transforms.contracts.schemas import TABLES

REPO = Path(__file__).resolve().parents[2]
SAMPLE_DAY = "2026-11-20"


def test_definitions_load_and_are_pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    """Asset keys, dependencies, partitions, checks, jobs, sensor and schedule are exactly these,
    with no RUNLAKE_ variable set."""
    for var in [v for v in os.environ if v.startswith("RUNLAKE_")]:
        monkeypatch.delenv(var)
    graph = defs.resolve_asset_graph()
    keys = sorted(k.to_user_string() for k in graph.get_all_asset_keys())
    assert keys == sorted([*TABLES, "warehouse_views", "nightly_report"])
    deps = graph.get(dg.AssetKey("warehouse_views")).parent_keys
    assert sorted(k.to_user_string() for k in deps) == sorted(TABLES)
    # The partitions are the landing days found (added by the sensor and `make run`), not a
    # calendar from a fixed start date.
    partitions = graph.get(dg.AssetKey("runs")).partitions_def
    assert isinstance(partitions, dg.DynamicPartitionsDefinition)
    assert partitions.name == "landing_days"
    assert all(graph.get(dg.AssetKey(t)).partitions_def == partitions for t in TABLES)
    assert graph.get(dg.AssetKey("warehouse_views")).partitions_def is None
    # The report and every check follow the day partitions, so the UI plots their figures
    # against the landing day rather than the time each ran.
    assert graph.get(dg.AssetKey("nightly_report")).partitions_def == partitions
    assert [k.to_user_string() for k in graph.asset_check_keys
            if graph.get_check_spec(k).partitions_def != partitions] == []
    assert sorted(k.to_user_string() for k in graph.asset_check_keys) == [
        "ingest_files:lines_accounted_for",
        "nightly_report:no_regression",
        "quarantine:quarantine_share_below_limit",
        "runs:contract_violation_rate_below_limit",
        "runs:latest_day_is_fresh",
        "runs:truncation_rate_below_limit",
    ]
    job = defs.resolve_job_def("ingest_day")
    assert job.tags["runlake/writer"] == "lake"
    # The instance lets day partitions run in parallel, with no one-writer limit.
    instance = yaml.safe_load((REPO / "pipelines" / "dagster.yaml").read_text())
    assert instance["concurrency"]["runs"] == {"max_concurrent_runs": 2}
    schedule = defs.resolve_schedule_def("nightly")
    assert (schedule.cron_schedule, schedule.execution_timezone, schedule.job_name) == (
        "0 2 * * *", "UTC", "ingest_day")
    assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    sensor = defs.resolve_sensor_def("landing_sensor")
    assert sensor.job_name == "ingest_day"
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING


def make_landing(tmp_path: Path, *days: str) -> Path:
    landing = tmp_path / "landing"
    for day in days:
        shutil.copytree(REPO / "data_samples" / day, landing / day)
    return landing


def test_one_sample_day_in_process(tmp_path: Path) -> None:
    """Partition 2026-11-20 ingests that folder only; checks report what they measured; the
    runs asset carries plotted figures; the warehouse is published."""
    landing = make_landing(tmp_path, SAMPLE_DAY, "2026-11-19")
    home = tmp_path / "home"
    result = run_day(home, landing, SAMPLE_DAY)
    assert result.success
    checks = {e.check_name: e for e in result.get_asset_check_evaluations()}
    # Each check's result belongs to the day's partition (its point on the UI's plots).
    assert {e.partition for e in checks.values()} == {SAMPLE_DAY}
    assert set(checks) == {"lines_accounted_for", "quarantine_share_below_limit",
                           "contract_violation_rate_below_limit",
                           "truncation_rate_below_limit", "latest_day_is_fresh",
                           "no_regression"}
    assert checks["lines_accounted_for"].passed
    q = checks["quarantine_share_below_limit"].metadata
    # Lines of the day's files (a whole durable document is one line); 4 are the planted bad.
    day_lines = sum(1 if p.name.endswith(".durable.json") else len(p.read_bytes().splitlines())
                    for p in (landing / SAMPLE_DAY).iterdir())
    assert (q["lines"].value, q["lines_quarantined"].value, q["limit"].value) == (
        day_lines, 4, "0.05")
    # Constants are text (the UI plots numbers only); rates and figures are rounded.
    assert all(isinstance(c.metadata[k], dg.TextMetadataValue) for c in checks.values()
               for k in ("limit", "limit_hours", "warning_level", "significance_level")
               if k in c.metadata)
    assert all(len(repr(v.value).split(".")[-1]) <= 4 for c in checks.values()
               for v in c.metadata.values() if isinstance(v, dg.FloatMetadataValue))
    t = checks["truncation_rate_below_limit"].metadata
    assert (t["runs"].value, t["runs_truncated"].value) == (71, 4)
    assert checks["latest_day_is_fresh"].metadata["latest_day"].value == SAMPLE_DAY
    meta = {m.materialization.asset_key.to_user_string(): m.materialization.metadata
            for m in result.get_asset_materialization_events()}
    assert {m.materialization.partition for m in result.get_asset_materialization_events()
            if m.materialization.asset_key.to_user_string() != "warehouse_views"} == {
        SAMPLE_DAY}
    runs = meta["runs"]
    assert runs["dagster/row_count"].value == 71
    assert 0 < runs["pass_rate"].value < 1
    assert runs["tokens_per_run"].value > 0 and runs["runtime_p95_ms"].value > 0
    assert isinstance(runs["tokens_per_run"], dg.IntMetadataValue)
    assert round(runs["pass_rate"].value, 4) == runs["pass_rate"].value
    assert "| run_id |" in runs["worst_runs"].value
    assert isinstance(runs["dagster/column_schema"].value, dg.TableSchema)
    assert meta["quarantine"]["dagster/row_count"].value == 4
    assert meta["warehouse_views"]["runs"].value == 71
    report = meta["nightly_report"]
    assert report["latest_day"].value == SAMPLE_DAY
    assert Path(report["path"].value).is_file()
    # Without a baseline nothing can regress, but the night's crash (triage-agent's, a run made
    # from its trace) fails the check.
    assert "71 runs" in report["summary"].value, report["summary"].value
    assert not checks["no_regression"].passed
    assert "1 crashed run" in str(checks["no_regression"].description)
    con = warehouse.connect(home)
    try:
        # Only that day's folder was read.
        assert con.execute("SELECT DISTINCT day FROM ingest_files").fetchall() == [
            (date(2026, 11, 20),)]
    finally:
        con.close()


def test_blocking_check_keeps_a_broken_lake_unpublished(tmp_path: Path) -> None:
    """When the lake no longer holds the quarantine rows its files account for,
    lines_accounted_for fails at ERROR and warehouse_views does not run."""
    landing = make_landing(tmp_path, SAMPLE_DAY)
    home = tmp_path / "home"
    assert run_day(home, landing, SAMPLE_DAY).success
    before = warehouse.path(home).stat().st_mtime_ns
    # The lake loses the day's quarantine rows (a delete no ingest made).
    DeltaTable(str(home / "lake" / "quarantine")).delete(f"day = '{SAMPLE_DAY}'")
    result = run_day(home, landing, SAMPLE_DAY)
    check = next(e for e in result.get_asset_check_evaluations()
                 if e.check_name == "lines_accounted_for")
    assert not check.passed and check.severity == dg.AssetCheckSeverity.ERROR
    assert check.metadata["files_failing"].value >= 1
    materialized = {m.materialization.asset_key.to_user_string()
                    for m in result.get_asset_materialization_events()}
    assert "runs" in materialized
    assert not materialized & {"warehouse_views", "nightly_report"}
    assert warehouse.path(home).stat().st_mtime_ns == before


def test_sensor_run_keys_are_stable_across_redrops(tmp_path: Path) -> None:
    """A day's run key depends on its files' contents only: the same bytes dropped again give
    the same key; once ingested the day requests nothing; a changed file gives a new key."""
    landing = make_landing(tmp_path, SAMPLE_DAY)
    home = tmp_path / "home"
    res = RunlakeResource(home=str(home), landing=str(landing))
    first, cursor = landing_requests(res, None)
    assert [(r.partition_key, r.run_key.split(":")[0]) for r in first] == [
        (SAMPLE_DAY, SAMPLE_DAY)]
    f = landing / SAMPLE_DAY / "support-bot.responses.jsonl"
    f.write_bytes(f.read_bytes())  # re-dropped: new mtime, same contents
    again, cursor = landing_requests(res, cursor)
    assert [r.run_key for r in again] == [r.run_key for r in first]
    loose = landing / f"extra-{SAMPLE_DAY}.responses.jsonl"
    loose.write_text('{"run_id": "x1", "response": {"final_response": "ok"}}\n')
    grown, cursor = landing_requests(res, cursor)
    assert [r.partition_key for r in grown] == [SAMPLE_DAY]
    assert grown[0].run_key != first[0].run_key
    assert run_day(home, landing, SAMPLE_DAY).success
    # The real sensor, evaluated as the daemon does: everything is in the lake now.
    with dg.build_sensor_context(cursor=cursor, resources={"runlake": res}) as ctx:
        result = landing_sensor(ctx)
    assert isinstance(result, dg.SensorResult) and not result.run_requests
    f.write_bytes(f.read_bytes() + b'{"run_id": "late", "response": {"final_response": "x"}}\n')
    changed, _ = landing_requests(res, cursor)
    assert [r.partition_key for r in changed] == [SAMPLE_DAY]
    assert changed[0].run_key not in {first[0].run_key, grown[0].run_key}


def test_sensor_cursor_does_not_grow_with_the_files(tmp_path: Path) -> None:
    """The cursor is a digest of the landing files' paths, sizes and times and of the lake:
    as long for 2 files as for 200, and a new file, a touched file or an ingest changes it."""
    landing = tmp_path / "landing"
    res = RunlakeResource(home=str(tmp_path / "home"), landing=str(landing))
    lengths = {}
    for n in (2, 200):
        folder = landing / "2026-11-20"
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(n):
            (folder / f"f{i:03d}.responses.jsonl").write_text(
                f'{{"run_id": "r{i}", "response": {{"final_response": "ok"}}}}\n')
        requests, cursor = landing_requests(res, None)
        assert [r.partition_key for r in requests] == ["2026-11-20"]
        lengths[n] = len(cursor)
    assert lengths[2] == lengths[200] < 100
    again = landing_requests(res, cursor)[1]
    assert again == cursor
    os.utime(landing / "2026-11-20" / "f000.responses.jsonl", ns=(1, 1))
    assert landing_requests(res, cursor)[1] != cursor


def test_sensor_hashes_only_what_the_lake_does_not_vouch_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing is hashed while nothing changed; files the lake manifest holds with the same
    size and an older modification time are not hashed again; a grown file is."""
    hashed: list[str] = []
    real = automation.file_sha256

    def counting(path: Path) -> str:
        hashed.append(path.name)
        return real(path)

    monkeypatch.setattr(automation, "file_sha256", counting)
    landing = make_landing(tmp_path, SAMPLE_DAY)
    home = tmp_path / "home"
    res = RunlakeResource(home=str(home), landing=str(landing))
    n_files = len(list((landing / SAMPLE_DAY).iterdir()))
    first = automation.scan_landing(res, None)
    assert first.changed and len(hashed) == n_files and first.days == [SAMPLE_DAY]
    hashed.clear()
    same = automation.scan_landing(res, first.cursor)
    assert not same.changed and not same.requests and hashed == []
    assert run_day(home, landing, SAMPLE_DAY).success
    after = automation.scan_landing(res, first.cursor)  # the lake changed: looked at again
    assert after.changed and not after.requests and hashed == []
    f = landing / SAMPLE_DAY / "support-bot.responses.jsonl"
    f.write_bytes(f.read_bytes() + b'{"run_id": "late", "response": {"final_response": "x"}}\n')
    grown = automation.scan_landing(res, after.cursor)
    assert hashed == [f.name] and [r.partition_key for r in grown.requests] == [SAMPLE_DAY]


def test_sensor_adds_each_landing_day_as_a_partition(tmp_path: Path) -> None:
    """The partitions are the landing days: the sensor asks for the ones the instance lacks,
    whether or not their files still need ingesting, and for nothing once they are there."""
    landing = make_landing(tmp_path, "2026-11-19", SAMPLE_DAY)
    res = RunlakeResource(home=str(tmp_path / "home"), landing=str(landing))
    with dg.instance_for_test() as instance:
        add_landing_days(instance, ["2026-11-19"])
        with dg.build_sensor_context(instance=instance, resources={"runlake": res}) as ctx:
            result = landing_sensor(ctx)
        assert isinstance(result, dg.SensorResult)
        assert [(r.partitions_def_name, list(r.partition_keys))
                for r in result.dynamic_partitions_requests or []] == [
            ("landing_days", [SAMPLE_DAY])]
        assert sorted(r.partition_key for r in result.run_requests or []) == [
            "2026-11-19", SAMPLE_DAY]
        assert add_landing_days(instance, [SAMPLE_DAY]) == [SAMPLE_DAY]
        with dg.build_sensor_context(instance=instance, cursor=result.cursor,
                                     resources={"runlake": res}) as ctx:
            quiet = landing_sensor(ctx)
        assert isinstance(quiet, dg.SensorResult)
        assert not quiet.run_requests and not quiet.dynamic_partitions_requests
        assert quiet.skip_reason is not None
        assert instance.get_dynamic_partitions("landing_days") == ["2026-11-19", SAMPLE_DAY]


def test_nightly_schedule_adds_yesterday_as_a_partition() -> None:
    """At 02:00 UTC the schedule asks for yesterday, adding it when no file landed for it, so
    that a night without runs is still materialized and reported."""
    with dg.instance_for_test() as instance:
        ctx = dg.build_schedule_context(
            instance=instance, scheduled_execution_time=datetime(2026, 11, 21, 2, tzinfo=UTC))
        request = nightly(ctx)
        assert isinstance(request, dg.RunRequest)
        assert (request.partition_key, request.run_key) == (SAMPLE_DAY, f"nightly:{SAMPLE_DAY}")
        assert instance.get_dynamic_partitions("landing_days") == [SAMPLE_DAY]


def test_sensor_passes_over_a_file_removed_while_it_looks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file that disappears between the listing and its stat or hashing is left to the next
    look, not a FileNotFoundError: the other files of its day are still requested."""
    landing = make_landing(tmp_path, SAMPLE_DAY)
    names = sorted(p.name for p in (landing / SAMPLE_DAY).iterdir())
    gone_at_stat, gone_at_hash = names[0], names[1]
    real_stat, real_sha = automation.stat_of, automation.file_sha256

    def stat_of(path: Path) -> tuple[int, int]:
        if path.name == gone_at_stat:
            path.unlink()
        return real_stat(path)

    def file_sha256(path: Path) -> str:
        if path.name == gone_at_hash:
            path.unlink()
        return real_sha(path)

    monkeypatch.setattr(automation, "stat_of", stat_of)
    monkeypatch.setattr(automation, "file_sha256", file_sha256)
    res = RunlakeResource(home=str(tmp_path / "home"), landing=str(landing))
    scan = automation.scan_landing(res, None)
    assert [r.partition_key for r in scan.requests] == [SAMPLE_DAY]
    assert scan.requests[0].tags["runlake/files"] == str(len(names) - 1)


def test_an_older_landing_day_is_not_judged_stale_on_an_empty_lake(tmp_path: Path) -> None:
    """`make run` ingests the landing days oldest first: the first, 2026-11-19, is the lake's
    newest day when its checks run, yet the landing folder holds 2026-11-20, so its freshness
    check passes naming that day, as it does when the lake already holds every day (the
    second `make run`): identical runs warn alike."""
    landing = make_landing(tmp_path, "2026-11-19", SAMPLE_DAY)
    result = run_day(tmp_path / "home", landing, "2026-11-19")
    assert result.success
    [fresh] = [e for e in result.get_asset_check_evaluations()
               if e.check_name == "latest_day_is_fresh"]
    assert fresh.passed, fresh.description
    assert fresh.description == (f"2026-11-19 is not the newest day in the landing folder "
                                 f"({SAMPLE_DAY}): freshness is checked on the newest day")
