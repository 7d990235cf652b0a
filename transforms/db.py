"""DuckDB connections as runlake opens them: no progress bar on stdout, explicit settings."""

from typing import Any

import duckdb


def connect(database: str = ":memory:", read_only: bool = False,
            **config: Any) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with runlake's defaults (quiet); `config` adds DuckDB settings."""
    con = duckdb.connect(database, read_only=read_only, config=config)
    con.execute("SET enable_progress_bar = false")
    return con


def scalar(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> Any:
    """The first column of the first row of a query (None when it returns no row)."""
    row = con.execute(sql, params).fetchone() if params is not None else \
        con.execute(sql).fetchone()
    return row[0] if row else None
