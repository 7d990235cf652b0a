"""`runlake views --dialect spark|trino`: the script that makes runlake's warehouse in
another engine over the lake's Delta tables (transforms.warehouse.dialects translates the SQL):
a view per lake table read at the warehouse's version, the lookups as VALUES, then the models
as the one builder plans them (transforms.warehouse.builder): the `table` models as tables,
the others as views."""

import datetime
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import duckdb
import sqlglot
from sqlglot import exp

from transforms.contracts.schemas import TABLES
from transforms.errors import InputError
from transforms.lake import MANIFEST, Lake, lines_path, sql_str
from transforms.lake.store import locate
from transforms.warehouse.builder import IN_MEMORY, Source, plan
from transforms.warehouse.dialects import DIALECTS, macros, relations, translate_query
from transforms.warehouse.models import models
from transforms.warehouse.sqlfiles import SQL_DIR
from transforms.warehouse.staging import lines_view

LOOKUPS = ("flag_codes", "model_aliases", "model_prices", "deciding_evaluations")
"""Lookup tables of the warehouse, inlined as VALUES."""
DEFAULT_SCHEMA = {"spark": "runlake", "trino": "delta.runlake"}
ENGINE = {"spark": "Spark SQL", "trino": "Trino"}


@dataclass(frozen=True)
class Naming:
    """Where the translated objects go: a schema (`catalog.schema` on Trino) of the target
    engine's catalog."""

    dialect: str
    schema: str

    def name(self, table: exp.Table | str) -> str:
        bare = table if isinstance(table, str) else table.name
        return f"{self.schema}.{bare}"

    def view(self, name: str, body: str) -> str:
        return f"CREATE OR REPLACE VIEW {self.name(name)} AS {body}"

    def table(self, name: str, body: str) -> list[str]:
        """A table computed once from `body` (dropped and made again: REPLACE TABLE AS is
        not open to every catalog's tables)."""
        return [f"DROP TABLE IF EXISTS {self.name(name)}",
                f"CREATE TABLE {self.name(name)} AS {body}"]


def rename(tree: exp.Expr, naming: Naming) -> exp.Expr:
    """Lake and warehouse names (staging.stg_runs, intermediate.int_flags, runs) as views of
    the target schema."""

    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}

    def fix(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier) \
                and not (node.name in ctes and not node.db):
            renamed = exp.to_table(naming.name(node.name), dialect=naming.dialect)
            renamed.set("alias", exp.TableAlias(this=exp.to_identifier(node.alias
                                                                       or node.name)))
            return renamed
        return node

    return tree.transform(fix)


def _literal(value: object) -> exp.Expr:
    if value is None:
        return exp.null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int | float):
        return exp.Literal.number(value)
    if isinstance(value, datetime.date):
        return exp.cast(exp.Literal.string(value.isoformat()), "DATE")
    return exp.Literal.string(str(value))


def values_sql(columns: dict[str, str], rows: Iterable[tuple[object, ...]],
               dialect: str) -> str:
    """A typed relation of literal rows (typed nulls and no rows when empty)."""
    rows = list(rows)
    casts = [exp.alias_(exp.cast(exp.column(c), exp.DataType.build(t, dialect="duckdb")), c)
             for c, t in columns.items()]
    if not rows:
        empty = exp.select(*[exp.alias_(exp.cast(exp.null(), exp.DataType.build(
            t, dialect="duckdb")), c) for c, t in columns.items()]).where(exp.false())
        return empty.sql(dialect)
    values = exp.values([exp.tuple_(*[_literal(v) for v in r]) for r in rows], alias="t",
                        columns=list(columns))
    return exp.select(*casts).from_(values).sql(dialect)


