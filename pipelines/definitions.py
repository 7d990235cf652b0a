"""runlake's Dagster definitions, loaded by `dagster dev -w workspace.yaml`."""

import dagster as dg

from pipelines.assets.lake import lake_tables, warehouse_views
from pipelines.resources import RunlakeResource

defs = dg.Definitions(
    assets=[lake_tables, warehouse_views],
    resources={"runlake": RunlakeResource()},
    executor=dg.in_process_executor,
)
