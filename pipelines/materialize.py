"""`python -m pipelines.materialize`: materialize every asset in-process, as `make run` does,
recording the run in $DAGSTER_HOME so `dagster dev` shows it, then print where things are."""

import sys

import dagster as dg

from pipelines.definitions import defs
from transforms import db, warehouse
from transforms.settings import Settings


def main() -> int:
    instance = dg.DagsterInstance.get()
    job = defs.resolve_implicit_global_asset_job_def()
    result = job.execute_in_process(
        instance=instance,
        run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}})
    if not result.success:
        print("materialization failed; see the log above", file=sys.stderr)
        return 1
    s = Settings()
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
    print('try:       .venv/bin/runlake sql "select status, count(*) from runs group by 1"')
    print("UI:        make dev   (dagster dev -w workspace.yaml)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