def translate(con: duckdb.DuckDBPyConnection, naming: Naming, sources: dict[str, str],
              root: Path = SQL_DIR) -> list[str]:
    """The statements that make runlake's warehouse in `naming.dialect`, in order: a view per
    lake table (`sources[view]`: SQL of the target engine reading it), the lookups, then
    every model of sql/ but the macros, as the builder plans them (transforms.warehouse.builder):
    the `table` models (the intermediate layer, the lines that lost) as tables, the others as
    views. `con` is a DuckDB warehouse: the
    columns of each relation and the lookups' rows come from it."""
    dialect = naming.dialect
    if dialect not in DIALECTS:
        raise InputError(f"unknown dialect {dialect!r}: choose one of {', '.join(DIALECTS)}")
    schema = relations(con)
    found = macros(dialect, root)

    def sql(tree: exp.Expr) -> str:
        return rename(translate_query(tree, found, schema, dialect), naming).sql(dialect)

    out = [naming.view(name, source) for name, source in sources.items()]
    for table in LOOKUPS:
        cols = schema["main"][table]
        rows = con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
        if table == "model_aliases":
            # DuckDB's regexp_replace names groups \1; Java's (Spark, Trino) $1.
            at = list(cols).index("model")
            rows = [tuple(_java_groups(v) if i == at and r[0] == "pattern" else v
                          for i, v in enumerate(r)) for r in rows]
        out.append(naming.view(table, values_sql(cols, rows, dialect)))
    rows = con.execute("SELECT * FROM staging.stg_tool_registry ORDER BY ALL").fetchall()
    out.append(naming.view("stg_tool_registry", values_sql(
        schema["staging"]["stg_tool_registry"], rows, dialect)))
    # Every model through the builder's plan: a derived `table` model computed once as a table
    # (as runlake stores them under lake/_derived: views stacked this deep are more than
    # Spark's planner handles), the others views; macros are inlined. The staging models stay
    # views, as every script has made them: a schema an earlier script made holds them as
    # views, which the DROP TABLE before a table's CREATE would refuse.
    chosen = [m for m in models(root) if m.materialized != "macro"]
    for step in plan(Source(once=IN_MEMORY), chosen):
        for stmt in sqlglot.parse(step.model.path.read_text(), read="duckdb"):
            if isinstance(stmt, exp.Create) and stmt.args.get("kind") == "VIEW":
                body = sql(stmt.expression)
                if step.once and step.model.layer != "staging":
                    out += naming.table(stmt.this.name, body)
                else:
                    out.append(naming.view(stmt.this.name, body))
    return out


def _java_groups(replacement: object) -> object:
    """A regexp_replace replacement with DuckDB's group references (\\1) as Java's ($1)."""
    return re.sub(r"\\(\d)", r"$\1", replacement) if isinstance(replacement, str) \
        else replacement


def lake_sources(home: Path | str, naming: Naming,
                 schema: dict[str, dict[str, dict[str, str]]]) -> tuple[dict[str, str], list[str]]:
    """For each lake table, the target engine's SQL reading it at the lake version the
    warehouse shows (Delta time travel), with the staging view's columns; and the statements
    to run once beforehand (Trino: registering each Delta table with the connector)."""
    lake = Lake(home)
    versions = lake.tables_at()
    sources: dict[str, str] = {}
    once: list[str] = []
    catalog = naming.schema.split(".")[0] if "." in naming.schema else "delta"
    bare_schema = naming.schema.split(".")[-1]
    if any(ord(ch) < 32 for ch in lake.uri("")):
        raise InputError(f"{lake.uri('')!r}: a lake path with control characters cannot be "
                         "named in a SQL script")
    for t in TABLES:
        view = lines_view(t)
        cols = schema["staging"][view]
        v = versions.get(lines_path(t), -1)
        if v < 0:
            sources[view] = values_sql(cols, [], naming.dialect)
            continue
        listing = ", ".join(cols)
        if naming.dialect == "spark":
            quoted = lake.uri(lines_path(t)).replace("`", "``")
            sources[view] = (f"SELECT {listing} FROM delta.`{quoted}` "
                             f"VERSION AS OF {v}")
        else:
            sources[view] = (f"SELECT {listing} FROM {naming.name('lake_' + t)} "
                             f"FOR VERSION AS OF {v}")
            once.append(f"CALL {catalog}.system.register_table(schema_name => "
                        f"{sql_str(bare_schema)}, table_name => {sql_str('lake_' + t)}, "
                        f"table_location => {sql_str(lake.uri(lines_path(t)))})")
    return sources, once


def script(home: Path | str, dialect: str, schema: str | None = None) -> str:
    """`runlake views --dialect`: the whole script, with a header saying how to run it."""
    from transforms import warehouse

    naming = Naming(dialect, schema or DEFAULT_SCHEMA[dialect])
    con = warehouse.connect(home)
    try:
        sources, once = lake_sources(home, naming, relations(con))
        statements = translate(con, naming, sources)
    finally:
        con.close()
    where = locate(home).name.encode("unicode_escape").decode()
    lines = [f"-- runlake warehouse for {ENGINE[dialect]}, from {where} "
             f"(lake version {Lake(home).tables_at().get(MANIFEST, 0)}).",
             "-- Lake tables are read at the versions this warehouse shows; run the script "
             "again after each ingest.",
             "-- The int_* tables are computed when the script runs; v_regressions compares "
             "the latest day with the 7 days before it."]
    if dialect == "spark":
        lines.append("-- Needs Delta Lake on Spark (delta-spark, or Databricks).")
        lines.append(f"CREATE SCHEMA IF NOT EXISTS {naming.schema};")
    else:
        lines.append("-- Needs the Delta Lake connector with "
                     "delta.register-table-procedure.enabled=true; register the lake tables "
                     "once:")
        lines += [f"-- {c};" for c in once]
        lines.append(f"CREATE SCHEMA IF NOT EXISTS {naming.schema};")
    return "\n".join(lines) + "\n\n" + ";\n\n".join(statements) + ";\n"

