"""Builds RUNLAKE_HOME/warehouse.duckdb: a file of views over the lake, plus `flag_codes` and
the model alias and price tables (`model_aliases`, `model_prices`: transforms.contracts.models).

`staging.stg_<table>` reads each lake table as stored; the SQL under `sql/` builds everything
else on them, among it the public view of each lake table (runs, messages, spans, ...), where
links across files are resolved (a span's run, a run's model and token totals from its spans,
flags derived from several tables).

The file is built aside and renamed into place, so readers holding the old one `read_only`
are never broken, and it holds no data but small lookup tables: opening it is cheap. SQL under
`sql/` is applied in layer order (macros, staging, intermediate, marts, checks); a broken
reference fails the build loudly and leaves the previous warehouse in place.
"""

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transforms.errors import WarehouseError
from transforms.lake.store import locate

if TYPE_CHECKING:
    import duckdb

    from transforms.warehouse.derived import (
        DERIVED,
        GROUP_WEEKS,
        NEIGHBOUR_DAYS,
        WEEKS,
        WEEKS_FILE,
        derive,
    )
    from transforms.warehouse.publishing import (
        STORAGE_VERSION,
        at,
        build,
        is_current,
        live,
        publish,
    )
    from transforms.warehouse.sqlfiles import SQL_DIR, view_docs

__all__ = ["DERIVED", "FILE_NAME", "GROUP_WEEKS", "NEIGHBOUR_DAYS", "SQL_DIR", "STORAGE_VERSION",
           "WEEKS", "WEEKS_FILE", "WarehouseError", "at", "build", "connect", "derive",
           "is_current", "live", "path", "publish", "reports", "view_docs"]

FILE_NAME = "warehouse.duckdb"
FORGET_PENDING = ".forget.pending"
"""Beside the warehouse file while a forget runs (its files, its commit's id, its pid): a
reader that finds it builds the views again first if that forget committed (it was killed
before it could), so that no reader sees forgotten rows (publishing.finish_pending)."""


def path(home: Path | str) -> Path:
    """The warehouse file of a home: HOME/warehouse.duckdb, RUNLAKE_WAREHOUSE, or for an
    s3:// home a file under the user's cache folder (transforms.lake.store.locate)."""
    return locate(home).warehouse


def reports(home: Path | str) -> Path:
    """The folder of the nightly reports: HOME/reports, or beside the warehouse file of an
    s3:// home."""
    return locate(home).reports


def _built_stamp(home: Path | str) -> Path:
    """The lake state (and home) the published warehouse file was built from."""
    target = path(home)
    return target.with_name(f".{target.name}.lake_state")


def connect(home: Path | str, temp: Path | None = None) -> "duckdb.DuckDBPyConnection":
    """A read-only connection to the warehouse; many may be open while a writer ingests. In a
    moved or copied home the views are built again first (they name the lake's files). For an
    s3:// home the connection reads the lake's files through s3fs. Opening a published
    warehouse imports duckdb and nothing heavier. `temp`: the folder it spills into (default
    DuckDB's, beside the file; a sandboxed connection needs its own, db.sandbox)."""
    from transforms import db

    where = locate(home)
    target = where.warehouse
    if (where.folder / FORGET_PENDING).exists():
        from transforms.warehouse.publishing import finish_pending

        finish_pending(home)
    if not target.exists():
        from transforms.lake import Lake

        if where.remote and Lake(home).exists("ingest_files"):
            _publish(home)  # a lake another machine ingested: its views, built here
        else:
            raise FileNotFoundError(f"no warehouse at {target}: run `runlake ingest PATH` "
                                    "first")
    built = _built_stamp(home)
    if not built.exists() or not built.read_text().endswith(f"\n{where.name}"):
        # A moved or copied home (its views name the old paths), or one whose stamp is
        # missing (copied without it, or a build that died before writing it).
        _publish(home)
    con = db.connect(str(target), read_only=True,
                     **({} if temp is None else {"temp_directory": str(temp)}))
    if where.remote:
        db.use_filesystem(con, where.lake().fs)
    return con


def _publish(home: Path | str) -> None:
    from transforms.warehouse.publishing import publish

    publish(home)


_LAZY = {"DERIVED": "derived", "GROUP_WEEKS": "derived", "NEIGHBOUR_DAYS": "derived",
         "WEEKS": "derived", "WEEKS_FILE": "derived", "derive": "derived",
         "SQL_DIR": "sqlfiles", "view_docs": "sqlfiles"}


def __getattr__(name: str) -> Any:
    """Building and publishing (transforms.warehouse.publishing) and the derived tables,
    imported on first use."""
    if name.startswith("__"):
        raise AttributeError(name)
    module = importlib.import_module(f"transforms.warehouse.{_LAZY.get(name, 'publishing')}")
    try:
        return getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module 'transforms.warehouse' has no attribute {name!r}") \
            from None
