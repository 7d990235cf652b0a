"""The lake tables as Dagster assets: one multi-asset runs the ingest, one spec per table."""

import dagster as dg

from pipelines.resources import RunlakeResource
from transforms import db, warehouse
from transforms.ingest import ingest
from transforms.schemas import TABLES

LAKE_GROUP = "lake"


def _column_schema(table: str) -> dg.TableSchema:
    return dg.TableSchema(columns=[
        dg.TableColumn(c.name, str(c.type), description=c.doc) for c in TABLES[table].columns])


@dg.multi_asset(
    specs=[dg.AssetSpec(name, group_name=LAKE_GROUP, description=t.grain,
                        metadata={"dagster/column_schema": _column_schema(name)})
           for name, t in TABLES.items()],
    can_subset=False,
)
def lake_tables(context: dg.AssetExecutionContext, runlake: RunlakeResource):  # type: ignore[no-untyped-def]
    """Ingest the landing folder into the lake (Parquet, partitioned by day)."""
    s = runlake.settings()
    report = ingest([s.landing], s.home, workers=s.workers, build_views=False)
    context.log.info(f"{len(report.files)} files, {report.lines_read:,} lines read; "
                     f"days {', '.join(d.isoformat() for d in report.days) or 'none'}")
    for name in TABLES:
        meta: dict[str, dg.RawMetadataValue] = {
            "lake_path": dg.MetadataValue.path(str((s.home / "lake" / name).resolve())),
            "rows_ingested": report.rows.get(name, 0),
        }
        if name == "flags":
            meta.update({f"flags/{code}": n for code, n in report.flags_by_code.items()})
        if name == "quarantine":
            meta.update({f"quarantine/{code}": n for code, n in report.quarantine_by_code.items()})
        yield dg.MaterializeResult(asset_key=name, metadata=meta)


@dg.asset(deps=list(TABLES), group_name="warehouse")
def warehouse_views(runlake: RunlakeResource) -> dg.MaterializeResult:
    """warehouse.duckdb: a view per lake table plus flag_codes, rebuilt atomically."""
    s = runlake.settings()
    warehouse.derive(s.home)
    path = warehouse.build(s.home)
    con = warehouse.connect(s.home)
    try:
        n_runs = db.scalar(con, "SELECT count(*) FROM runs")
    finally:
        con.close()
    return dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(str(path.resolve())), "runs": int(n_runs)})
