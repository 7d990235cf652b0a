"""`python -m pipelines.materialize`: run the `ingest_day` job in-process for every day in the
landing folder, as `make run` does, recording the runs in $DAGSTER_HOME so `dagster dev` shows
them (the landing days as partitions, checks, metadata); then print where things are.

A run whose blocking check failed at ERROR (`no_regression` on a regressed day,
`lines_accounted_for` on a lake that lost rows) is a failed run in the UI; it is printed as
such and the next days still run. Any other failure stops here with exit code 1."""

import logging
import sys
from pathlib import Path
from typing import Any

import dagster as dg

from pipelines.assets.lake import add_landing_days
from pipelines.definitions import defs
from transforms import db, warehouse
from transforms.read.landing import files_by_day
from transforms.settings import Settings

CHECK_FAILED = "DagsterAssetCheckFailedError"
"""The error class of a step that failed because a blocking check failed at ERROR."""


def step_failures(result: Any) -> list[tuple[str, str, str]]:
    """(step, error class, message) of each failed step of an in-process run: the error the
    step's code raised, not Dagster's wrapper around it."""
    out = []
    for event in result.all_events:
        if event.is_step_failure:
            error = event.step_failure_data.error
            while error is not None and error.cause is not None:
                error = error.cause
            out.append((event.step_key or "", error.cls_name if error else "",
                        (error.message if error else "").strip()))
    return out


def _level(level: str | int) -> int:
    return level if isinstance(level, int) else logging.getLevelNamesMapping().get(level, 0)


def main() -> int:
    s = Settings()
    days = sorted(files_by_day(s.landing))
    if not days:
        where = s.landing.resolve() if isinstance(s.landing, Path) else s.landing
        print(f"no trace files under {where} (set RUNLAKE_LANDING)",
              file=sys.stderr)
        return 2
    instance = dg.DagsterInstance.get()
    add_landing_days(instance, days)
    job = defs.resolve_job_def("ingest_day")
    for day in days:
        # The console stays quiet (a failed blocking check would print its stack trace); the
        # run's own warnings are printed below from the instance's record of the run.
        result = job.execute_in_process(
            instance=instance, partition_key=day.isoformat(), raise_on_error=False,
            run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}})
        logged = [f"  log {logging.getLevelName(_level(e.level)).lower()}: {e.user_message}"
                  for e in instance.all_logs(result.run_id)
                  if not e.is_dagster_event and _level(e.level) >= logging.WARNING]
        steps = step_failures(result)
        other = [f for f in steps if f[1] != CHECK_FAILED]
        if other:
            print("\n".join([f"{day}: run failed", *logged]), file=sys.stderr)
            for step, cls, message in other:
                print(f"{day}: {step} failed: {cls}: {message}", file=sys.stderr)
            print(f"{day}: materialization failed; see the log above", file=sys.stderr)
            return 1
        failed = [e for e in result.get_asset_check_evaluations() if not e.passed]
        blocking = [e.check_name for e in failed if e.severity == dg.AssetCheckSeverity.ERROR]
        print(f"{day}: materialized" + ("" if failed else "; all checks passed")
              + (f"; run failed: {', '.join(blocking)} failed at ERROR" if steps else ""))
        if logged:
            print("\n".join(logged))
        for e in failed:
            # Each check says what it measured against what limit.
            print(f"  {e.severity.value.lower()}: {e.check_name}: {e.description or ''}")
    con = warehouse.connect(s.home)
    try:
        rows = con.execute("SELECT status, count(*) FROM runs GROUP BY 1 ORDER BY 2 DESC"
                           ).fetchall()
        n_flags = db.scalar(con, "SELECT count(*) FROM flags")
        n_quarantine = db.scalar(con, "SELECT count(*) FROM quarantine")
    finally:
        con.close()
    print("runs by status: " + ", ".join(f"{k} {v}" for k, v in rows))
    print(f"flags: {n_flags}, quarantined lines: {n_quarantine}")
    print(f"warehouse: {warehouse.path(s.home).resolve()}")
    reports = sorted(warehouse.reports(s.home).glob("nightly-*.html"))
    if reports:
        print(f"report:    {reports[-1].resolve()}")
    print('try:       .venv/bin/runlake sql "select status, count(*) from runs group by 1"')
    print("UI:        make dev   (dagster dev -w workspace.yaml)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
