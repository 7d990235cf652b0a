"""The lake tables as Dagster assets, partitioned by UTC day, with their checks; and the
warehouse they publish.

Materializing partition D ingests the landing files of day D (see `transforms.landing`), runs
the checks against the lake as it now is, and reports per-table metadata for day D. The
warehouse asset rebuilds lake/_derived and warehouse.duckdb; the blocking check
`lines_accounted_for` keeps it from running when the lake does not account for every line.
"""

from datetime import date
from typing import Any

import dagster as dg

from pipelines.resources import RunlakeResource
from transforms import checks, db, warehouse
from transforms.ingest import ingest
from transforms.landing import files_by_day
from transforms.schemas import TABLES
from transforms.settings import Settings

LAKE_GROUP = "lake"
WRITER_TAG = "runlake/writer"
"""Run tag of every run that writes the lake; dagster.yaml lets one such run go at a time."""

PARTITIONS = dg.DailyPartitionsDefinition(
    start_date=Settings().first_day.isoformat(), timezone="UTC", end_offset=1)
"""UTC days from `first_day` through today (end_offset=1: today's files can land early)."""

# The checks and the table each belongs to; lines_accounted_for blocks the warehouse.
CHECKS = {
    "lines_accounted_for": "ingest_files",
    "quarantine_share_below_limit": "quarantine",
    "contract_violation_rate_below_limit": "runs",
    "truncation_rate_below_limit": "runs",
    "latest_day_is_fresh": "runs",
}
CHECK_DOCS = {
    "lines_accounted_for": "Every input line is a row, a quarantine row or blank, and the lake "
                           "holds those rows. ERROR: blocks publishing the warehouse.",
    "quarantine_share_below_limit": "The day's quarantined lines stay under "
                                    "RUNLAKE_MAX_QUARANTINE_SHARE.",
    "contract_violation_rate_below_limit": "The day's runs with an error-severity contract "
                                           "finding stay under "
                                           "RUNLAKE_MAX_CONTRACT_VIOLATION_RATE.",
    "truncation_rate_below_limit": "The day's truncated runs stay under "
                                   "RUNLAKE_MAX_TRUNCATION_RATE.",
    "latest_day_is_fresh": "The newest day with runs ended at most RUNLAKE_FRESHNESS_HOURS ago.",
}


def _column_schema(table: str) -> dg.TableSchema:
    return dg.TableSchema(columns=[
        dg.TableColumn(c.name, str(c.type), description=c.doc) for c in TABLES[table].columns])


def _md(value: Any) -> str:
    """A value as plain text inside a markdown table cell (no markup, no HTML)."""
    text = "" if value is None else str(value)
    for ch in "\\|`*_[]<>#":
        text = text.replace(ch, "\\" + ch)
    return text.replace("\n", " ")[:80]


def _worst_runs(con: Any, day: date) -> str:
    rows = con.execute(
        "SELECT run_id, agent, model, status, n_error_flags, n_flags FROM v_runs WHERE day = ? "
        "ORDER BY n_error_flags DESC, status = 'passed', n_flags DESC, run_id LIMIT 10",
        [day]).fetchall()
    if not rows:
        return "No runs on this day."
    head = "| run_id | agent | model | status | error flags | flags |\n|---|---|---|---|---:|---:|"
    return head + "\n" + "\n".join("| " + " | ".join(_md(v) for v in r) + " |" for r in rows)


