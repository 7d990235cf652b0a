"""runlake's Dagster definitions, loaded by `dagster dev -w workspace.yaml`."""

import dagster as dg

from pipelines.assets.lake import lake_tables, warehouse_views
from pipelines.assets.report import nightly_report
from pipelines.automation import ingest_day, landing_sensor, nightly
from pipelines.resources import RunlakeResource

defs = dg.Definitions(
    assets=[lake_tables, warehouse_views, nightly_report],
    jobs=[ingest_day],
    sensors=[landing_sensor],
    schedules=[nightly],
    resources={"runlake": RunlakeResource()},
    executor=dg.in_process_executor,
)
