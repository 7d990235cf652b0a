"""The derived tables: what the views show, made from the rows as ingested, and stored as Delta
tables of the lake in the same commit sequence as those rows (transforms.warehouse.lake_version,
step 2).

- lake/<table> for runs, messages, tool_calls, thinking, metadata_kv, spans, llm_calls and
  flags: the rows the warehouse's view of that name shows (sql/marts/<table>.sql), so that any
  engine reading the lake counts what the warehouse counts; messages, tool_calls, thinking and
  metadata_kv show the staged files whose rows need nothing resolved as they are, and only
  their other rows are derived here (transforms.warehouse.linked);
- lake/_derived/<int_view>: each intermediate view (sql/intermediate) behind the other views:
  links between runs and spans, per-run totals, findings across tables;
- lake/_derived/superseded_lines and lake/_derived/int_span_far_flags: the two that need the
  whole lake (a repeated run_id, a span whose run is far away), a few rows each.

Every derived table but those two is partitioned by `week` (the Monday of the week of the day
its rows count toward) and rewritten a week at a time: a week's rows are computed from its days
and MARGIN_DAYS either side, so they are the same whatever wider window they are computed in.
A commit rewrites the weeks whose rows as ingested it changed (the data files it added or
removed, against the lake version readers saw), and those whose lines won or lost to a repeated
run_id; adjacent weeks are computed in one pass (GROUP_WEEKS at most). A change of the SQL, the
tool registry or the model tables (the `derived_from` digest the manifest commit records)
rewrites every week.
"""

import hashlib
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from transforms import db, memory
from transforms.contracts.schemas import TABLES
from transforms.lake import (
    AS_READ,
    DERIVED,
    GRADING,
    MANIFEST,
    MODEL_TABLES,
    REGISTRY,
    WEEK,
    Lake,
    claim_scratch,
    clear_scratch,
    sql_str,
    stored,
)
from transforms.lake.commit import replace_partitions
from transforms.lake.core import DataFile
from transforms.warehouse.linked import (
    LINKED,
    commit_linked,
    lines_files,
    linkable,
    losers,
    relinked_weeks,
    restore,
    window_view,
)
from transforms.warehouse.sqlfiles import reads, sql_files
from transforms.warehouse.staging import (
    SUPERSEDED,
    Window,
    prepare,
    prepare_lookups,
    prepare_tables,
    run_sql,
)

NEIGHBOUR_DAYS = 1
"""How far a link reaches across midnight (the within_reach macro in sql/macros): a span to
its run, a span's LLM calls and findings to its run, a span to its parent."""

MARGIN_DAYS = 2 * NEIGHBOUR_DAYS
"""The days either side of a week its derived rows are computed from: a run's row reads its
spans within a day of it, and whether a span is the run's reads the runs within a day of the
span."""

RUN_KEYS_FILE = "run_keys.parquet"
"""In the scratch folder: staging.stg_run_keys over the whole lake, for every window."""

GROUP_WEEKS = 8
"""At most this many adjacent weeks computed in one pass (a backfill's weeks)."""

LAKE_WIDE = ("int_span_far_flags",)
"""Intermediate views a week cannot compute alone: whether the run a span looks for exists
anywhere in the lake, however far from the span. Computed over the whole lake from the weeks'
int_span_run_misses (a few rows) and the runs' ids and days (one narrow scan)."""

PUBLIC = AS_READ
"""The lake tables stored as the views show them, at lake/<table> (sql/marts/<table>.sql)."""

ROW_GROUP_BYTES = "16MB"
"""What a row group of a derived table's files holds at most, uncompressed. A partitioned copy
buffers a row group per open week: sized by a number of rows (DuckDB's default), its memory
grew with the rows' width, and the messages of a night of long transcripts did not fit in
DuckDB's share of the memory (docs/performance.md). Sized by bytes, a copy holds at most this
much a week and a thread, whatever the rows hold. DuckDB sizes row groups by bytes only where
it need not keep the rows' order, which no derived table needs (the views order what they
show)."""

