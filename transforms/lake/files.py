"""The lake's data files as SQL reads them, and what their statistics say: which input files
(`source_file`) a data file holds, and the days and runs it can be skipped for."""

import bisect
import json
from collections.abc import Iterable
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from transforms.contracts.schemas import MANIFEST, PARTITION, TABLES

WEEK = "week"
"""The partition column of the derived tables (the Monday of the rows' week, YYYY-MM-DD):
each is rewritten a week at a time."""
DATA_TABLES = tuple(t for t in TABLES if t != MANIFEST)
LINES = "_lines"
"""lake/_lines/<table>: the rows of each input line as read, for the lake tables whose rows
the views resolve (a repeated run_id's losing lines, a span's run): lake/<table> holds what the
views show, derived from them."""
DERIVED = "_derived"
"""lake/_derived/<name>: the derived tables behind the views (the intermediate views, and the
lines that lose to a later line with their run_id)."""
AS_READ = tuple(t for t in DATA_TABLES if t != "quarantine")
"""The lake tables stored as read under lake/_lines/ and derived at lake/<table>; quarantine
and ingest_files are what the views show as they are written."""
STATS_COLUMNS = ("source_file", "day", "run_id", "trace_id", "span_id")
"""The columns whose minimum and maximum each data file records (`file_stats`): which input files
a data file holds, and the days and runs it can be skipped for; and (by span_id's null count)
whether it holds a span's rows."""

def month_of(day: date) -> str:
    return f"{day.year:04d}-{day.month:02d}"


def duckdb_type(t: pa.DataType) -> str:
    """The DuckDB type of an Arrow type used in the lake schemas."""
    if pa.types.is_list(t):
        return duckdb_type(t.value_type) + "[]"
    mapping = {
        pa.string(): "VARCHAR", pa.int64(): "BIGINT", pa.float64(): "DOUBLE",
        pa.bool_(): "BOOLEAN", pa.date32(): "DATE", pa.binary(): "BLOB",
    }
    if pa.types.is_timestamp(t):
        return "TIMESTAMPTZ"
    return mapping[t]


def sql_str(value: str) -> str:
    """A SQL string literal (for file paths in DDL and delta-rs predicates, which take no
    parameters)."""
    return "'" + value.replace("'", "''") + "'"


def empty_select(table: str) -> str:
    cols = ", ".join(f"CAST(NULL AS {duckdb_type(c.type)}) AS {c.name}"
                     for c in TABLES[table].columns)
    return f"SELECT {cols} WHERE false"


def files_sql(files: list[str], table: str, present: Iterable[str] | None = None) -> str:
    """SQL reading `table` from these Parquet files, typed even when there are none. A column
    that no file has (written before the column existed) reads as a typed null; with `present`
    None every column is taken to be in some file."""
    if not files:
        return empty_select(table)
    have = set(present) if present is not None else None
    cols = ", ".join(c.name if have is None or c.name in have
                     else f"CAST(NULL AS {duckdb_type(c.type)}) AS {c.name}"
                     for c in TABLES[table].columns)
    return parquet_sql(files, cols)


def parquet_sql(files: list[str], columns: str = "*", distinct: bool = False) -> str:
    """SQL reading these Parquet files (at least one) as one relation, their columns matched
    by name: the one way the warehouse reads a list of the lake's files."""
    listing = ", ".join(sql_str(f) for f in files)
    # No Hive partitioning: a `name=value` folder anywhere in the path (the home's own, or
    # the tables' month= and week=) must never become a column value.
    return f"SELECT {'DISTINCT ' if distinct else ''}{columns} FROM read_parquet([{listing}], " \
        "union_by_name = true, hive_partitioning = false)"


def scan_sql(folder: Path, table: str) -> str:
    """SQL reading staged parts (folder/<table>/month=*/*.parquet) of one ingest: this
    version of runlake wrote them, so each has every column of the table."""
    return files_sql(sorted(str(p) for p in (folder / table).glob(f"{PARTITION}=*/*.parquet")),
                     table)


def in_predicate(values: list[str]) -> str:
    return "source_file IN (" + ", ".join(sql_str(v) for v in values) + ")" if values \
        else "false"


