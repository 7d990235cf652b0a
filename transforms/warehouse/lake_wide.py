"""The derive's pass over the whole lake after the windows (transforms.warehouse.windows,
`after_windows`): the stored models of `-- scope: lake` outside staging, computed from the
weekly models as just stored (whether the run a span looks for exists anywhere in the lake,
however far from the span), and the weekly models that read them (lake/flags)."""

from pathlib import Path

import duckdb

from transforms.lake import WEEK, Lake, sql_str
from transforms.lake.commit import replace_partitions
from transforms.warehouse.builder import Source, build, needed
from transforms.warehouse.models import Model, models
from transforms.warehouse.sqlfiles import reads
from transforms.warehouse.stored import stored_sql
from transforms.warehouse.weeks import BY_BYTES, changed_rows, week_key, week_sql
from transforms.warehouse.windows import after_windows


def newest_stored(lake: Lake) -> Source:
    """The builder's source reading each stored model's newest version (just stored)."""

    def stored(m: Model) -> str | None:
        if m.stored is None:
            return None
        body = stored_sql(lake, m.stored, lake.newest_version(m.stored))
        assert body is not None, f"{m.stored} was just stored"
        return body

    return Source(stored)


def lake_wide(con: duckdb.DuckDBPyConnection, lake: Lake, before: dict[str, int],
              scratch: Path, full: bool) -> set[str]:
    """Compute the lake-wide models over the whole lake (`con`: staging views of every day)
    from the weekly models they read as just stored, store those that changed, and return the
    weeks whose rows changed."""
    everything = models()
    wide = [m for m in after_windows(everything) if m.lake_wide]
    inputs = [m for m in needed(wide, everything) if m not in wide and m.layer != "staging"]
    build(con, newest_stored(lake), inputs)
    changed: set[str] = set()
    for m in wide:
        assert m.stored is not None
        build(con, Source(), [m])
        con.execute(f"CREATE TABLE derive.{m.name} AS SELECT * FROM {m.relation}")
        old = stored_sql(lake, m.stored, before.get(m.stored, -1))
        key = week_key(con, f"derive.{m.name}")
        if old is not None:
            diff = changed_rows(old, f"SELECT * FROM derive.{m.name}")
            changed = {r[0] for r in con.execute(
                f"SELECT DISTINCT {week_sql(key)} FROM ({diff}) AS x").fetchall()} - {None}
        if full or old is None or changed:
            path = scratch / "out" / f"{m.name}.parquet"
            con.execute(f"COPY derive.{m.name} TO {sql_str(str(path))} "
                        "(FORMAT parquet, COMPRESSION zstd)")
            replace_partitions(lake, m.stored, path, None, path)
    return changed


def after_lake_wide(con: duckdb.DuckDBPyConnection, lake: Lake, scratch: Path,
                    weeks: list[str] | None) -> None:
    """The weekly models that read a lake-wide one (lake/flags), for `weeks` (None: all): each
    is the union of the stored models it reads (sql/marts/flags.sql), a row's week that of its
    run_day, else its day."""
    everything = models()
    stored = {m.name: m for m in everything if m.stored is not None}
    for m in after_windows(everything):
        if not m.weekly:
            continue
        assert m.stored is not None
        inputs = [stored[n] for n in sorted(reads([m.path]) & stored.keys())]
        build(con, newest_stored(lake), inputs)
        week = week_sql("coalesce(run_day, day)")
        con.execute(f"CREATE OR REPLACE VIEW main.{m.name}__rows AS " + " UNION ALL BY NAME ".join(
            f"SELECT * EXCLUDE (run_day), {week} AS week FROM {x.relation}" for x in inputs))
        out, schema = scratch / "out" / m.name, scratch / "out" / f"{m.name}.schema.parquet"
        con.execute(f"COPY (SELECT * EXCLUDE (week) FROM main.{m.name}__rows LIMIT 0) TO "
                    f"{sql_str(str(schema))} (FORMAT parquet)")
        where = "" if weeks is None else \
            f"WHERE week IN ({', '.join(sql_str(w) for w in weeks) or 'NULL'})"
        con.execute(f"COPY (SELECT * FROM main.{m.name}__rows {where}) TO {sql_str(str(out))} "
                    f"(FORMAT parquet, COMPRESSION zstd, PARTITION_BY ({WEEK}), {BY_BYTES}, "
                    "OVERWRITE_OR_IGNORE)")
        replace_partitions(lake, m.stored, out, weeks, schema)
