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
- the models of `-- scope: lake` (the lines a later line replaced, under
  lake/_derived/superseded_lines; the spans whose run is far away): those that need the whole
  lake, a few rows each.

Which model is stored where, and how, each SQL file's header declares
(transforms.warehouse.models): `-- stored:` names the table, `-- partition: week` a table
partitioned by `week` (the Monday of the week of the day its rows count toward) and rewritten a
week at a time (transforms.warehouse.windows): a week's rows are computed from its days and
MARGIN_DAYS either side, so they are the same whatever wider window they are computed in.
A commit rewrites the weeks whose rows as ingested it changed (the data files it added or
removed, against the lake version readers saw), and those whose lines won or lost to a repeated
run_id; adjacent weeks are computed in one pass (GROUP_WEEKS at most). A change of the SQL, the
tool registry or the model tables (the `derived_from` digest the manifest commit records)
rewrites every week.
"""

import hashlib
import uuid
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb

from transforms import db, memory
from transforms.contracts.schemas import TABLES
from transforms.lake import (
    GRADING,
    MANIFEST,
    MODEL_TABLES,
    REGISTRY,
    Lake,
    claim_scratch,
    clear_scratch,
    lines_path,
    parquet_sql,
    sql_str,
)
from transforms.lake.commit import replace_partitions
from transforms.warehouse.builder import Source, build
from transforms.warehouse.lake_wide import after_lake_wide, lake_wide
from transforms.warehouse.linked import (
    LINKED,
    commit_linked,
    lines_files,
    linkable,
    losers,
    relinked_weeks,
)
from transforms.warehouse.models import by_name, models, stored_models
from transforms.warehouse.staging import prepare
from transforms.warehouse.weeks import (
    GROUP_WEEKS,
    MARGIN_DAYS,
    NEIGHBOUR_DAYS,
    ROW_GROUP_BYTES,
    all_weeks,
    changed_rows,
    rewritten_since,
    touched_weeks,
    week_of,
)
from transforms.warehouse.windows import Stage, before_windows, in_windows, scratch_file
from transforms.warehouse.windows import compute as _compute

__all__ = ["GROUP_WEEKS", "NEIGHBOUR_DAYS", "ROW_GROUP_BYTES", "derive", "derive_connection",
           "digest"]

DIGEST_LAYERS = ("staging", "macros", "intermediate", "marts")

LAYOUT_VERSION = "3"
"""Part of the `derived_from` digest: a runlake that stores derived rows otherwise changes it."""


def derive_connection(scratch: Path) -> duckdb.DuckDBPyConnection:
    """A connection of the derive: DuckDB's share of the ingest's memory (transforms.memory),
    spilling the rest into the scratch folder, the rows' order not kept
    (transforms.warehouse.weeks.ROW_GROUP_BYTES)."""
    return db.connect(memory_limit=memory.budget().duckdb_limit,
                      temp_directory=str(scratch / "spill"), preserve_insertion_order=False)


def digest(lake: Lake) -> str:
    """What the derived tables are computed with besides the rows: the SQL, the tool registry,
    the model tables and the deciding evaluations. A lake version records it as
    `derived_from`."""
    h = hashlib.sha256(LAYOUT_VERSION.encode())
    for m in models():
        if m.layer in DIGEST_LAYERS:
            h.update(f"{m.layer}/{m.path.name}\n".encode())
            h.update(m.path.read_bytes())
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
        return _derive(lake, before, scratch, lake.newest_versions(), stage)
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
    previous = lake.commit_meta(before[MANIFEST]) if before.get(MANIFEST, -1) >= 0 else {}
    everything = models()
    weekly = [m for m in in_windows(everything) if m.weekly]
    early = before_windows(everything)
    # Every week when the SQL or the lookups changed, when a stored model's table is not there
    # (a first commit, or one a repair moved aside), or when a written table has no version
    # readers saw (a repair moved it aside and the commit made it anew: its files before
    # cannot be compared with its files now).
    expected = [m.stored for m in stored_models() if m.stored is not None]
    full = previous.get("derived_from") != key or any(
        before.get(t, -1) < 0 or now.get(t, -1) < 0 for t in expected) or any(
        before.get(lines_path(t), -1) < 0 <= now.get(lines_path(t), -1) for t in TABLES)
    lake.prefetch({lines_path(t): now.get(lines_path(t), -1) for t in TABLES})
    files = {t: lake.file_days(lines_path(t), now.get(lines_path(t), -1)) for t in TABLES}
    columns = {t: lake.columns(lines_path(t), now.get(lines_path(t), -1)) for t in TABLES}
    out = scratch / "out"
    out.mkdir(parents=True)
    con = derive_connection(scratch)
    try:
        prepare(con, lake, now)
        con.execute("CREATE SCHEMA derive")
        # The staging models over the whole lake; those every window reads (the lines that
        # lose to a later line, the runs' names) computed once, into the scratch folder.
        build(con, Source(once=frozenset({"table"}), suffix="lake"),
              [m for m in everything if m.layer == "staging"])
        for m in early:
            con.execute(f"COPY (SELECT * FROM {m.relation}) TO "
                        f"{sql_str(str(scratch_file(scratch, m)))} "
                        "(FORMAT parquet, COMPRESSION zstd)")
        changed_lines = _superseded_days(con, lake, before)
        lost = losers(con, "staging.stg_superseded_lines")
        staged = {t: lines_files(lake, t, now.get(lines_path(t), -1)) for t in LINKED}
        computed = {t: {f.url for f in fs if not linkable(f, lost)}
                    for t, fs in staged.items()}
        weeks: set[date | None]
        if full:
            weeks = all_weeks(files)
        else:
            weeks = touched_weeks(lake, before, files) | {
                week_of(d + timedelta(days=k)) for d in changed_lines
                for k in range(-MARGIN_DAYS, MARGIN_DAYS + 1)}
            # Weeks whose files shown as written change: their other rows derived again.
            weeks |= {date.fromisoformat(w) for t in LINKED
                      for w in relinked_weeks(lake, t, staged[t], lost)}
            # Weeks a derive that died before its manifest commit rewrote: readers never saw
            # them, and what they hold may no longer follow from the rows.
            weeks |= rewritten_since(lake, before, now, [
                m.stored for m in stored_models() if m.weekly and m.stored is not None])
            if None in weeks:  # a data file without day statistics: every week
                full, weeks = True, all_weeks(files)
        stale = sorted(w for w in weeks if w is not None)
        chosen = None if full else [w.isoformat() for w in stale]
        if full or stale:
            windows = derive_connection(scratch)
            try:
                _compute(windows, lake, scratch, now, stale, files, columns, stage, computed)
            finally:
                windows.close()
            for m in weekly:
                assert m.stored is not None
                if m.name in LINKED:
                    commit_linked(lake, m.stored, staged[m.name], lost, chosen, out / m.name,
                                  out / f"{m.name}.schema.parquet")
                else:
                    replace_partitions(lake, m.stored, out / m.name, chosen,
                                       out / f"{m.name}.schema.parquet")
        with stage.doing("deriving the findings that read the whole lake"):
            far_weeks = lake_wide(con, lake, before, scratch, full)
        if full or stale or far_weeks:
            with stage.doing("deriving lake/flags"):
                after_lake_wide(con, lake, scratch,
                                None if chosen is None else sorted(set(chosen) | far_weeks))
        if full or changed_lines:
            for m in early:
                if m.stored is not None:
                    path = scratch_file(scratch, m)
                    replace_partitions(lake, m.stored, path, None, path)
    finally:
        con.close()
    return {"derived_from": key, "weeks_derived": "all" if full else len(stale)}


def _superseded_days(con: duckdb.DuckDBPyConnection, lake: Lake,
                     before: dict[str, int]) -> set[date]:
    """The days of the lines that won or lost to a repeated run_id since the lake version
    `before` (staging.stg_superseded_lines: now)."""
    stored = by_name()["stg_superseded_lines"].stored
    assert stored is not None, "sql/staging/stg_superseded_lines.sql declares where it is stored"
    version = before.get(stored, -1)
    files = lake.file_uris(stored, version) if version >= 0 else []
    old = parquet_sql(files) if files \
        else "SELECT * FROM staging.stg_superseded_lines WHERE false"
    rows = con.execute(f"""
        WITH changed AS ({changed_rows(old, "SELECT * FROM staging.stg_superseded_lines")})
        SELECT DISTINCT d FROM changed, unnest([day, win_day]) AS t(d)
        WHERE d IS NOT NULL""").fetchall()
    return {r[0] for r in rows}
