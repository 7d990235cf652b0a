"""The staging layer of the warehouse: a view per lake table over the rows an ingest wrote (its
files at one lake version), the lines that lose to a later line with their run_id left out of
the run tables' views, and the lookups every build needs (flag_codes, the tool registry, the
model tables)."""

from dataclasses import dataclass
from datetime import date
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from transforms.contracts.flags import CATALOG
from transforms.contracts.schemas import RUN_TABLES, TABLES
from transforms.errors import WarehouseError
from transforms.lake import (
    DERIVED,
    REGISTRY,
    REGISTRY_SCHEMA,
    Lake,
    duckdb_type,
    files_sql,
    sql_str,
    stored,
)
from transforms.warehouse.lookups import insert, install_stored

SUPERSEDED = f"{DERIVED}/superseded_lines"
"""The stored lines that lose to a later line with their run_id (SUPERSEDED_LINES), over the
whole lake: one narrow scan of the runs as read per lake version."""

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
later line wins; the earlier lines' rows stay in lake/_lines/ and are left out of the views."""

SPAN_COPIES = """
    SELECT trace_id, span_id, source_file, source_line, span_index,
           row_number() OVER w AS copy_rank,
           count(*) OVER (PARTITION BY trace_id, span_id) AS deliveries
    FROM staging.stg_spans_lines
    WHERE trace_id IS NOT NULL AND span_id IS NOT NULL
    WINDOW w AS (PARTITION BY trace_id, span_id
                 ORDER BY source_file DESC, source_line DESC, span_index DESC)"""
"""Every staged copy of a span (its trace_id and span_id): an exporter delivers at least once,
so a span can be read twice (a retried request, the same span in two files). The copy read
last (by source file path, then line, then position in its line) wins (copy_rank 1), as for a
repeated run_id; `deliveries` counts the copies. The copies of a span share its start time and
so its day: a derive's window of days holds them all."""

SUPERSEDED_SPANS = """
    SELECT source_file, source_line, span_id FROM staging.stg_span_copies WHERE copy_rank > 1
    EXCEPT
    SELECT source_file, source_line, span_id FROM staging.stg_span_copies WHERE copy_rank = 1"""
"""(source_file, source_line, span_id) of the span copies that lost: the rows read from them
(an LLM call's messages, tool calls, reasoning blocks and findings) are left out of the views.
A key that a winning copy shares (two traces' spans of one id in one line) is kept: those rows
cannot be told apart by trace, and no winner's row is left out."""

SUPERSEDED_CALLS = """
    SELECT source_file, source_line, span_id, trace_id FROM staging.stg_span_copies
    WHERE copy_rank > 1
    EXCEPT
    SELECT source_file, source_line, span_id, trace_id FROM staging.stg_span_copies
    WHERE copy_rank = 1"""
"""SUPERSEDED_SPANS with the trace: an LLM call row names its trace, so the copies that lost
are told from a winner of another trace in the same line. (A span the same line holds twice
reads its LLM call from the later copy only: transforms.normalize.spans.)"""

RUN_KEYS = "SELECT DISTINCT run_id, trace_id FROM staging.stg_runs_lines"
"""The run_id and trace_id of every response line read (those that lost to a later line with
their run_id too: a retried run's first attempt is no run of its own either): a trace any of
them names, however far away, is no run of its own (sql/intermediate/int_trace_runs.sql). A
derive computes it over the whole lake once (one narrow scan of the runs), and each window of
days reads it."""

SPAN_TABLES = ("spans", "llm_calls")
"""Tables of span rows whose staging view leaves out the copies of a span that lost."""

SCORED = "scores"
"""The table of both kinds of rows: a response line's scores (left out with their line) and a
span's evaluations (left out with the copy of the span that lost)."""

LINES_VIEWED = (*RUN_TABLES, *SPAN_TABLES, SCORED)
"""The tables whose staging view stg_<table> is made from stg_<table>_lines (the rows as
read), without the lines and span copies that lost."""


def lines_view(table: str) -> str:
    """The staging view of a lake table's rows as read: stg_<table>_lines for LINES_VIEWED,
    else stg_<table>."""
    return f"stg_{table}_lines" if table in LINES_VIEWED else f"stg_{table}"


def kept_sql(table: str, alias: str = "r") -> str:
    """SQL conditions on `alias` (a row of `table` as read) that its line did not lose to a
    later line with its run_id, nor its span to a later copy of the span."""
    out = []
    if table in RUN_TABLES or table == SCORED:
        out.append(f"""NOT EXISTS (SELECT 1 FROM staging.stg_superseded_lines l
                              WHERE l.run_id = {alias}.run_id
                                AND l.source_file = {alias}.source_file
                                AND l.source_line = {alias}.source_line)""")
    if table in ("llm_calls", SCORED):
        out.append(f"""NOT EXISTS (SELECT 1 FROM staging.stg_superseded_calls s
                           WHERE s.span_id = {alias}.span_id AND s.trace_id = {alias}.trace_id
                             AND s.source_file = {alias}.source_file
                             AND s.source_line = {alias}.source_line)""")
    if table in ("messages", "tool_calls", "thinking", "flags"):
        out.append(f"""({alias}.span_id IS NULL OR NOT EXISTS (
                           SELECT 1 FROM staging.stg_superseded_spans s
                           WHERE s.span_id = {alias}.span_id
                             AND s.source_file = {alias}.source_file
                             AND s.source_line = {alias}.source_line))""")
    return " AND ".join(out) or "true"


