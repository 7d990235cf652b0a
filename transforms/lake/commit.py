"""Committing to the lake's Delta tables with other writers about, and their upkeep: a bounded
retry of a conflicting commit, compaction of month partitions that hold many files, vacuum of
files replaced longer ago than the retention, and the lake's history."""

import json
import math
import random
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

import transforms.lake.files as lakefiles
from transforms import memory
from transforms.errors import InputError, RunlakeError
from transforms.lake.files import (
    LOG_PROPERTIES,
    MANIFEST,
    PARTITION,
    STATS_COLUMNS,
    TABLE_PROPERTIES,
    WEEK,
    WRITTEN,
    holding,
    in_predicate,
    lake_schema,
    lines_path,
)
from transforms.lake.store import Store
from transforms.memory import MB
from transforms.settings import MAX_RETENTION_HOURS


class LakeTables(Protocol):
    """What committing needs of a lake: its store and its tables opened and created
    (transforms.lake.core.Lake)."""

    store: Store

    def delta_uri(self, table: str) -> str: ...
    def open(self, table: str, version: int | None = None) -> Any: ...
    def newest_table(self, table: str) -> Any: ...
    def adopt(self, table: str, dt: Any) -> None: ...
    def newest_version(self, table: str) -> int: ...
    def tables_at(self, as_of: int | str | None = None) -> dict[str, int]: ...
    def tables(self) -> list[str]: ...
    def _create(self, table: str) -> Any: ...

T = TypeVar("T")

COMMIT_RETRIES = 12
"""How many times a commit that conflicts with another writer's is tried again."""
COMPACT_FILES = 32
"""A month partition with more files than this is compacted by the ingest that touched it."""
VACUUM_EVERY = 20
"""Every this many manifest versions, an ingest vacuums files replaced before the retention."""
class CommitConflict(RunlakeError):
    """Another writer kept committing to the same table; nothing of this ingest was lost."""


def with_retries(what: str, attempt: Callable[[], T]) -> T:
    """Run `attempt` until it commits, retrying a conflict with another writer's commit."""
    from deltalake.exceptions import CommitFailedError

    for n in range(COMMIT_RETRIES):
        try:
            return attempt()
        except CommitFailedError as e:
            if n == COMMIT_RETRIES - 1:
                raise CommitConflict(
                    f"{what}: another writer committed to the same table {COMMIT_RETRIES} times "
                    f"in a row ({e}); nothing is lost: run the ingest again") from e
            time.sleep(min(2.0, 0.05 * 2 ** n) * (0.5 + random.random()))
    raise AssertionError("unreachable")


def maintain(lake: LakeTables, months: Iterable[str], retention_hours: float) -> dict[str, int]:
    """Compact the touched month partitions that hold many files, and every few lake
    versions vacuum files replaced longer than `retention_hours` ago. Counts of what was
    done, by table."""
    done: dict[str, int] = {}
    touched = sorted(set(months))
    plan = memory.budget()
    for t in WRITTEN:
        dt = lake.newest_table(t)
        if dt is None:
            continue
        actions = pa.table(dt.get_add_actions(flatten=True))
        counts: dict[str, int] = {}
        for m in actions.column(f"partition.{PARTITION}").to_pylist():
            counts[m] = counts.get(m, 0) + 1
        for m in touched:
            if counts.get(m, 0) > COMPACT_FILES:
                def compact(t: str = t, m: str = m) -> Any:
                    # In the ingest's memory (transforms.memory): it spills beyond DuckDB's
                    # share, and reads as many files at once as it may run workers.
                    return lake.open(t).optimize.compact(
                        partition_filters=[(PARTITION, "=", m)],
                        max_concurrent_tasks=plan.workers,
                        max_spill_size=plan.duckdb_mb * MB)
                with_retries(t, compact)
                done[f"compacted/{t}"] = done.get(f"compacted/{t}", 0) + 1
    version = lake.newest_version(MANIFEST)
    if version >= 0 and version % VACUUM_EVERY == 0:
        done["vacuumed_files"] = vacuum(lake, retention_hours)
    return done

def vacuum_hours(retention_hours: float) -> int:
    """The retention in the whole hours vacuum counts, rounded up (a file is never deleted
    sooner than asked); an InputError for a retention that is no number of hours from 0 to
    MAX_RETENTION_HOURS (infinite, NaN, negative, or too long to count)."""
    if not (isinstance(retention_hours, int | float) and math.isfinite(retention_hours)
            and 0 <= retention_hours <= MAX_RETENTION_HOURS):
        raise InputError(f"retention {retention_hours!r} hours: give a number of hours from 0 "
                         f"to {MAX_RETENTION_HOURS} (RUNLAKE_RETENTION_HOURS)")
    return math.ceil(retention_hours)


