"""The weeks of the stored models: each weekly one (`-- partition: week`) is rewritten a week at
a time, its rows computed from the week's days and MARGIN_DAYS either side. Which weeks a
commit touches, the `week` of a row, and writing a window's rows a week a folder."""

from datetime import date, timedelta
from pathlib import Path

import duckdb
import pyarrow as pa

from transforms.lake import AS_READ, WEEK, Lake, lines_path, sql_str
from transforms.lake.core import DataFile

NEIGHBOUR_DAYS = 1
"""How far a link reaches across midnight (the within_reach macro in sql/macros): a span to
its run, a span's LLM calls and findings to its run, a span to its parent."""

MARGIN_DAYS = 2 * NEIGHBOUR_DAYS
"""The days either side of a week its derived rows are computed from: a run's row reads its
spans within a day of it, and whether a span is the run's reads the runs within a day of the
span."""

GROUP_WEEKS = 8
"""At most this many adjacent weeks computed in one pass (a backfill's weeks)."""

ROW_GROUP_BYTES = "16MB"
"""What a row group of a derived table's files holds at most, uncompressed. A partitioned copy
buffers a row group per open week: sized by a number of rows (DuckDB's default), its memory
grew with the rows' width, and the messages of a night of long transcripts did not fit in
DuckDB's share of the memory (docs/performance.md). Sized by bytes, a copy holds at most this
much a week and a thread, whatever the rows hold. DuckDB sizes row groups by bytes only where
it need not keep the rows' order, which no derived table needs (the views order what they
show)."""

BY_BYTES = f"ROW_GROUP_SIZE_BYTES '{ROW_GROUP_BYTES}'"
"""The COPY option of a partitioned copy: row groups of at most ROW_GROUP_BYTES (and at most
DuckDB's default number of rows, for narrow rows)."""



def week_of(day: date) -> date:
    return day - timedelta(days=day.weekday())


def all_weeks(files: dict[str, list[DataFile]]) -> set[date | None]:
    out: set[date | None] = set()
    for t in AS_READ:
        for f in files[t]:
            out |= weeks_between(f.first, f.last, 0)
    return out


def weeks_between(a: date | None, b: date | None, margin: int) -> set[date | None]:
    """The weeks of the days from a - margin to b + margin (None when a day is not known)."""
    if a is None or b is None:
        return {None}
    out: set[date | None] = set()
    d = week_of(a - timedelta(days=margin))
    while d <= b + timedelta(days=margin):
        out.add(d)
        d += timedelta(days=7)
    return out


def touched_weeks(lake: Lake, before: dict[str, int],
                   files: dict[str, list[DataFile]]) -> set[date | None]:
    """The weeks whose derived rows may differ from the lake version `before`: those within
    MARGIN_DAYS of the days of every data file added or removed since (by the files' day
    statistics; `files`: each table's data files now)."""
    out: set[date | None] = set()
    for t in AS_READ:
        name = lines_path(t)
        old = {f.path: f for f in lake.file_days(name, before.get(name, -1))}
        new = {f.path: f for f in files[t]}
        for path in old.keys() ^ new.keys():
            f = old.get(path) or new[path]
            out |= weeks_between(f.first, f.last, MARGIN_DAYS)
    return out


def rewritten_since(lake: Lake, before: dict[str, int], now: dict[str, int],
                     tables: list[str]) -> set[date | None]:
    """The weeks of the derived `tables` whose files differ between the versions readers saw
    (`before`) and now: none, unless a commit died after its derive and before its manifest
    commit (None: a file of no week)."""
    out: set[date | None] = set()
    for t in tables:
        old, new = before.get(t, -1), now.get(t, -1)
        if new < 0 or old < 0 or old == new:
            continue
        files = [weeks_of(lake, t, v) for v in (old, new)]
        for path in files[0].keys() ^ files[1].keys():
            week = files[0].get(path) or files[1].get(path)
            out.add(date.fromisoformat(week) if week else None)
    return out


def weeks_of(lake: Lake, table: str, version: int) -> dict[str, str | None]:
    """path -> `week` partition of each data file of a derived table at `version`."""
    actions = pa.table(lake.open(table, version).get_add_actions(flatten=True))
    paths = actions.column("path").to_pylist()
    column = f"partition.{WEEK}"
    weeks = actions.column(column).to_pylist() if column in actions.column_names \
        else [None] * len(paths)
    return dict(zip(paths, weeks, strict=True))


def changed_rows(old: str, new: str) -> str:
    """SQL of the rows one of two queries (of the same columns) gives and the other not."""
    return f"""WITH old AS ({old}), new AS ({new})
        (SELECT * FROM old EXCEPT SELECT * FROM new)
        UNION ALL (SELECT * FROM new EXCEPT SELECT * FROM old)"""


def groups(weeks: list[date]) -> list[list[date]]:
    """Adjacent weeks, at most GROUP_WEEKS together, to compute in one pass."""
    groups: list[list[date]] = []
    for w in weeks:
        if groups and len(groups[-1]) < GROUP_WEEKS and w - groups[-1][-1] == timedelta(days=7):
            groups[-1].append(w)
        else:
            groups.append([w])
    return groups


def week_key(con: duckdb.DuckDBPyConnection, relation: str) -> str | None:
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


def write_weeks(con: duckdb.DuckDBPyConnection, relation: str, name: str, out: Path,
                 weeks: list[str], group: int) -> None:
    key = week_key(con, relation)
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