WINDOW_INPUTS = ("span_copies", "superseded_spans", "superseded_calls", "runs", "spans",
                 "llm_calls", "tool_calls", "flags")
"""The staging tables the intermediate views read most (and the copies of each span, which
several of them read): read once per window, in this order."""

DIGEST_LAYERS = ("macros", "intermediate", "marts")

LAYOUT_VERSION = "3"
"""Part of the `derived_from` digest: a runlake that stores derived rows otherwise changes it."""


BY_BYTES = f"ROW_GROUP_SIZE_BYTES '{ROW_GROUP_BYTES}'"
"""The COPY option of a partitioned copy: row groups of at most ROW_GROUP_BYTES (and at most
DuckDB's default number of rows, for narrow rows)."""


def derive_connection(scratch: Path) -> duckdb.DuckDBPyConnection:
    """A connection of the derive: DuckDB's share of the ingest's memory (transforms.memory),
    spilling the rest into the scratch folder, the rows' order not kept (ROW_GROUP_BYTES)."""
    return db.connect(memory_limit=memory.budget().duckdb_limit,
                      temp_directory=str(scratch / "spill"), preserve_insertion_order=False)


class Stage:
    """What the derive is doing now, named in the one line of an ingest that ran out of
    memory (transforms.memory.stopped)."""

    def __init__(self) -> None:
        self.now = "reading the lake's rows for the derive"

    @contextmanager
    def doing(self, what: str) -> Iterator[None]:
        before, self.now = self.now, what
        yield
        self.now = before


def derived(view: str) -> str:
    """The lake table of an intermediate view."""
    return f"{DERIVED}/{view}"


def week_of(day: date) -> date:
    return day - timedelta(days=day.weekday())


def digest(lake: Lake) -> str:
    """What the derived tables are computed with besides the rows: the SQL, the tool registry,
    the model tables and the deciding evaluations. A lake version records it as
    `derived_from`."""
    h = hashlib.sha256(LAYOUT_VERSION.encode())
    for f in sql_files():
        if f.parent.name in DIGEST_LAYERS:
            h.update(f"{f.parent.name}/{f.name}\n".encode())
            h.update(f.read_bytes())
    for extra in (f"{REGISTRY}/tools.parquet", MODEL_TABLES, GRADING):
        try:
            h.update(lake.store.read_bytes(*extra.split("/")))
        except FileNotFoundError:
            h.update(b"-")
    return h.hexdigest()


def derive(lake: Lake, before: dict[str, int]) -> dict[str, Any]:
    """Step 2 of a lake version (transforms.warehouse.lake_version), under the commit lock:
    rewrite the derived tables for what the written tables changed since the lake version
    `before` (the versions readers saw). Returns what the manifest commit records:
    `derived_from` and the weeks rewritten."""
    scratch = claim_scratch(lake.where.scratch / f"derive-{uuid.uuid4().hex}")
    stage = Stage()
    try:
        return _derive(lake, before, scratch, lake.versions(), stage)
    except duckdb.Error as e:
        if memory.out_of_memory(e):
            raise memory.stopped(stage.now, e, memory.budget()) from None
        raise
    finally:
        clear_scratch(scratch)