def holding(dt: Any, sources: set[str]) -> tuple[list[tuple[str, int, str]], bool, int]:
    """The files of `dt` that hold rows of `sources`: (files holding only such rows, as
    (path, size, month); whether some file mixes them with others' rows; rows in the first)."""
    if not sources:
        return [], False, 0
    actions = pa.table(dt.get_add_actions(flatten=True))
    if actions.num_rows == 0:
        return [], False, 0
    lo = actions.column("min.source_file").to_pylist() \
        if "min.source_file" in actions.column_names else [None] * actions.num_rows
    hi = actions.column("max.source_file").to_pylist() \
        if "max.source_file" in actions.column_names else [None] * actions.num_rows
    paths = actions.column("path").to_pylist()
    sizes = actions.column("size_bytes").to_pylist()
    rows = actions.column("num_records").to_pylist()
    months = actions.column(f"partition.{PARTITION}").to_pylist()
    ordered = sorted(sources)
    whole, mixed, n = [], False, 0
    for path, size, nrows, month, a, b in zip(paths, sizes, rows, months, lo, hi, strict=True):
        if a is None or b is None:
            mixed = True  # no statistics: cannot tell, so treat as mixed
            continue
        i = bisect.bisect_left(ordered, a)
        if i == len(ordered) or ordered[i] > b:
            continue  # no source of ours lies within [a, b]
        if a == b:
            whole.append((path, int(size), month))
            n += int(nrows or 0)
        else:
            mixed = True
    return whole, mixed, n


def file_stats(meta: pq.FileMetaData) -> str:
    """Delta statistics of a data file: its row count and, for the columns that prune
    (source_file, day, run_id), exact minimum, maximum and null count."""
    out: dict[str, Any] = {"numRecords": meta.num_rows, "minValues": {}, "maxValues": {},
                           "nullCount": {}}
    schema = meta.schema.to_arrow_schema()
    for name in STATS_COLUMNS:
        if name not in schema.names:
            continue
        i = schema.get_field_index(name)
        lo = hi = None
        nulls = 0
        ok = True
        for g in range(meta.num_row_groups):
            st = meta.row_group(g).column(i).statistics
            if st is None or not st.has_min_max:
                if st is not None and st.null_count == meta.row_group(g).num_rows:
                    nulls += st.null_count
                    continue
                ok = False
                break
            nulls += st.null_count or 0
            lo = st.min if lo is None else min(lo, st.min)
            hi = st.max if hi is None else max(hi, st.max)
        if not ok:
            continue
        out["nullCount"][name] = nulls
        if lo is not None:
            if isinstance(lo, date):
                lo, hi = lo.isoformat(), hi.isoformat()  # type: ignore[union-attr]
            out["minValues"][name] = lo
            out["maxValues"][name] = hi
    return json.dumps(out)


CHECKPOINT_INTERVAL = 10
LOG_PROPERTIES = {"delta.checkpointInterval": str(CHECKPOINT_INTERVAL)}
"""Delta table properties of every lake table and derived table: a checkpoint every
CHECKPOINT_INTERVAL commits, so that opening a table reads its newest checkpoint and at most
that many commits after it. delta-rs's default interval is far longer, and a lake table gains
a commit or two a night: an open read a season's log files, one request each on object storage
(bench/RESULTS.md, "A partition run's fixed cost, second pass")."""
TABLE_PROPERTIES = {"delta.dataSkippingStatsColumns": ",".join(STATS_COLUMNS), **LOG_PROPERTIES}
"""Delta table properties of every lake table: readers (and `get_add_actions`) use the
statistics of STATS_COLUMNS, whatever their position in the table (by default only the first
32 columns' are, and `source_file` comes after them in the wide tables); LOG_PROPERTIES."""


def lines_path(table: str) -> str:
    """Where an ingest writes the rows of a lake table as read, relative to the lake:
    lake/_lines/<table> for AS_READ tables (the views show them derived, at lake/<table>),
    else lake/<table> (shown as written)."""
    return f"{LINES}/{table}" if table in AS_READ else table


WRITTEN = tuple(lines_path(t) for t in DATA_TABLES)
"""The tables an ingest commits its rows to (before the derived tables and the manifest)."""


def lake_schema(table: str) -> pa.Schema:
    """The Delta schema of a lake table as an ingest writes it (`table`, or its stored name
    under lake/_lines/): its columns and the month partition column."""
    t = TABLES[table.removeprefix(f"{LINES}/")]
    fields = [pa.field(c.name, c.type) for c in t.columns]
    if t.name != MANIFEST:
        fields.append(pa.field(PARTITION, pa.string()))
    return pa.schema(fields)
