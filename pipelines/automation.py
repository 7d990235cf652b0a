"""What makes runlake run by itself: the day job, the landing sensor and the nightly schedule."""

import json
from datetime import date, timedelta
from typing import Any

import dagster as dg

from pipelines.assets.lake import PARTITIONS, WRITER_TAG, lake_tables, warehouse_views
from pipelines.assets.report import nightly_report
from pipelines.resources import RunlakeResource
from transforms.lake import Lake
from transforms.landing import Stamp, day_digest, files_by_day, stamp

ingest_day = dg.define_asset_job(
    "ingest_day",
    selection=dg.AssetSelection.assets(lake_tables, warehouse_views, nightly_report),
    description="One UTC day: ingest its landing files into the lake, check them, then "
                "publish the warehouse and the day's report (skipped when the blocking check "
                "fails).",
    tags={WRITER_TAG: "lake"},
)


def _load_cursor(cursor: str | None) -> dict[str, Stamp]:
    if not cursor:
        return {}
    try:
        return {k: Stamp(*v) for k, v in json.loads(cursor).items()}
    except (ValueError, TypeError):
        return {}  # an unreadable cursor only costs hashing the files again


def landing_requests(runlake: RunlakeResource, cursor: str | None,
                     log: Any = None) -> tuple[list[dg.RunRequest], str]:
    """A run request for each landing day whose files are not all in the lake with the same
    contents, keyed by the day and its files' digests; and the new cursor (file stamps)."""
    s = runlake.settings()
    cache = _load_cursor(cursor)
    by_day = files_by_day(s.landing)
    known = Lake(s.home).known_files() if (s.home / "lake" / "ingest_files").exists() else {}
    first, last = PARTITIONS.start.date(), date.today() + timedelta(days=1)
    new_cache: dict[str, Stamp] = {}
    requests = []
    for day, files in sorted(by_day.items()):
        stamps = [(f.source_file, stamp(f, cache)) for f in files]
        new_cache.update(stamps)
        if all(known.get(name, ("",))[0] == st.sha256 for name, st in stamps):
            continue
        if not first <= day < last:
            if log is not None:
                log.warning(f"{day}: {len(files)} landing files outside the partitions "
                            f"({first} to today); set RUNLAKE_FIRST_DAY to include them")
            continue
        digest = day_digest([(name, st.sha256) for name, st in stamps])
        requests.append(dg.RunRequest(run_key=f"{day.isoformat()}:{digest}",
                                      partition_key=day.isoformat(),
                                      tags={"runlake/files": str(len(files))}))
    return requests, json.dumps({k: [v.size, v.mtime_ns, v.sha256]
                                 for k, v in sorted(new_cache.items())})


@dg.sensor(job=ingest_day, minimum_interval_seconds=30,
           default_status=dg.DefaultSensorStatus.RUNNING)
def landing_sensor(context: dg.SensorEvaluationContext,
                   runlake: RunlakeResource) -> dg.SensorResult:
    """Watches RUNLAKE_LANDING (YYYY-MM-DD/ folders and loose files) and materializes each day
    whose files are new or changed; an identical file dropped again starts nothing."""
    requests, cursor = landing_requests(runlake, context.cursor, context.log)
    return dg.SensorResult(run_requests=requests, cursor=cursor)


@dg.schedule(job=ingest_day, cron_schedule="0 2 * * *", execution_timezone="UTC",
             default_status=dg.DefaultScheduleStatus.RUNNING)
def nightly(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    """02:00 UTC: materialize yesterday, then rebuild the warehouse and the report."""
    when = context.scheduled_execution_time
    yesterday = (when.date() if when else date.today()) - timedelta(days=1)
    return dg.RunRequest(run_key=f"nightly:{yesterday.isoformat()}",
                         partition_key=yesterday.isoformat())