def _derive(lake: Lake, before: dict[str, int], scratch: Path,
            now: dict[str, int], stage: Stage) -> dict[str, Any]:
    """Derive over the written tables at `now`."""
    key = digest(lake)
    previous = lake.meta(before[MANIFEST]) if before.get(MANIFEST, -1) >= 0 else {}
    # Every week when the SQL or the lookups changed, when a derived table is not there (a
    # first commit, or one a repair moved aside), or when a written table has no version
    # readers saw (a repair moved it aside and the commit made it anew: its files before
    # cannot be compared with its files now).
    expected = [*(derived(f.stem) for f in _intermediate()), *PUBLIC, SUPERSEDED]
    full = previous.get("derived_from") != key or any(
        before.get(t, -1) < 0 or now.get(t, -1) < 0 for t in expected) or any(
        before.get(stored(t), -1) < 0 <= now.get(stored(t), -1) for t in TABLES)
    lake.prefetch({stored(t): now.get(stored(t), -1) for t in TABLES})
    files = {t: lake.file_days(stored(t), now.get(stored(t), -1)) for t in TABLES}
    columns = {t: lake.columns(stored(t), now.get(stored(t), -1)) for t in TABLES}
    written = {t: v for t, v in now.items() if t != SUPERSEDED}
    out = scratch / "out"
    out.mkdir(parents=True)
    superseded = scratch / "superseded_lines.parquet"
    con = derive_connection(scratch)
    try:
        prepare(con, lake, written)
        con.execute("CREATE SCHEMA derive")
        con.execute("CREATE TABLE derive.superseded AS SELECT * FROM staging.stg_superseded_lines")
        con.execute("CREATE OR REPLACE VIEW staging.stg_superseded_lines AS "
                    "SELECT * FROM derive.superseded")
        con.execute(f"COPY derive.superseded TO {sql_str(str(superseded))} "
                    "(FORMAT parquet, COMPRESSION zstd)")
        # The runs' names over the whole lake, which every window reads (RUN_KEYS).
        con.execute(f"COPY (SELECT * FROM staging.stg_run_keys) TO "
                    f"{sql_str(str(scratch / RUN_KEYS_FILE))} (FORMAT parquet, COMPRESSION zstd)")
        changed_lines = _superseded_days(con, lake, before)
        lost = losers(con, "derive.superseded")
        staged = {t: lines_files(lake, t, now.get(stored(t), -1)) for t in LINKED}
        computed = {t: {f.url for f in fs if not linkable(f, lost)}
                    for t, fs in staged.items()}
        weeks: set[date | None]
        if full:
            weeks = _all_weeks(files)
        else:
            weeks = _touched_weeks(lake, before, files) | {
                week_of(d + timedelta(days=k)) for d in changed_lines
                for k in range(-MARGIN_DAYS, MARGIN_DAYS + 1)}
            # Weeks whose files shown as written change: their other rows derived again.
            weeks |= {date.fromisoformat(w) for t in LINKED
                      for w in relinked_weeks(lake, t, staged[t], lost)}
            # Weeks a derive that died before its manifest commit rewrote: readers never saw
            # them, and what they hold may no longer follow from the rows.
            weeks |= _rewritten_since(lake, before, now, [
                *(derived(f.stem) for f in _intermediate() if f.stem not in LAKE_WIDE),
                *PUBLIC])
            if None in weeks:  # a data file without day statistics: every week
                full, weeks = True, _all_weeks(files)
        stale = sorted(w for w in weeks if w is not None)
        chosen = None if full else [w.isoformat() for w in stale]
        if full or stale:
            _compute(lake, scratch, written, superseded, stale, files, columns, stage, computed)
            for f in _intermediate():
                if f.stem not in LAKE_WIDE:
                    replace_partitions(lake, derived(f.stem), out / f.stem, chosen,
                                       out / f"{f.stem}.schema.parquet")
            for t in PUBLIC:
                if t in LINKED:
                    commit_linked(lake, t, staged[t], lost, chosen, out / t,
                                  out / f"{t}.schema.parquet")
                elif t != "flags":
                    replace_partitions(lake, t, out / t, chosen, out / f"{t}.schema.parquet")
        with stage.doing("deriving the findings that read the whole lake"):
            far_weeks = _lake_wide(con, lake, before, scratch, full)
        if full or stale or far_weeks:
            with stage.doing("deriving lake/flags"):
                _public_flags(con, lake, scratch,
                              None if chosen is None else sorted(set(chosen) | far_weeks))
        if full or changed_lines:
            replace_partitions(lake, SUPERSEDED, superseded, None, superseded)
    finally:
        con.close()
    return {"derived_from": key, "weeks_derived": "all" if full else len(stale)}


