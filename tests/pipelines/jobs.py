"""Running the ingest_day job in process, as the tests of the Dagster definitions do."""

from pathlib import Path
from typing import Any

import dagster as dg

from pipelines.assets.lake import add_landing_days
from pipelines.definitions import defs
from pipelines.resources import RunlakeResource


def run_day(home: Path, landing: Path, day: str) -> Any:
    """Materialize one landing day's partition on a throwaway instance; the result, failed or
    not (raise_on_error off)."""
    instance = dg.DagsterInstance.ephemeral()
    add_landing_days(instance, [day])
    return defs.resolve_job_def("ingest_day").execute_in_process(
        partition_key=day, instance=instance,
        resources={"runlake": RunlakeResource(home=str(home), landing=str(landing))},
        raise_on_error=False)