def vacuum(lake: LakeTables, retention_hours: float) -> int:
    """Delete files that left the tables more than `retention_hours` ago (in whole hours,
    rounded up), but none of the lake's newest version."""
    hours = vacuum_hours(retention_hours)
    # The files of the lake version readers use now are kept whatever the retention: an
    # ingest vacuums after committing its data tables and before its manifest commit, and
    # if it dies there, that version is still the newest.
    pinned = lake.tables_at()
    n = 0
    for t in sorted({*lake.tables(), MANIFEST}):
        dt = lake.open(t)
        if dt is not None:
            keep = [pinned[t]] if pinned.get(t, -1) >= 0 else None
            n += len(dt.vacuum(retention_hours=hours, dry_run=False,
                               enforce_retention_duration=False, keep_versions=keep))
    return n


def history(lake: LakeTables, limit: int | None = None) -> list[dict[str, Any]]:
    """The lake's versions, newest first: one per ingest, forget or repair (a manifest commit
    runlake made; not the commits vacuum makes), with when, which files and the rows added
    and removed per table."""
    manifest = lake.open(MANIFEST)
    if manifest is None:
        return []
    # Read enough commits for `limit` versions (a vacuum adds two commits every
    # VACUUM_EVERY versions), more when that was not enough.
    window = None if limit is None else limit + 2 * (limit // VACUUM_EVERY + 1) + 1
    while True:
        commits = manifest.history(window)
        out = []
        for h in commits:
            meta = lake_meta(h)
            if not meta:
                continue  # the table's creation, or a vacuum's commits: no lake version
            out.append({"version": h["version"], "timestamp": h["timestamp"],
                        "operation": h.get("operation"), **meta})
        if limit is None or window is None or len(out) >= limit or len(commits) < window:
            return out[:limit]
        window *= 2


@dataclass
class CommitResult:
    days: list[date] = field(default_factory=list)
    versions: dict[str, int] = field(default_factory=dict)
    rows_added: dict[str, int] = field(default_factory=dict)
    rows_removed: dict[str, int] = field(default_factory=dict)
    maintenance: dict[str, int] = field(default_factory=dict)


def lake_meta(commit: dict[str, Any]) -> dict[str, Any]:
    raw = commit.get("runlake")
    if not raw:
        return {}
    try:
        meta = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


def commit_table(lake: LakeTables, name: str, staged: Path, sources: list[str],
                  ingest_id: str) -> tuple[int, int, int]:
    """Replace the rows of `sources` in the table an ingest writes the lake table `name` to
    (`lines_path(name)`) with its staged parts: (version, rows added, rows removed)."""
    from deltalake.transaction import AddAction, RemoveAction

    table = lines_path(name)
    parts = sorted(staged.glob(f"{PARTITION}=*/*.parquet"))
    # Made by the first commit even with no rows: every lake table is there to be read.
    dt = lake.open(table) or lake._create(table)
    keep_properties(dt, TABLE_PROPERTIES)
    evolve(lake, table, dt, parts)
    wanted = set(sources)
    adds = []
    added_rows = 0
    for i, p in enumerate(parts):
        month = p.parent.name.removeprefix(f"{PARTITION}=")
        rel = f"{PARTITION}={month}/part-{ingest_id}-{i:05d}.parquet"
        meta = pq.read_metadata(p)
        size = p.stat().st_size
        lake.store.put(p, table, f"{PARTITION}={month}", f"part-{ingest_id}-{i:05d}.parquet")
        added_rows += meta.num_rows
        adds.append((rel, month, meta, size))

    # The table opened above, else (a retry) the newest version opened again.
    table_now = _first_then(dt, lambda: lake.open(table))

    def attempt() -> tuple[int, int]:
        current = table_now()
        whole, mixed, n_whole = holding(current, wanted)
        removed = 0
        if mixed:
            # Files that mix inputs (compacted): rewrite them without those inputs' rows
            # (the delete moves `current` to the version it made).
            metrics = current.delete(in_predicate(sorted(wanted)))
            removed += int(metrics.get("num_deleted_rows") or 0)
            whole, _, n_whole = holding(current, wanted)
        now = int(time.time() * 1000)
        actions: list[Any] = [
            RemoveAction(path, True, now, size, {PARTITION: month})
            for path, size, month in whole]
        actions += [AddAction(rel, size, {PARTITION: month}, now, True,
                              lakefiles.file_stats(m)) for rel, month, m, size in adds]
        if actions:
            current.create_write_transaction(
                actions, mode="append", schema=lake_schema(table),
                partition_by=[PARTITION])
            # Under the commit lock the newest log entry is this commit: read that one
            # entry rather than open the table again.
            current.update_incremental()
        lake.adopt(table, current)
        return int(current.version()), removed + n_whole

    version, removed = with_retries(table, attempt)
    return version, added_rows, removed


def evolve(lake: LakeTables, table: str, dt: Any, parts: list[Path]) -> None:
    """Add to the Delta schema the columns staged files have that the table lacks (a lake
    written before runlake gained a column)."""
    if not parts:
        return
    from deltalake import Field
    from deltalake.schema import Schema as DeltaSchema

    have = {f.name for f in pa.schema(dt.schema().to_arrow())}
    wanted = lake_schema(table)
    missing = [f for f in wanted if f.name not in have]
    if missing:
        fields = DeltaSchema.from_arrow(pa.schema(missing)).fields
        dt.alter.add_columns([Field(f.name, f.type, nullable=True) for f in fields])


def _holds(dt: Any, weeks: list[str]) -> bool:
    """The table has a data file in one of the `weeks` partitions."""
    actions = pa.table(dt.get_add_actions(flatten=True))
    column = f"partition.{WEEK}"
    if column not in actions.column_names:
        return actions.num_rows > 0
    wanted = set(weeks)
    return any(w in wanted for w in actions.column(column).to_pylist())


def _first_then(first: T | None, again: Callable[[], T]) -> Callable[[], T]:
    """A function giving `first` at its first call (unless None) and `again()` after: a
    commit attempt uses the table it was given, a retry reads the table anew."""
    left = [] if first is None else [first]
    return lambda: left.pop() if left else again()


def has_properties(dt: Any, wanted: dict[str, str]) -> bool:
    """The table has every property of `wanted` with its value."""
    config = dt.metadata().configuration
    return all(config.get(k) == v for k, v in wanted.items())


def keep_properties(dt: Any, wanted: dict[str, str]) -> bool:
    """Give a table of this writer's own the properties `wanted` when it lacks them (a table
    made before runlake set them): True when that made a commit, which `dt` then holds."""
    if has_properties(dt, wanted):
        return False
    dt.alter.set_table_properties(wanted)
    return True


def with_properties(lake: LakeTables, table: str, dt: Any, wanted: dict[str, str]) -> Any:
    """`dt` (the newest version of `table`, perhaps shared: Lake.newest_table) when it has the
    properties `wanted`, else the table given them by a commit of this writer's own (a
    table made before runlake set them)."""
    if has_properties(dt, wanted):
        return dt
    own = lake.open(table)
    keep_properties(own, wanted)
    return own


def replace_partitions(lake: LakeTables, table: str, staged: Path, weeks: list[str] | None,
                       schema_file: Path) -> int:
    """Rewrite a derived table: every file of the `weeks` partitions (None: the whole table)
    replaced by the staged Parquet files, in one transaction (an overwrite of those
    partitions). `staged` is a folder of week=<week>/*.parquet for a table partitioned by
    week, or one Parquet file for a table that is not; `schema_file` a Parquet file with the
    table's columns (the schema of a table made, or rewritten whole). Returns the version."""
    from deltalake import DeltaTable
    from deltalake.transaction import AddAction

    if weeks is not None and not weeks:
        return -1
    partitioned = not staged.name.endswith(".parquet")
    columns = pq.read_schema(schema_file)
    schema = pa.schema([*columns, pa.field(WEEK, pa.string())] if partitioned else columns)
    by = [WEEK] if partitioned else None
    newest = lake.newest_table(table)
    if newest is None:
        stats = [c for c in STATS_COLUMNS if c in columns.names]
        DeltaTable.create(lake.delta_uri(table), schema, partition_by=by, mode="ignore",
                          configuration={**LOG_PROPERTIES, **(
                              {"delta.dataSkippingStatsColumns": ",".join(stats)} if stats
                              else {})}, storage_options=lake.store.options or None)
    found = sorted(staged.glob(f"{WEEK}=*/*.parquet")) if partitioned else (
        [staged] if staged.exists() else [])
    adds = []
    now = int(time.time() * 1000)
    tag = uuid.uuid4().hex
    for i, p in enumerate(found):
        week = p.parent.name.removeprefix(f"{WEEK}=") if partitioned else None
        meta = pq.read_metadata(p)
        size = p.stat().st_size
        name = f"part-{tag}-{i:05d}.parquet"
        lake.store.put(p, *([table, f"{WEEK}={week}", name] if partitioned else [table, name]))
        adds.append(AddAction(f"{WEEK}={week}/{name}" if partitioned else name, size,
                              {WEEK: week} if partitioned else {}, now, True,
                              lakefiles.file_stats(meta)))

    # The newest version read above, else (made just now, or a retry) read again. The
    # transaction leaves the DeltaTable it is made on as it was: a shared one will do.
    table_now = _first_then(newest, lambda: lake.newest_table(table))

    def attempt() -> int:
        dt = with_properties(lake, table, table_now(), LOG_PROPERTIES)
        if weeks is not None and not adds and not _holds(dt, weeks):
            # Nothing to remove and nothing to add: no transaction (a log entry and, on
            # object storage, a round trip per table saved).
            return int(dt.version())
        dt.create_write_transaction(
            adds, mode="overwrite", schema=schema, partition_by=by,
            partition_filters=None if weeks is None else [(WEEK, "in", weeks)])
        # Under the commit lock the newest entry of the log is this one.
        return lake.newest_version(table)

    # Under the commit lock (Lake.committing), so no other writer overwrites these weeks
    # between this one's read and its commit.
    return with_retries(table, attempt)
