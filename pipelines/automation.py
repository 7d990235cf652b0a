"""What makes runlake run by itself: the day job, the landing sensor and the nightly schedule."""

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import dagster as dg

from pipelines.assets.lake import (
    PARTITIONS,
    WRITER_TAG,
    add_landing_days,
    lake_tables,
    warehouse_views,
)
from pipelines.assets.report import nightly_report
from pipelines.resources import RunlakeResource
from transforms.lake import MANIFEST, Lake
from transforms.read.landing import day_digest, files_by_day, stat_of
from transforms.read.streams import file_sha256

ingest_day = dg.define_asset_job(
    "ingest_day",
    selection=dg.AssetSelection.assets(lake_tables, warehouse_views, nightly_report),
    description="One landing day: ingest its files into the lake, check them, then publish "
                "the warehouse (skipped when lines_accounted_for fails) and the day's report. "
                "The run fails when a blocking check (lines_accounted_for, no_regression) "
                "fails at ERROR.",
    tags={WRITER_TAG: "lake"},
)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass
class LandingScan:
    """One look at the landing folder and the lake."""

    days: list[str]
    """Every landing day with files, as partition keys."""
    cursor: str
    """The sensor's cursor after this look: `{"state": sha256}` of the landing files' paths,
    sizes and modification times and the lake manifest's version; its length is the same for
    any number of files (hashes are never kept: the lake manifest has them)."""
    changed: bool
    """False when the files and the lake are as the previous cursor says: nothing evaluated."""
    requests: list[dg.RunRequest] = field(default_factory=list)


def _known(manifest: Any) -> dict[str, tuple[str, int, int]]:
    """source_file -> (sha256, bytes, ingested_at in ns since the epoch) of each file in the
    lake manifest (a DeltaTable, or None before the first ingest)."""
    if manifest is None:
        return {}
    rows = manifest.to_pyarrow_table(columns=["source_file", "sha256", "bytes", "ingested_at"])
    known = {}
    for r in rows.to_pylist():
        at = r["ingested_at"]
        at_ns = -1 if at is None else (at - _EPOCH) // timedelta(microseconds=1) * 1000
        known[r["source_file"]] = (r["sha256"], r["bytes"], at_ns)
    return known


def _state(stats: list[tuple[str, int, int]], lake_version: int) -> str:
    """sha256 over the lake manifest's version and the sorted (path, size, mtime) lines."""
    h = hashlib.sha256(f"lake manifest {lake_version}\n".encode())
    for name, size, mtime_ns in sorted(stats):
        h.update(f"{name}\0{size}\0{mtime_ns}\n".encode())
    return h.hexdigest()


def _cursor_state(cursor: str | None) -> str | None:
    try:
        state = json.loads(cursor or "")["state"]
    except (ValueError, TypeError, KeyError):
        return None  # none, or an older cursor: look at everything once
    return state if isinstance(state, str) else None


def scan_landing(runlake: RunlakeResource, cursor: str | None,
                 log: Any = None) -> LandingScan:
    """Compare the landing folder with the lake: a run request for each landing day whose
    files are not all in the lake with the same contents, keyed by the day and its files'
    digests. A file is hashed only when the lake manifest does not vouch for it (same size,
    last modified before it was ingested); nothing is hashed or requested when neither the
    files' sizes and times nor the lake changed since `cursor`."""
    s = runlake.settings()
    by_day = files_by_day(s.landing)
    manifest = Lake(s.home).open(MANIFEST)
    stats: dict[str, tuple[int, int]] = {}
    for day, files in list(by_day.items()):
        for f in list(files):
            # A bucket's listing said it already: no request per file.
            try:
                stats[f.source_file] = (f.size, f.mtime_ns) if f.mtime_ns is not None \
                    else stat_of(f.path)
            except FileNotFoundError:  # gone since the listing: the next look sees the rest
                files.remove(f)
        if not files:
            del by_day[day]
    state = _state([(k, *v) for k, v in stats.items()],
                   -1 if manifest is None else manifest.version())
    days = [d.isoformat() for d in sorted(by_day)]
    new_cursor = json.dumps({"state": state})
    if _cursor_state(cursor) == state:
        return LandingScan(days, new_cursor, changed=False)
    known = _known(manifest)
    requests = []
    for day, files in sorted(by_day.items()):
        shas = []
        for f in files:
            size, mtime_ns = stats[f.source_file]
            sha, n_bytes, ingested_ns = known.get(f.source_file, ("", -1, -1))
            vouched = n_bytes == size and mtime_ns <= ingested_ns
            if not vouched:
                try:
                    sha = file_sha256(f.path)
                except FileNotFoundError:  # removed between the listing and its hashing
                    continue
            shas.append((f.source_file, sha))
        if all(known.get(name, ("",))[0] == sha for name, sha in shas):
            continue
        digest = day_digest(shas)
        requests.append(dg.RunRequest(run_key=f"{day.isoformat()}:{digest}",
                                      partition_key=day.isoformat(),
                                      tags={"runlake/files": str(len(files))}))
    if log is not None and requests:
        log.info(f"{len(requests)} of {len(days)} landing days have new or changed files: "
                 + ", ".join(r.partition_key or "" for r in requests))
    return LandingScan(days, new_cursor, changed=True, requests=requests)


def landing_requests(runlake: RunlakeResource, cursor: str | None,
                     log: Any = None) -> tuple[list[dg.RunRequest], str]:
    """The run requests of `scan_landing` and the new cursor."""
    scan = scan_landing(runlake, cursor, log)
    return scan.requests, scan.cursor


def _unregistered(context: dg.SensorEvaluationContext, days: list[str]) -> list[str]:
    try:
        instance = context.instance
    except dg.DagsterInvariantViolationError:  # evaluated without an instance (tests)
        return days
    have = set(instance.get_dynamic_partitions(PARTITIONS.name or ""))
    return [d for d in days if d not in have]


@dg.sensor(job=ingest_day, minimum_interval_seconds=30,
           default_status=dg.DefaultSensorStatus.RUNNING)
def landing_sensor(context: dg.SensorEvaluationContext,
                   runlake: RunlakeResource) -> dg.SensorResult:
    """Watches RUNLAKE_LANDING (YYYY-MM-DD/ folders and loose files): adds each landing day as
    a partition and materializes each day whose files are new or changed; an identical file
    dropped again starts nothing."""
    scan = scan_landing(runlake, context.cursor, context.log)
    # Days are added whenever they are missing (also after a partition was deleted by hand).
    new_days = _unregistered(context, scan.days)
    adds = [PARTITIONS.build_add_request(new_days)] if new_days else None
    if not scan.changed and not adds:
        return dg.SensorResult(cursor=scan.cursor,
                               skip_reason="no landing file and no lake change since the last "
                                           "look")
    return dg.SensorResult(run_requests=scan.requests, cursor=scan.cursor,
                           dynamic_partitions_requests=adds)


@dg.schedule(job=ingest_day, cron_schedule="0 2 * * *", execution_timezone="UTC",
             default_status=dg.DefaultScheduleStatus.RUNNING)
def nightly(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    """02:00 UTC: materialize yesterday (added as a partition when no file landed for it, so a
    night without runs is reported), then rebuild the warehouse and the report."""
    when = context.scheduled_execution_time
    yesterday = (when.date() if when else datetime.now(UTC).date()) - timedelta(days=1)
    add_landing_days(context.instance, [yesterday])
    return dg.RunRequest(run_key=f"nightly:{yesterday.isoformat()}",
                         partition_key=yesterday.isoformat())