def _intermediate() -> list[Path]:
    return [f for f in sql_files() if f.parent.name == "intermediate"]


def _all_weeks(files: dict[str, list[DataFile]]) -> set[date | None]:
    out: set[date | None] = set()
    for t in PUBLIC:
        for f in files[t]:
            out |= _weeks_between(f.first, f.last, 0)
    return out


def _weeks_between(a: date | None, b: date | None, margin: int) -> set[date | None]:
    """The weeks of the days from a - margin to b + margin (None when a day is not known)."""
    if a is None or b is None:
        return {None}
    out: set[date | None] = set()
    d = week_of(a - timedelta(days=margin))
    while d <= b + timedelta(days=margin):
        out.add(d)
        d += timedelta(days=7)
    return out


def _touched_weeks(lake: Lake, before: dict[str, int],
                   files: dict[str, list[DataFile]]) -> set[date | None]:
    """The weeks whose derived rows may differ from the lake version `before`: those within
    MARGIN_DAYS of the days of every data file added or removed since (by the files' day
    statistics; `files`: each table's data files now)."""
    out: set[date | None] = set()
    for t in PUBLIC:
        name = stored(t)
        old = {f.path: f for f in lake.file_days(name, before.get(name, -1))}
        new = {f.path: f for f in files[t]}
        for path in old.keys() ^ new.keys():
            f = old.get(path) or new[path]
            out |= _weeks_between(f.first, f.last, MARGIN_DAYS)
    return out


def _rewritten_since(lake: Lake, before: dict[str, int], now: dict[str, int],
                     tables: list[str]) -> set[date | None]:
    """The weeks of the derived `tables` whose files differ between the versions readers saw
    (`before`) and now: none, unless a commit died after its derive and before its manifest
    commit (None: a file of no week)."""
    out: set[date | None] = set()
    for t in tables:
        old, new = before.get(t, -1), now.get(t, -1)
        if new < 0 or old < 0 or old == new:
            continue
        files = [_weeks_of(lake, t, v) for v in (old, new)]
        for path in files[0].keys() ^ files[1].keys():
            week = files[0].get(path) or files[1].get(path)
            out.add(date.fromisoformat(week) if week else None)
    return out


def _weeks_of(lake: Lake, table: str, version: int) -> dict[str, str | None]:
    """path -> `week` partition of each data file of a derived table at `version`."""
    actions = pa.table(lake.open(table, version).get_add_actions(flatten=True))
    paths = actions.column("path").to_pylist()
    column = f"partition.{WEEK}"
    weeks = actions.column(column).to_pylist() if column in actions.column_names \
        else [None] * len(paths)
    return dict(zip(paths, weeks, strict=True))


def _superseded_days(con: duckdb.DuckDBPyConnection, lake: Lake,
                     before: dict[str, int]) -> set[date]:
    """The days of the lines that won or lost to a repeated run_id since the lake version
    `before` (derive.superseded: now)."""
    version = before.get(SUPERSEDED, -1)
    files = lake.file_uris(SUPERSEDED, version) if version >= 0 else []
    if files:
        old = (f"SELECT * FROM read_parquet([{', '.join(sql_str(f) for f in files)}], "
               "hive_partitioning = false)")
    else:
        old = "SELECT * FROM derive.superseded WHERE false"
    rows = con.execute(f"""
        WITH changed AS ({_changed_rows(old, "SELECT * FROM derive.superseded")})
        SELECT DISTINCT d FROM changed, unnest([day, win_day]) AS t(d)
        WHERE d IS NOT NULL""").fetchall()
    return {r[0] for r in rows}


def _changed_rows(old: str, new: str) -> str:
    """SQL of the rows one of two queries (of the same columns) gives and the other not."""
    return f"""WITH old AS ({old}), new AS ({new})
        (SELECT * FROM old EXCEPT SELECT * FROM new)
        UNION ALL (SELECT * FROM new EXCEPT SELECT * FROM old)"""


