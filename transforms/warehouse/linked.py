"""The lake tables whose rows are shown as written (LINKED: messages, tool_calls, thinking,
metadata_kv), each row written once.

A worker stages these tables' rows one file per week (transforms.normalize.worker), and the
commit adds the file to lake/_lines/<table>. A staged file whose every row names its run (the
rows of response lines) and none of whose lines lost to a later line with the same run_id
holds exactly the rows the view shows: lake/<table> shows that same file, linked rather than
written again (a hard link on a local folder, the object store's own copy on object storage),
as `week=<week>/L-<its name>`. The other rows (a span's, whose run is found through the span;
those of a file that holds a losing line, or rows of several weeks) are derived a week at a
time as every derived table is, into files named `C-<tag>-<n>`.

A commit links the files that became linkable and unlinks those that no longer are (removed,
or holding a line that lost since), and rewrites the derived files of the weeks it derives
(transforms.warehouse.derive). Both are one Delta transaction on lake/<table>.
"""

import bisect
import time
import uuid
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from transforms.contracts.schemas import LINKED, TABLES
from transforms.errors import RunlakeError
from transforms.lake import WEEK, Lake, files_sql, lines_path
from transforms.lake import files as lakefiles
from transforms.lake.commit import with_retries

__all__ = ["LINKED", "LinesFile", "commit_linked", "lines_files", "linkable",
           "losers", "relinked_weeks", "restore", "window_view"]

LINK = "L-"
"""The name of a staged file shown as it is: L-<the staged file's name>."""
COMPUTED = "C-"
"""The name of a file of derived rows: C-<tag>-<n>."""


@dataclass(frozen=True)
class LinesFile:
    """A staged file of a LINKED table, as its statistics describe it."""

    url: str
    name: str
    first: date | None
    last: date | None
    pending: bool
    """Some row names no run, or is a span's (its run is found through the span, and a copy
    of the span read later replaces it)."""
    lo: str | None
    hi: str | None
    """The least and greatest source_file of its rows."""

    @property
    def week(self) -> str | None:
        """The week (its Monday) of every row, or None when its rows span weeks or its days
        are not known."""
        if self.first is None or self.last is None:
            return None
        monday = self.first - timedelta(days=self.first.weekday())
        return monday.isoformat() if self.last < monday + timedelta(days=7) else None


def lines_files(lake: Lake, table: str, version: int) -> list[LinesFile]:
    """The staged files of a LINKED table at `version` of lake/_lines/<table>."""
    dt = lake.open(lines_path(table), version) if version >= 0 else None
    if dt is None:
        return []
    actions = pa.table(dt.get_add_actions(flatten=True))
    n = actions.num_rows

    def column(name: str) -> list[Any]:
        return actions.column(name).to_pylist() if name in actions.column_names else [None] * n

    out = []
    has_spans = "span_id" in TABLES[table].schema.names
    for path, first, last, nulls, rows, no_span, lo, hi in zip(
            column("path"), column("min.day"), column("max.day"), column("null_count.run_id"),
            column("num_records"), column("null_count.span_id"), column("min.source_file"),
            column("max.source_file"), strict=True):
        parts = unquote(path).split("/")
        # A file without span_id statistics (staged before they were kept) may hold a span's.
        of_spans = has_spans and (no_span is None or rows is None or no_span < rows)
        out.append(LinesFile(lake.store.url(lines_path(table), *parts), parts[-1], first, last,
                             nulls is None or nulls > 0 or of_spans, lo, hi))
    return out


def losers(con: duckdb.DuckDBPyConnection, relation: str) -> list[tuple[str, date]]:
    """(source_file, day) of every line that lost to a later line with its run_id, sorted
    (`relation`: the superseded lines of this lake version)."""
    return sorted(con.execute(f"SELECT DISTINCT source_file, day FROM {relation} "
                              "WHERE source_file IS NOT NULL AND day IS NOT NULL").fetchall())


def linkable(f: LinesFile, lost: list[tuple[str, date]]) -> bool:
    """The file holds exactly the rows the view shows: one week's, each naming its run, and
    no line that lost (`lost`: `losers`). A file whose range of source files and days holds a
    losing line counts as holding it."""
    if f.week is None or f.pending or f.lo is None or f.hi is None:
        return False
    assert f.first is not None and f.last is not None
    i = bisect.bisect_left(lost, (f.lo, date.min))
    while i < len(lost) and lost[i][0] <= f.hi:
        if f.first <= lost[i][1] <= f.last:
            return False
        i += 1
    return True


def relinked_weeks(lake: Lake, table: str, staged: list[LinesFile],
                   lost: list[tuple[str, date]]) -> set[str]:
    """The weeks of lake/<table> whose linked files change: a file to link that is not
    linked yet, or a linked file no longer linkable (its staged file gone: its rows removed,
    or moved into a file compaction made; or holding a line that lost). Their derived rows
    are computed again, so that no row is shown twice (a staged file linked once some of its
    rows were derived, as a piece of a file compaction split) or not at all."""
    wanted = {f"{f.week}/{LINK}{f.name}" for f in staged if linkable(f, lost)}
    shown: set[str] = set()
    dt = lake.newest_table(table)
    if dt is not None:
        actions = pa.table(dt.get_add_actions(flatten=True))
        if f"partition.{WEEK}" in actions.column_names:
            for path, week in zip(actions.column("path").to_pylist(),
                                  actions.column(f"partition.{WEEK}").to_pylist(), strict=True):
                name = unquote(path).rsplit("/", 1)[-1]
                if name.startswith(LINK):
                    shown.add(f"{week}/{name}")
    return {key.split("/", 1)[0] for key in wanted ^ shown}


