"""`python -m pipelines.materialize`: run the `ingest_day` job in-process for every day in the
landing folder, as `make run` does, recording the runs in $DAGSTER_HOME so `dagster dev` shows
them (partitions, checks, plotted metadata); then print where things are."""

import sys

import dagster as dg

from pipelines.definitions import defs
from transforms import db, warehouse
from transforms.landing import files_by_day
from transforms.settings import Settings


def main() -> int:
    s = Settings()
    days = sorted(files_by_day(s.landing))
    if not days:
        print(f"no trace files under {s.landing.resolve()} (set RUNLAKE_LANDING)",
              file=sys.stderr)
        return 2
    instance = dg.DagsterInstance.get()
    job = defs.resolve_job_def("ingest_day")
    for day in days:
        result = job.execute_in_process(
            instance=instance, partition_key=day.isoformat(),
            run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}})
        if not result.success:
            print(f"{day}: materialization failed; see the log above", file=sys.stderr)
            return 1
        failed = [e for e in result.get_asset_check_evaluations() if not e.passed]
        print(f"{day}: materialized" + ("" if failed else "; all checks passed"))
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
    reports = sorted((s.home / "reports").glob("nightly-*.html"))
    if reports:
        print(f"report:    {reports[-1].resolve()}")
    print('try:       .venv/bin/runlake sql "select status, count(*) from runs group by 1"')
    print("UI:        make dev   (dagster dev -w workspace.yaml)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