def _groups(weeks: list[date]) -> list[list[date]]:
    """Adjacent weeks, at most GROUP_WEEKS together, to compute in one pass."""
    groups: list[list[date]] = []
    for w in weeks:
        if groups and len(groups[-1]) < GROUP_WEEKS and w - groups[-1][-1] == timedelta(days=7):
            groups[-1].append(w)
        else:
            groups.append([w])
    return groups


def _week_key(con: duckdb.DuckDBPyConnection, relation: str) -> str | None:
    """The day a derived row counts toward, as SQL over `relation`'s columns: the day of its
    run (run_day), else its own day, else its run's; None for a view with none of these (a
    lookup of names), stored whole in every week and read back distinct."""
    cols = {r[0] for r in con.execute(f"DESCRIBE {relation}").fetchall()}
    if "run_day" in cols:
        return "run_day" if "day" not in cols else "coalesce(run_day, day)"
    if "day" in cols:
        return "day"
    if "run_id" in cols:
        return "(SELECT min(r.day) FROM staging.stg_runs AS r WHERE r.run_id = x.run_id)"
    return None


def week_sql(key: str | None) -> str:
    """The `week` partition value of a row whose day is `key` (SQL)."""
    return f"strftime(date_trunc('week', {key}), '%Y-%m-%d')"


def _compute(lake: Lake, scratch: Path, written: dict[str, int], superseded: Path,
             weeks: list[date], files: dict[str, list[DataFile]],
             columns: dict[str, set[str]], stage: Stage, computed: dict[str, set[str]]) -> None:
    """Compute the intermediate views and the public tables for `weeks`, a group of adjacent
    weeks in one pass, into scratch/out/<name>/week=<week>/ (and each one's schema beside,
    also when no week has rows). A LINKED table's rows are computed from its staged files in
    `computed` only: the others are linked (transforms.warehouse.linked)."""
    con = derive_connection(scratch)
    out = scratch / "out"
    try:
        prepare_lookups(con, lake)
        macros = [f for f in sql_files() if f.parent.name == "macros"]
        for f in macros:
            run_sql(con, f)
        # An empty lake still gets every table, with its columns.
        for i, group in enumerate(_groups(weeks) or [[]]):
            first = (group[0] if group else date(1970, 1, 5)) - timedelta(days=MARGIN_DAYS)
            last = (group[-1] if group else date(1970, 1, 5)) + timedelta(days=6 + MARGIN_DAYS)
            window = Window(first, last, {
                t: [f.path for f in fs if f.first is None or f.last is None
                    or (f.first <= last and f.last >= first)]
                for t, fs in files.items()}, columns)
            for schema in ("staging", "intermediate", "checks"):
                con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            prepare_tables(con, lake, written, window)
            con.execute("CREATE OR REPLACE VIEW staging.stg_superseded_lines AS SELECT * FROM "
                        f"read_parquet({sql_str(str(superseded))}, hive_partitioning = false)")
            con.execute("CREATE OR REPLACE VIEW staging.stg_run_keys AS SELECT * FROM "
                        f"read_parquet({sql_str(str(scratch / RUN_KEYS_FILE))}, "
                        "hive_partitioning = false)")
            for t in WINDOW_INPUTS:
                con.execute(f"CREATE TABLE staging.stg_{t}__window AS "
                            f"SELECT * FROM staging.stg_{t}")
                con.execute(f"CREATE OR REPLACE VIEW staging.stg_{t} AS "
                            f"SELECT * FROM staging.stg_{t}__window")
            names = [f"'{w.isoformat()}'" for w in group] or ["NULL"]
            for f in sql_files():
                public = f.parent.name == "marts" and f.stem in PUBLIC and f.stem != "flags"
                helper = f.parent.name == "marts" and f.stem == "with_span_run"
                if not (public or helper or (f.parent.name == "intermediate"
                                             and f.stem not in LAKE_WIDE)):
                    continue
                run_sql(con, f)
                if helper:
                    continue
                relation = f"intermediate.{f.stem}" if f.parent.name == "intermediate" \
                    else f"main.{f.stem}"
                weeks_text = f"{first + timedelta(days=MARGIN_DAYS)} to " \
                    f"{last - timedelta(days=MARGIN_DAYS)}"
                table = derived(f.stem) if f.parent.name == "intermediate" else f.stem
                with stage.doing(f"deriving lake/{table} for the weeks of {weeks_text}"):
                    if public and f.stem in LINKED:
                        window_view(con, f.stem, sorted(
                            set(window.files[f.stem]) & computed[f.stem]),
                            columns[f.stem], first, last)
                        try:
                            _write_weeks(con, relation, f.stem, out, names, i)
                        finally:
                            restore(con, f.stem)
                        continue
                    if f.parent.name == "intermediate":
                        # Later views read this one whole (the margin days included).
                        con.execute(f"CREATE TABLE {relation}__window AS "
                                    f"SELECT * FROM {relation}")
                        con.execute(f"CREATE OR REPLACE VIEW {relation} AS "
                                    f"SELECT * FROM {relation}__window")
                    _write_weeks(con, relation, f.stem, out, names, i)
    finally:
        con.close()


