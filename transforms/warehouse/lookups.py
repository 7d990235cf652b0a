"""The model alias and price tables in the warehouse: stored with the lake by each ingest
(`lake/_models/tables.json`), and installed as the `model_aliases` and `model_prices` lookup
tables of a DuckDB connection, which `canonical_model()` and `price_in_force()` (sql/macros)
read. Loading and checking the tables is transforms.contracts.models'."""

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from transforms.contracts.models import ModelTables, load
from transforms.lake import MODEL_TABLES

if TYPE_CHECKING:
    from transforms.lake.store import Store

__all__ = ["STORED", "ModelTables", "insert", "install", "load", "store", "stored"]
"""`load` and `ModelTables` are handed on: a build with no stored tables installs the shipped
ones."""

STORED = Path(MODEL_TABLES)
"""Under the lake root: the tables the last ingest was given."""


def stored(lake: "Store") -> ModelTables | None:
    """The tables the last ingest stored in the lake, or None."""
    try:
        return ModelTables.from_json(lake.read_text(*MODEL_TABLES.split("/")))
    except FileNotFoundError:
        return None


def store(lake: "Store", tables: ModelTables) -> bool:
    """Store the tables with the lake (atomically), when they differ from the stored ones (the
    lake's fingerprint then changes, and the warehouse is built again); True when they replaced
    different ones."""
    text = tables.to_json()
    try:
        before: str | None = lake.read_text(*MODEL_TABLES.split("/"))
    except FileNotFoundError:
        before = None
    if before == text:
        return False
    lake.write_bytes(text.encode(), *MODEL_TABLES.split("/"))
    return before is not None


def install(con: duckdb.DuckDBPyConnection, tables: ModelTables) -> None:
    """Create the `model_aliases` and `model_prices` lookup tables on a connection: a price
    row per model and period, in force from price_from (null: on every day) to price_to (the
    next period's price_from, excluded; null: still in force), so that at most one row of a
    model is in force on a day (`price_in_force()` in sql/macros)."""
    con.execute("CREATE TABLE model_aliases (kind VARCHAR, alias VARCHAR, model VARCHAR, "
                "position INTEGER, origin VARCHAR)")
    con.execute("CREATE TABLE model_prices (model VARCHAR, price_from DATE, price_to DATE, "
                "input_usd_per_mtok DOUBLE, cached_input_usd_per_mtok DOUBLE, "
                "output_usd_per_mtok DOUBLE, read_on DATE, source_url VARCHAR, origin VARCHAR, "
                "UNIQUE (model, price_from))")
    insert(con, "model_aliases", [[a.kind, a.alias, a.model, a.position, a.origin]
                                  for a in tables.aliases])
    prices = sorted(tables.prices, key=lambda p: (p.model, p.price_from or ""))
    rows = []
    for p, after in zip(prices, [*prices[1:], None], strict=True):
        price_to = after.price_from if after is not None and after.model == p.model else None
        rows.append([p.model, p.price_from, price_to, p.input_usd_per_mtok,
                     p.cached_input_usd_per_mtok, p.output_usd_per_mtok, p.read_on,
                     p.source_url, p.origin])
    insert(con, "model_prices", rows)


def insert(con: duckdb.DuckDBPyConnection, table: str,
           rows: Sequence[Sequence[object]]) -> None:
    """Insert `rows` into a lookup table as one Arrow table, cast to the table's column types
    by the INSERT. Values never become SQL text, and no parameter is bound: the DuckDB client
    looks for pandas for each bound value, which where pandas is not installed cost an ingest
    about a second for the price table alone."""
    if not rows:
        return
    names = con.table(table).columns
    values = pa.table({name: [row[i] for row in rows] for i, name in enumerate(names)})
    con.register("_lookup_rows", values)
    try:
        con.execute(f"INSERT INTO {table} SELECT * FROM _lookup_rows")
    finally:
        con.unregister("_lookup_rows")


def install_stored(con: duckdb.DuckDBPyConnection, lake: "Store") -> None:
    """model_aliases and model_prices as the last ingest stored them in the lake (else the
    shipped tables)."""
    install(con, stored(lake) or load())