def commit_linked(lake: Lake, table: str, staged: list[LinesFile], lost: list[tuple[str, date]],
           weeks: list[str] | None, computed: Path, schema_file: Path) -> int:
    """One transaction on lake/<table>: the linkable staged files linked and those no longer
    linkable unlinked; the derived files of `weeks` (None: every week, and every file the
    table has) replaced by those under `computed` (week=<week>/*.parquet). Returns the
    version."""
    from deltalake import DeltaTable
    from deltalake.transaction import AddAction, RemoveAction

    columns = pq.read_schema(schema_file)
    schema = pa.schema([*columns, pa.field(WEEK, pa.string())])
    if lake.newest_table(table) is None:
        stats = [c for c in lakefiles.STATS_COLUMNS if c in columns.names]
        DeltaTable.create(lake.delta_uri(table), schema, partition_by=[WEEK], mode="ignore",
                          configuration={**lakefiles.LOG_PROPERTIES,
                                         "delta.dataSkippingStatsColumns": ",".join(stats)},
                          storage_options=lake.store.options or None)
    wanted = {f"{f.week}/{LINK}{f.name}": f for f in staged if linkable(f, lost)}
    tag = uuid.uuid4().hex
    derived = []
    for i, p in enumerate(sorted(computed.glob(f"{WEEK}=*/*.parquet"))):
        week = p.parent.name.removeprefix(f"{WEEK}=")
        name = f"{COMPUTED}{tag}-{i:05d}.parquet"
        meta, size = pq.read_metadata(p), p.stat().st_size
        lake.store.put(p, table, f"{WEEK}={week}", name)
        derived.append((f"{WEEK}={week}/{name}", week, meta, size))
    recomputed = None if weeks is None else set(weeks)

    def attempt() -> int:
        dt = lake.open(table)
        actions = pa.table(dt.get_add_actions(flatten=True))
        paths = actions.column("path").to_pylist()
        sizes = actions.column("size_bytes").to_pylist()
        in_week = actions.column(f"partition.{WEEK}").to_pylist() \
            if f"partition.{WEEK}" in actions.column_names else [None] * len(paths)
        now = int(time.time() * 1000)
        removes, linked = [], set()
        for path, size, week in zip(paths, sizes, in_week, strict=True):
            name = unquote(path).rsplit("/", 1)[-1]
            key = f"{week}/{name}"
            if name.startswith(LINK) and key in wanted:
                linked.add(key)  # shown already, and still to be
                continue
            if recomputed is None or name.startswith(LINK) or week in recomputed:
                removes.append(RemoveAction(path, True, now, int(size), {WEEK: week}))
        adds = []
        for key, f in sorted(wanted.items()):
            if key in linked:
                continue
            week, name = key.split("/", 1)
            lake.store.link(f.url, table, f"{WEEK}={week}", name)
            meta = _metadata(lake, f.url)
            size = lake.store.size(table, f"{WEEK}={week}", name)
            if size is None:
                raise RunlakeError(f"{lake.store.url(table, f'{WEEK}={week}', name)} is not "
                                   "there after it was linked; run the ingest again")
            adds.append(AddAction(f"{WEEK}={week}/{name}", size, {WEEK: week}, now, True,
                                  lakefiles.file_stats(meta)))
        adds += [AddAction(rel, size, {WEEK: week}, now, True, lakefiles.file_stats(meta))
                 for rel, week, meta, size in derived]
        if removes or adds:
            dt.create_write_transaction([*removes, *adds], mode="append", schema=schema,
                                        partition_by=[WEEK])
        return lake.newest_version(table)

    # Under the commit lock (Lake.committing): no other writer changes the table meanwhile.
    return with_retries(table, attempt)


def _metadata(lake: Lake, url: str) -> pq.FileMetaData:
    """The Parquet metadata of a file of the lake (a path, or an object store file)."""
    with lake.store.open_url(url) as fh:
        return pq.read_metadata(fh)


def window_view(con: duckdb.DuckDBPyConnection, table: str, files: list[str],
                columns: set[str], first: date, last: date) -> None:
    """Make staging.stg_<table> the rows a derive computes of the window `first`..`last` (the
    staged files that are not linked, without the lines and span copies that lost: the
    staging model stg_<table> over just those files) while the table's view is derived;
    `restore` gives the views back their rows."""
    from transforms.warehouse.builder import run_sql
    from transforms.warehouse.models import by_name

    body = files_sql(files, table, columns)
    con.execute(f"ALTER VIEW staging.stg_{table}_lines RENAME TO stg_{table}_lines__all")
    con.execute(f"CREATE VIEW staging.stg_{table}_lines AS SELECT * FROM ({body}) AS r "
                f"WHERE r.day BETWEEN DATE '{first}' AND DATE '{last}'")
    con.execute(f"ALTER VIEW staging.stg_{table} RENAME TO stg_{table}__all")
    run_sql(con, by_name()[f"stg_{table}"].path)


def restore(con: duckdb.DuckDBPyConnection, table: str) -> None:
    for view in (f"stg_{table}", f"stg_{table}_lines"):
        con.execute(f"DROP VIEW staging.{view}")
        con.execute(f"ALTER VIEW staging.{view}__all RENAME TO {view}")
