"""The warehouse: the views over a lake version that people query, and
RUNLAKE_HOME/warehouse.duckdb, a small DuckDB file of those views (no data: the views read the
lake's tables), with `flag_codes` and the model alias and price tables.

A view of each lake table reads its rows as ingested (lake/_lines/<table>); the SQL models
under `sql/` build everything else, each as its header declares (transforms.warehouse.models),
through one builder (transforms.warehouse.builder). Most are stored by the commit that made the
lake version (transforms.warehouse.derive): each model whose header says `-- stored:` reads
that lake table (lake/_derived/<name> for the intermediate ones, lake/<table> for the public
view of each lake table). Models are built in build order (transforms.warehouse.sqlfiles); a
broken reference fails the build loudly and leaves the previous warehouse in place.

Writers build the file (transforms.warehouse.publishing); readers never write: `connect` opens
the file when it shows the lake's newest version from this home, and otherwise (a commit not
yet followed by a build, a moved or copied home, a home the user cannot write) makes the same
views in memory.
"""

import importlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transforms.errors import NoWarehouse, WarehouseError
from transforms.lake.store import locate

if TYPE_CHECKING:
    import duckdb

    from transforms.warehouse.derive import GROUP_WEEKS, NEIGHBOUR_DAYS
    from transforms.warehouse.publishing import (
        STORAGE_VERSION,
        at,
        build,
        in_memory,
        is_current,
        live,
        publish,
        staged,
    )
    from transforms.warehouse.sqlfiles import SQL_DIR, view_docs

__all__ = ["BUILD", "FILE_NAME", "GROUP_WEEKS", "NEIGHBOUR_DAYS", "SQL_DIR", "STORAGE_VERSION",
           "WarehouseError", "at", "build", "connect", "in_memory", "is_current",
           "live", "log_state", "newest_log", "path", "publish", "reach", "reports", "staged",
           "view_docs"]

FILE_NAME = "warehouse.duckdb"
BUILD = "runlake.build"
"""The table of warehouse.duckdb naming the home and the manifest log version it was built for."""


def path(home: Path | str) -> Path:
    """The warehouse file of a home: HOME/warehouse.duckdb, RUNLAKE_WAREHOUSE, or for an
    s3:// home a file under the user's cache folder (transforms.lake.store.locate)."""
    return locate(home).warehouse


def reports(home: Path | str) -> Path:
    """The folder of the nightly reports: HOME/reports, or beside the warehouse file of an
    s3:// home."""
    return locate(home).reports


def newest_log(home: Path | str) -> int:
    """The newest commit of the lake's manifest (lake/ingest_files/_delta_log), from one
    listing of its log: -1 when there is none. Any commit after a build (a lake version, a
    vacuum) makes warehouse.duckdb stale."""
    return log_state(home)[0]


def log_state(home: Path | str) -> tuple[int, str | None]:
    """The newest commit of the lake's manifest and what tells that commit's file from another
    of the same name (its ETag and size on object storage, its inode, size and time on a local
    folder; None when there is no log). A lake written anew at the same place reaches the same
    version numbers with other files: a warehouse file built for the old one is then stale."""
    store = locate(home).lake()
    try:
        names = store.listing("ingest_files", "_delta_log")
    except FileNotFoundError:
        return -1, None
    found = {int(n[:-5]): n for n in names if n.endswith(".json") and n[:-5].isdigit()}
    if not found:
        return -1, None
    version = max(found)
    stamp = names[found[version]]
    if stamp is None:  # a local folder's listing does not read its files' stamps
        stamp = store.stamp("ingest_files", "_delta_log", found[version])
    return version, None if stamp is None else json.dumps(list(stamp))


def built_for(con: "duckdb.DuckDBPyConnection") -> tuple[str, int, str | None] | None:
    """The home, the manifest's log version and that log file's stamp a warehouse file was
    built for (None: not a warehouse file this runlake built)."""
    import duckdb

    try:
        row = con.execute(f"SELECT home, log_version, log_stamp FROM {BUILD}").fetchone()
    except duckdb.Error:
        return None
    return None if row is None else (str(row[0]), int(row[1]), row[2])


def connect(home: Path | str, temp: Path | None = None) -> "duckdb.DuckDBPyConnection":
    """A read-only connection to the warehouse; many may be open while a writer ingests. It
    writes nothing: when warehouse.duckdb is missing, shows an older lake version, or was
    built in another folder (a moved or copied home), the views are made in memory over the
    lake as it is now. For an s3:// home the connection reads the lake's files through DuckDB's
    httpfs, or s3fs when httpfs does not load (transforms.objectstore.reach).
    Opening a current warehouse file imports duckdb and nothing heavier. `temp`: the folder it
    spills into (default DuckDB's, beside the file; a sandboxed connection needs its own,
    db.sandbox)."""
    import duckdb

    from transforms import db

    where = locate(home)
    target = where.warehouse
    extra = {} if temp is None else {"temp_directory": str(temp)}
    state = log_state(home)  # one listing of the manifest's log
    if target.exists():
        try:
            con = db.connect(str(target), read_only=True, **extra)
        except duckdb.Error:
            con = None  # damaged: the views in memory until a writer builds it again
        if con is not None:
            if built_for(con) == (where.name, *state):
                if where.remote:
                    from transforms.objectstore import reach as reach_store

                    try:
                        reach_store(con)
                    except BaseException:
                        con.close()
                        raise
                return con
            con.close()
    if state[0] < 0:
        raise NoWarehouse(target)
    from transforms.warehouse.publishing import in_memory

    return in_memory(home, temp=temp)


def reach(con: "duckdb.DuckDBPyConnection", lake: Any) -> None:
    """Let `con` read the files of `lake` (transforms.lake.Lake): nothing to do for a local
    one; s3:// URLs through transforms.objectstore.reach for one on object storage."""
    if lake.remote:
        from transforms.objectstore import reach as reach_store

        reach_store(con)


_LAZY = {"GROUP_WEEKS": "derive", "NEIGHBOUR_DAYS": "derive",
         "SQL_DIR": "sqlfiles", "sql_files": "sqlfiles", "view_docs": "sqlfiles"}


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
