"""The staging layer of the warehouse: a view per lake table (its files at one lake version),
the lines that lose to a later line with their run_id left out of the run tables' views, and
the lookups every build needs (flag_codes, the tool registry, the model tables)."""

from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from transforms import db
from transforms.contracts.flags import CATALOG
from transforms.contracts.schemas import RUN_TABLES, TABLES
from transforms.errors import WarehouseError
from transforms.lake import REGISTRY, REGISTRY_SCHEMA, Lake, duckdb_type, files_sql, sql_str
from transforms.warehouse import lookups as models

if TYPE_CHECKING:
    from transforms.warehouse.derived import Window

SUPERSEDED_LINES = """
    SELECT run_id, day, source_file, source_line, win_day, win_file, win_line
    FROM (
        SELECT run_id, day, source_file, source_line,
               first_value(day) OVER w AS win_day,
               first_value(source_file) OVER w AS win_file,
               first_value(source_line) OVER w AS win_line,
               row_number() OVER w AS rank_
        FROM staging.stg_runs_lines
        WINDOW w AS (PARTITION BY run_id ORDER BY source_file DESC, source_line DESC)
    )
    WHERE rank_ > 1"""
"""Lines whose run_id a later line (by source file path, then line number) also carries: the
later line wins, the earlier lines' rows stay in the lake and are left out of the views."""


def staging_views(with_superseded: bool = True) -> list[tuple[str, str]]:
    """The staging views built on the lake tables' own (in order, each DuckDB SQL): the lines
    that lose to a later line (unless stored), the run tables without them, and the runs
    that lost."""
    views = [("stg_superseded_lines", SUPERSEDED_LINES)] if with_superseded else []
    for t in RUN_TABLES:
        views.append((f"stg_{t}", f"""SELECT * FROM staging.stg_{t}_lines r
            WHERE NOT EXISTS (SELECT 1 FROM staging.stg_superseded_lines l
                              WHERE l.run_id = r.run_id AND l.source_file = r.source_file
                                AND l.source_line = r.source_line)"""))
    views.append(("stg_superseded_runs", """SELECT * FROM staging.stg_runs_lines r
        WHERE EXISTS (SELECT 1 FROM staging.stg_superseded_lines l
                      WHERE l.run_id = r.run_id AND l.source_file = r.source_file
                        AND l.source_line = r.source_line)"""))
    return views


def prepare(con: duckdb.DuckDBPyConnection, home: Path | str,
             snapshot: dict[str, int] | None = None, derived: str | None = None,
             window: "Window | None" = None) -> None:
    """Schemas, a staging view per lake table (its files at the `snapshot` versions, default
    the lake's newest consistent version; with a `window`, only its days), flag_codes,
    model_aliases and model_prices."""
    prepare_tables(con, home, snapshot, derived, window)
    prepare_lookups(con, home)


def prepare_tables(con: duckdb.DuckDBPyConnection, home: Path | str,
                    snapshot: dict[str, int] | None = None, derived: str | None = None,
                    window: "Window | None" = None) -> None:
    """The schemas and the staging views of `_prepare` (`derived`: the folder of the derived
    tables in the lake, relative to it)."""
    lake_ = Lake(home)
    store = lake_.store
    db.use_filesystem(con, store.fs)
    versions = lake_.snapshot() if snapshot is None else snapshot
    for schema in ("staging", "intermediate", "checks"):
        con.execute(f"CREATE SCHEMA {schema}")
    for t in TABLES:
        v = versions.get(t, -1)
        if window is None or t == "ingest_files":
            files = lake_.file_uris(t, v) if v >= 0 else []
            present = lake_.columns(t, v) if files else None
        else:
            files, present = window.files[t], window.columns[t]
        body = files_sql(files, t, present)
        if window is not None and t != "ingest_files":
            body = (f"SELECT * FROM ({body}) WHERE day BETWEEN DATE '{window.first}' "
                    f"AND DATE '{window.last}'")
        name = f"stg_{t}_lines" if t in RUN_TABLES else f"stg_{t}"
        con.execute(f"CREATE VIEW staging.{name} AS {body}")
    # Every line keeps its rows in the lake; the views show the winning line of each run_id.
    stored = (*derived.split("/"), "superseded_lines.parquet") if derived is not None else None
    if stored is not None and store.exists(*stored):
        con.execute("CREATE VIEW staging.stg_superseded_lines AS SELECT * FROM "
                    f"read_parquet({sql_str(store.url(*stored))}, hive_partitioning = false)")
    for name, sql in staging_views(with_superseded=stored is None
                                   or not store.exists(*stored)):
        con.execute(f"CREATE VIEW staging.{name} AS {sql}")
    # The tool registry the last ingest checked calls against (empty without one).
    if store.exists(REGISTRY, "tools.parquet"):
        registry = store.url(REGISTRY, "tools.parquet") if store.remote \
            else str(store.path(REGISTRY, "tools.parquet").resolve())
        source = ("SELECT * FROM read_parquet("
                  f"{sql_str(registry)}, hive_partitioning = false)")
    else:
        source = "SELECT " + ", ".join(
            f"CAST(NULL AS {duckdb_type(f.type)}) AS {f.name}" for f in REGISTRY_SCHEMA
        ) + " WHERE false"
    con.execute(f"CREATE VIEW staging.stg_tool_registry AS {source}")


def prepare_lookups(con: duckdb.DuckDBPyConnection, home: Path | str) -> None:
    """flag_codes and the model tables of `_prepare`."""
    lake = Lake(home).store
    con.execute("CREATE TABLE flag_codes (code VARCHAR PRIMARY KEY, severity VARCHAR, "
                "category VARCHAR, entity VARCHAR, description VARCHAR, source VARCHAR)")
    rows = [[s.code, s.severity, s.category, s.entity, s.description, s.source]
            for s in CATALOG.values()]
    con.execute("INSERT INTO flag_codes VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(rows)),
                [v for row in rows for v in row])
    # The model alias and price tables the last ingest stored (else the shipped ones).
    models.install(con, models.stored(lake) or models.load())


def run_sql(con: duckdb.DuckDBPyConnection, f: Path) -> None:
    try:
        con.execute(f.read_text())
    except duckdb.Error as e:
        raise WarehouseError(f"sql/{f.parent.name}/{f.name}: {e}") from e