def _day_metadata(con: Any, table: str, day: date, s: Settings) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "dagster/row_count": int(db.scalar(
            con, f"SELECT count(*) FROM staging.stg_{table} WHERE day = ?", [day])),
        "dagster/column_schema": _column_schema(table),
        "lake_path": dg.MetadataValue.path(str((s.home / "lake" / table).resolve())),
    }
    if table == "runs":
        graded, passed, tokens, p95 = con.execute(
            "SELECT count(*) FILTER (WHERE status IN ('passed', 'failed', "
            "'contract_violation')), count(*) FILTER (WHERE status = 'passed'), "
            "avg(input_tokens + output_tokens), quantile_cont(agent_runtime_ms, 0.95) "
            "FROM runs WHERE day = ?", [day]).fetchone()
        meta.update({
            "pass_rate": dg.MetadataValue.float(passed / graded if graded else float("nan")),
            "graded_runs": int(graded),
            "tokens_per_run": dg.MetadataValue.float(float(tokens or 0)),
            "runtime_p95_ms": dg.MetadataValue.float(float(p95 or 0)),
            "worst_runs": dg.MetadataValue.md(_worst_runs(con, day)),
        })
    code_column = {"flags": "code", "quarantine": "error_code"}.get(table)
    if code_column:
        for code, n in con.execute(f"SELECT {code_column}, count(*) FROM {table} "
                                   "WHERE day = ? GROUP BY 1 ORDER BY 1", [day]).fetchall():
            meta[f"{table}/{code}"] = int(n)
    return meta


@dg.multi_asset(
    specs=[dg.AssetSpec(name, group_name=LAKE_GROUP, description=t.grain,
                        metadata={"dagster/column_schema": _column_schema(name)})
           for name, t in TABLES.items()],
    check_specs=[dg.AssetCheckSpec(name, asset=table, description=CHECK_DOCS[name],
                                   blocking=name == "lines_accounted_for")
                 for name, table in CHECKS.items()],
    partitions_def=PARTITIONS,
    can_subset=False,
)
def lake_tables(context: dg.AssetExecutionContext, runlake: RunlakeResource):  # type: ignore[no-untyped-def]
    """Ingest one day's landing files into the lake (Parquet, partitioned by day)."""
    s = runlake.settings()
    day = date.fromisoformat(context.partition_key)
    files = files_by_day(s.landing).get(day, [])
    if files:
        report = ingest([f.path for f in files], s.home, workers=s.workers, build_views=False,
                        tools=s.tools, model_aliases=s.model_aliases, prices=s.prices,
                        retention_hours=s.retention_hours)
        skipped = sum(f.skipped for f in report.files)
        context.log.info(f"{day}: {len(files)} files ({skipped} unchanged), "
                         f"{report.lines_read:,} lines read; rows on days "
                         f"{', '.join(d.isoformat() for d in report.days) or 'none'}")
        if report.unpriced_models:
            context.log.warning("models without a price (cost unknown; add them with "
                                "RUNLAKE_PRICES): " + ", ".join(
                                    f"{m} ({n:,})" for m, n in report.unpriced_models.items()))
    else:
        context.log.warning(f"{day}: no landing files under {s.landing} for this day")
    con = warehouse.live(s.home)
    try:
        for name in TABLES:
            yield dg.MaterializeResult(asset_key=name,
                                       metadata=_day_metadata(con, name, day, s))
        for outcome in checks.run_all(con, day, s):
            yield dg.AssetCheckResult(
                asset_key=CHECKS[outcome.name], check_name=outcome.name,
                passed=outcome.passed, description=outcome.summary,
                severity=(dg.AssetCheckSeverity.ERROR if outcome.blocking
                          else dg.AssetCheckSeverity.WARN),
                metadata={"summary": outcome.summary, **outcome.metadata})
    finally:
        con.close()


@dg.asset(deps=list(TABLES), group_name="warehouse")
def warehouse_views(context: dg.AssetExecutionContext,
                    runlake: RunlakeResource) -> dg.MaterializeResult:
    """warehouse.duckdb: the lake's derived tables, then the views, rebuilt atomically."""
    s = runlake.settings()
    path = warehouse.publish(s.home, s.retention_hours)
    con = warehouse.connect(s.home)
    try:
        n_runs, n_days, latest = con.execute(
            "SELECT count(*), count(DISTINCT day), max(day) FROM runs").fetchone() or (0, 0, None)
    finally:
        con.close()
    return dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(str(path.resolve())), "runs": int(n_runs),
        "days": int(n_days), "latest_day": str(latest)})
