"""Every view of sql/ over lake tables held in memory: the warehouse of a few rows without a
lake on disk.

`connect` takes the rows of the lake tables as Arrow tables (the schemas of
transforms.contracts.schemas, as the ingest's workers stage them; a `month` partition column,
as transforms.lake.files.lake_schema adds, is ignored) and returns an in-memory DuckDB
connection holding the same objects as `transforms.warehouse.publishing.at` computes from a
lake version: a view of each table's rows, the tool registry, flag_codes and the model tables,
then every model of sql/ in build order through the one builder (transforms.warehouse.builder),
the `table` models computed once as tables.
"""

from collections.abc import Mapping

import duckdb
import pyarrow as pa

from transforms import db
from transforms.contracts.schemas import TABLES
from transforms.lake.files import duckdb_type, empty_select
from transforms.warehouse import grading
from transforms.warehouse.builder import IN_MEMORY, Source, build, create_schemas
from transforms.warehouse.lookups import ModelTables, install, load
from transforms.warehouse.staging import install_flag_codes, install_registry, lines_view


def connect(tables: Mapping[str, pa.Table], registry: pa.Table | None = None,
            model_tables: ModelTables | None = None,
            deciding_evaluations: tuple[str, ...] = ()) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with every view of sql/ built over `tables` (lake table name ->
    its rows; a table not given is empty). `registry`: the tool registry's rows
    (transforms.lake.core.REGISTRY_SCHEMA, as `Registry.rows` gives them; none by default);
    `model_tables`: the model alias and price tables (default the shipped ones);
    `deciding_evaluations`: the evaluations that decide a run made from a trace (default every
    one)."""
    unknown = sorted(set(tables) - set(TABLES))
    if unknown:
        raise ValueError(f"not lake tables: {', '.join(unknown)}")
    con = db.connect(":memory:")
    try:
        create_schemas(con)
        for t in TABLES:
            name = lines_view(t)
            con.execute(f"CREATE TABLE staging.{name}__rows AS {_rows_sql(con, t, tables.get(t))}")
            con.unregister(f"_memory_{t}")
            con.execute(f"CREATE VIEW staging.{name} AS SELECT * FROM staging.{name}__rows")
        install_registry(con, registry)
        install_flag_codes(con)
        install(con, model_tables or load())
        grading.install(con, deciding_evaluations)
        build(con, Source(once=IN_MEMORY))
    except BaseException:
        con.close()
        raise
    return con


def _rows_sql(con: duckdb.DuckDBPyConnection, table: str, rows: pa.Table | None) -> str:
    """SELECT of a lake table's columns, in its order and types, from the given rows (a column
    they lack reads as a typed null, as for a lake file written before it existed)."""
    if rows is None or rows.num_rows == 0:
        return empty_select(table)
    source = f"_memory_{table}"
    con.register(source, rows)
    have = set(rows.column_names)
    cols = ", ".join(
        f"CAST({c.name} AS {duckdb_type(c.type)}) AS {c.name}" if c.name in have
        else f"CAST(NULL AS {duckdb_type(c.type)}) AS {c.name}"
        for c in TABLES[table].columns)
    return f"SELECT {cols} FROM {source}"
