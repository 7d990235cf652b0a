"""The lake: Delta Lake tables under RUNLAKE_HOME/lake/ (transforms.lake.core says what each
holds and how a lake version is committed). The package loads its parts when they are
first used, so that finding where a home keeps things (`store.locate`) imports neither pyarrow
nor deltalake: `runlake sql` and `--help` start quickly."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from transforms.lake.core import (
        AS_READ,
        DATA_TABLES,
        DEFAULT_RETENTION_HOURS,
        DERIVED,
        GRADING,
        LINES,
        MANIFEST,
        MANIFEST_MADE,
        MODEL_TABLES,
        OWNER,
        PARTITION,
        REGISTRY,
        REGISTRY_SCHEMA,
        TABLES,
        WEEK,
        WRITTEN,
        Lake,
        claim_scratch,
        clear_scratch,
        duckdb_type,
        files_sql,
        history,
        lake_schema,
        lines_path,
        parquet_sql,
        scan_sql,
        sql_str,
    )

__all__ = ["AS_READ", "DATA_TABLES", "DEFAULT_RETENTION_HOURS", "DERIVED", "GRADING", "LINES",
           "MANIFEST", "MANIFEST_MADE", "MODEL_TABLES", "OWNER", "PARTITION", "REGISTRY",
           "REGISTRY_SCHEMA", "TABLES", "WEEK", "WRITTEN", "Lake", "claim_scratch", "clear_scratch",
           "duckdb_type", "files_sql", "history", "lake_schema", "scan_sql", "sql_str",
           "lines_path", "parquet_sql"]


def __getattr__(name: str) -> Any:
    """A name of transforms.lake.core, imported on first use."""
    if name.startswith("__") or name == "core":
        raise AttributeError(name)
    core = importlib.import_module("transforms.lake.core")
    try:
        return getattr(core, name)
    except AttributeError:
        raise AttributeError(f"module 'transforms.lake' has no attribute {name!r}") from None