def _write_weeks(con: duckdb.DuckDBPyConnection, relation: str, name: str, out: Path,
                 weeks: list[str], group: int) -> None:
    key = _week_key(con, relation)
    if group == 0:
        con.execute(f"COPY (SELECT * FROM {relation} LIMIT 0) TO "
                    f"{sql_str(str(out / f'{name}.schema.parquet'))} (FORMAT parquet)")
    if key is None:  # a lookup: whole in every week
        rows = (f"SELECT x.*, w.week FROM {relation} AS x, "
                f"(SELECT unnest([{', '.join(weeks)}]) AS week) AS w")
    else:
        rows = f"SELECT x.*, {week_sql(key)} AS week FROM {relation} AS x"
    con.execute(f"COPY (SELECT * FROM ({rows}) WHERE week IN ({', '.join(weeks)})) TO "
                f"{sql_str(str(out / name))} (FORMAT parquet, COMPRESSION zstd, "
                f"PARTITION_BY ({WEEK}), {BY_BYTES}, OVERWRITE_OR_IGNORE, "
                f"FILENAME_PATTERN 'g{group:04d}-{{i}}')")


def stored_sql(lake: Lake, table: str, version: int, distinct: bool = False) -> str | None:
    """SQL reading a derived table at `version` (None when that lake version has none)."""
    if version < 0:
        return None
    files = lake.file_uris(table, version)
    if not files:
        cols = ", ".join(f'CAST(NULL AS {t}) AS "{n}"'
                         for n, t in column_types(lake, table, version) if n != WEEK)
        return f"SELECT {cols} WHERE false"
    listing = ", ".join(sql_str(f) for f in files)
    return (f"SELECT {'DISTINCT ' if distinct else ''}* FROM read_parquet([{listing}], "
            "union_by_name = true, hive_partitioning = false)")


def is_lookup(lake: Lake, table: str, version: int) -> bool:
    """A derived table with no day to count its rows toward (stored whole in every week)."""
    return not {"run_day", "day", "run_id"} & lake.columns(table, version)