@dataclass(frozen=True)
class Window:
    """Some days of the lake: the staging views read only the files holding rows of
    `first`..`last` (by the files' day statistics) and only those days' rows."""

    first: date
    last: date
    files: dict[str, list[str]]
    """Lake table -> the files of its rows as written that may hold rows of those days."""
    columns: dict[str, set[str]]


def staging_views(with_superseded: bool = True) -> list[tuple[str, str]]:
    """The staging views built on the lake tables' own (in order, each DuckDB SQL): the lines
    that lose to a later line (unless stored), the copies of each span, the tables without
    the lines and span copies that lost (the spans with how many times each was delivered),
    and the runs that lost."""
    views = [("stg_superseded_lines", SUPERSEDED_LINES)] if with_superseded else []
    views += [("stg_span_copies", SPAN_COPIES), ("stg_superseded_spans", SUPERSEDED_SPANS),
              ("stg_superseded_calls", SUPERSEDED_CALLS)]
    views.append(("stg_spans", """SELECT r.*, coalesce(c.deliveries, 1) AS deliveries
        FROM staging.stg_spans_lines r
        LEFT JOIN staging.stg_span_copies c
          ON c.source_file = r.source_file AND c.source_line = r.source_line
         AND c.span_index = r.span_index
        WHERE coalesce(c.copy_rank, 1) = 1"""))
    for t in (*RUN_TABLES, "llm_calls", SCORED):
        views.append((f"stg_{t}", f"SELECT * FROM staging.stg_{t}_lines r WHERE {kept_sql(t)}"))
    views.append(("stg_run_keys", RUN_KEYS))
    views.append(("stg_superseded_runs", """SELECT * FROM staging.stg_runs_lines r
        WHERE EXISTS (SELECT 1 FROM staging.stg_superseded_lines l
                      WHERE l.run_id = r.run_id AND l.source_file = r.source_file
                        AND l.source_line = r.source_line)"""))
    return views


def prepare(con: duckdb.DuckDBPyConnection, lake: Lake, snapshot: dict[str, int],
            window: Window | None = None) -> None:
    """Schemas, a staging view per lake table (its files at the `snapshot` versions; with a
    `window`, only its days), flag_codes, model_aliases and model_prices."""
    prepare_tables(con, lake, snapshot, window)
    prepare_lookups(con, lake)


def prepare_tables(con: duckdb.DuckDBPyConnection, lake: Lake, snapshot: dict[str, int],
                   window: Window | None = None) -> None:
    """The schemas and the staging views of `prepare`. The superseded lines are read as the
    lake version stores them (SUPERSEDED), else computed."""
    if lake.remote:
        from transforms.objectstore import SECRET, reach, uses_s3fs

        if SECRET not in _secrets(con) and not uses_s3fs(con):
            reach(con)  # once per connection
    for schema in ("staging", "intermediate", "checks"):
        con.execute(f"CREATE SCHEMA {schema}")
    if window is None:
        lake.prefetch({stored(t): snapshot.get(stored(t), -1) for t in TABLES})
    for t in TABLES:
        v = snapshot.get(stored(t), -1)
        if window is None or t == "ingest_files":
            files = lake.file_uris(stored(t), v) if v >= 0 else []
            present = lake.columns(stored(t), v) if files else None
        else:
            files, present = window.files[t], window.columns[t]
        body = files_sql(files, t, present)
        if window is not None and t != "ingest_files":
            body = (f"SELECT * FROM ({body}) WHERE day BETWEEN DATE '{window.first}' "
                    f"AND DATE '{window.last}'")
        con.execute(f"CREATE VIEW staging.{lines_view(t)} AS {body}")
    # Every line keeps its rows in lake/_lines; the views show the winning line of each run_id.
    kept = snapshot.get(SUPERSEDED, -1)
    if kept >= 0:
        files = lake.file_uris(SUPERSEDED, kept)
        body = (f"SELECT * FROM read_parquet([{', '.join(sql_str(f) for f in files)}], "
                "hive_partitioning = false)") if files else _empty_superseded()
        con.execute(f"CREATE VIEW staging.stg_superseded_lines AS {body}")
    for name, sql in staging_views(with_superseded=kept < 0):
        con.execute(f"CREATE VIEW staging.{name} AS {sql}")
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


def _empty_superseded() -> str:
    return ("SELECT CAST(NULL AS VARCHAR) AS run_id, CAST(NULL AS DATE) AS day, "
            "CAST(NULL AS VARCHAR) AS source_file, CAST(NULL AS BIGINT) AS source_line, "
            "CAST(NULL AS DATE) AS win_day, CAST(NULL AS VARCHAR) AS win_file, "
            "CAST(NULL AS BIGINT) AS win_line WHERE false")


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


def run_sql(con: duckdb.DuckDBPyConnection, f: Path) -> None:
    try:
        con.execute(f.read_text())
    except duckdb.Error as e:
        raise WarehouseError(f"sql/{f.parent.name}/{f.name}: {e}") from e


def _secrets(con: duckdb.DuckDBPyConnection) -> set[str]:
    try:
        return {r[0] for r in con.execute("SELECT name FROM duckdb_secrets()").fetchall()}
    except duckdb.Error:
        return set()
