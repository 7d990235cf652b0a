"""What the staging models (sql/staging) read from a lake: a view per lake table over the rows
an ingest wrote (its files at one lake version, or a window of days of them), and the lookups
every build needs (flag_codes, the tool registry, the model tables). The staging models, which
leave out the lines and span copies that lost, are SQL like every other model."""

from dataclasses import dataclass
from datetime import date

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from transforms.contracts.flags import CATALOG
from transforms.contracts.schemas import TABLES
from transforms.errors import WarehouseError
from transforms.lake import (
    REGISTRY,
    REGISTRY_SCHEMA,
    Lake,
    duckdb_type,
    files_sql,
    lines_path,
)
from transforms.warehouse.builder import create_schemas
from transforms.warehouse.lookups import insert, install_stored
from transforms.warehouse.models import models


def lines_view(table: str) -> str:
    """The staging view of a lake table's rows as read: stg_<table>_lines when a staging model
    stg_<table> (sql/staging) makes the rows the views show from them, else stg_<table>."""
    staged = {m.name for m in models() if m.layer == "staging"}
    return f"stg_{table}_lines" if f"stg_{table}" in staged else f"stg_{table}"


@dataclass(frozen=True)
class Window:
    """Some days of the lake: the staging views read only the files holding rows of
    `first`..`last` (by the files' day statistics) and only those days' rows."""

    first: date
    last: date
    files: dict[str, list[str]]
    """Lake table -> the files of its rows as written that may hold rows of those days."""
    columns: dict[str, set[str]]


def prepare(con: duckdb.DuckDBPyConnection, lake: Lake, snapshot: dict[str, int],
            window: Window | None = None) -> None:
    """Schemas, a view per lake table of its rows as read (its files at the `snapshot`
    versions; with a `window`, only its days), and the lookups: what the models are built
    over (transforms.warehouse.builder)."""
    prepare_tables(con, lake, snapshot, window)
    prepare_lookups(con, lake)


def prepare_tables(con: duckdb.DuckDBPyConnection, lake: Lake, snapshot: dict[str, int],
                   window: Window | None = None) -> None:
    """The schemas, the views of the rows as read and the tool registry of `prepare`."""
    if lake.remote:
        from transforms.objectstore import SECRET, reach, uses_s3fs

        if SECRET not in _secrets(con) and not uses_s3fs(con):
            reach(con)  # once per connection
    create_schemas(con, again=window is not None)
    if window is None:
        lake.prefetch({lines_path(t): snapshot.get(lines_path(t), -1) for t in TABLES})
    for t in TABLES:
        v = snapshot.get(lines_path(t), -1)
        if window is None or t == "ingest_files":
            files = lake.file_uris(lines_path(t), v) if v >= 0 else []
            present = lake.columns(lines_path(t), v) if files else None
        else:
            files, present = window.files[t], window.columns[t]
        body = files_sql(files, t, present)
        if window is not None and t != "ingest_files":
            body = (f"SELECT * FROM ({body}) WHERE day BETWEEN DATE '{window.first}' "
                    f"AND DATE '{window.last}'")
        con.execute(f"CREATE VIEW staging.{lines_view(t)} AS {body}")
    # The tool registry the last ingest checked calls against (empty without one).
    install_registry(con, read_registry(lake))


def read_registry(lake: Lake) -> pa.Table | None:
    """The rows of lake/_registry/tools.parquet (None without one). Read whole here, not by a
    view over the file: it is rewritten under one name, and DuckDB keeps what it learnt of an
    s3:// file (its size, its blocks) for the connection's life (objectstore.reach)."""
    try:
        data = lake.store.read_bytes(REGISTRY, "tools.parquet")
    except FileNotFoundError:
        return None
    try:
        return pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError) as e:
        raise WarehouseError(f"{lake.store.url(REGISTRY, 'tools.parquet')} (the tool registry "
                             f"of the last ingest) cannot be read ({e}); the next ingest with "
                             "a tool registry writes it again") from None


def install_registry(con: duckdb.DuckDBPyConnection, registry: pa.Table | None) -> None:
    """The staging view of the tool registry over a table of its rows (REGISTRY_SCHEMA; empty
    when `registry` is None)."""
    if registry is None or registry.num_rows == 0:
        source = "SELECT " + ", ".join(
            f"CAST(NULL AS {duckdb_type(f.type)}) AS {f.name}" for f in REGISTRY_SCHEMA
        ) + " WHERE false"
    else:
        con.register("_registry_rows", registry.select(REGISTRY_SCHEMA.names)
                     .cast(REGISTRY_SCHEMA))
        source = "SELECT * FROM _registry_rows"
    try:
        con.execute(f"CREATE TABLE staging.tool_registry__rows AS {source}")
    finally:
        con.unregister("_registry_rows")
    con.execute("CREATE VIEW staging.stg_tool_registry AS "
                "SELECT * FROM staging.tool_registry__rows")


def prepare_lookups(con: duckdb.DuckDBPyConnection, lake: Lake) -> None:
    """flag_codes, the model tables and the deciding evaluations of `prepare`."""
    from transforms.warehouse import grading

    install_flag_codes(con)
    # The model alias and price tables the last ingest stored (else the shipped ones).
    install_stored(con, lake.store)
    grading.install(con, grading.stored(lake.store))


def install_flag_codes(con: duckdb.DuckDBPyConnection) -> None:
    """The flag_codes lookup table: every flag code of the catalog."""
    con.execute("CREATE TABLE flag_codes (code VARCHAR PRIMARY KEY, severity VARCHAR, "
                "category VARCHAR, entity VARCHAR, description VARCHAR, source VARCHAR)")
    rows = [[s.code, s.severity, s.category, s.entity, s.description, s.source]
            for s in CATALOG.values()]
    insert(con, "flag_codes", rows)


def _secrets(con: duckdb.DuckDBPyConnection) -> set[str]:
    try:
        return {r[0] for r in con.execute("SELECT name FROM duckdb_secrets()").fetchall()}
    except duckdb.Error:
        return set()