def _lake_wide(con: duckdb.DuckDBPyConnection, lake: Lake, before: dict[str, int],
               scratch: Path, full: bool) -> set[str]:
    """Compute the LAKE_WIDE views over the whole lake (`con`: staging views of every day)
    from the intermediate views they read as just stored, store those that changed, and
    return the weeks whose rows changed."""
    files = sql_files()
    wide = [f for f in files if f.parent.name == "intermediate" and f.stem in LAKE_WIDE]
    read = reads(wide)
    macros = {f.stem: f for f in files if f.parent.name == "macros"}
    calls = {m for m in read if m in macros}
    while more := reads([macros[m] for m in calls]) & macros.keys() - calls:
        calls |= more  # the macros those macros call
    for f in files:
        if f.parent.name == "macros" and f.stem in calls:
            run_sql(con, f)
        elif f.parent.name == "intermediate" and f.stem in read and f.stem not in LAKE_WIDE:
            table = derived(f.stem)
            body = stored_sql(lake, table, lake.log_version(table))
            assert body is not None, f"{table} was just stored"
            con.execute(f"CREATE OR REPLACE VIEW intermediate.{f.stem} AS {body}")
    changed: set[str] = set()
    for f in wide:
        run_sql(con, f)
        table = derived(f.stem)
        con.execute(f"CREATE TABLE derive.{f.stem} AS SELECT * FROM intermediate.{f.stem}")
        old = stored_sql(lake, table, before.get(table, -1))
        key = _week_key(con, f"derive.{f.stem}")
        if old is not None:
            diff = _changed_rows(old, f"SELECT * FROM derive.{f.stem}")
            changed = {r[0] for r in con.execute(
                f"SELECT DISTINCT {week_sql(key)} FROM ({diff}) AS x").fetchall()} - {None}
        if full or old is None or changed:
            path = scratch / "out" / f"{f.stem}.parquet"
            con.execute(f"COPY derive.{f.stem} TO {sql_str(str(path))} "
                        "(FORMAT parquet, COMPRESSION zstd)")
            replace_partitions(lake, table, path, None, path)
    return changed


def _public_flags(con: duckdb.DuckDBPyConnection, lake: Lake, scratch: Path,
                  weeks: list[str] | None) -> None:
    """lake/flags for `weeks` (None: all): the findings of int_flags as stored and those of the
    LAKE_WIDE views, as sql/marts/flags.sql shows them."""
    out = scratch / "out" / "flags"
    for view in ("int_flags", *LAKE_WIDE):
        body = stored_sql(lake, derived(view), lake.log_version(derived(view)))
        assert body is not None, f"{view} was just stored"
        con.execute(f"CREATE OR REPLACE VIEW intermediate.{view} AS {body}")
    con.execute("CREATE OR REPLACE VIEW main.flags__rows AS "
                f"SELECT * EXCLUDE (run_day), {week_sql('coalesce(run_day, day)')} AS week "
                "FROM intermediate.int_flags UNION ALL BY NAME "
                f"SELECT * EXCLUDE (run_day), {week_sql('coalesce(run_day, day)')} AS week "
                f"FROM intermediate.{LAKE_WIDE[0]}")
    con.execute(f"COPY (SELECT * EXCLUDE (week) FROM main.flags__rows LIMIT 0) TO "
                f"{sql_str(str(scratch / 'out' / 'flags.schema.parquet'))} (FORMAT parquet)")
    where = "" if weeks is None else \
        f"WHERE week IN ({', '.join(sql_str(w) for w in weeks) or 'NULL'})"
    con.execute(f"COPY (SELECT * FROM main.flags__rows {where}) TO {sql_str(str(out))} "
                f"(FORMAT parquet, COMPRESSION zstd, PARTITION_BY ({WEEK}), {BY_BYTES}, "
                "OVERWRITE_OR_IGNORE)")
    replace_partitions(lake, "flags", out, weeks, scratch / "out" / "flags.schema.parquet")


def column_types(lake: Lake, table: str, version: int) -> list[tuple[str, str]]:
    """The columns of a lake table at `version` with their DuckDB types."""
    schema = pa.schema(lake.open(table, version).schema().to_arrow())
    rel = _types_connection().from_arrow(schema.empty_table())
    return [(n, str(t)) for n, t in zip(rel.columns, rel.types, strict=True)]


_TYPES: list[duckdb.DuckDBPyConnection] = []


def _types_connection() -> duckdb.DuckDBPyConnection:
    """One connection per process for asking DuckDB the type of an Arrow type."""
    if not _TYPES:
        _TYPES.append(duckdb.connect())
    return _TYPES[0]
