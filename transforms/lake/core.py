"""The lake: one Delta Lake table per lake table under RUNLAKE_HOME/lake/<table>.

Each table is partitioned by `month` (YYYY-MM of `day`; `day` stays a column of the files), so
a backfill over many days writes a few files per table rather than one per day, and readers
skip days by the files' statistics. Every data file holds the rows of one input file
(`source_file`) until compaction merges files.

An ingest commits in this order (`Lake.commit`):
1. every data table: one Delta transaction that removes the files holding rows of the
   ingest's input files (a changed file's old rows, or rows a crashed ingest left) and adds the
   staged files; files that mix several inputs (after compaction) are first cleaned by a
   predicate delete;
2. `ingest_files` last: the manifest of what the lake holds, one row per input file, replaced
   by a predicate overwrite. Its commit carries the versions of the data tables it completes.

Readers of `warehouse.duckdb` see one ingest whole or not at all: its views read file lists
published after the manifest commit (transforms.warehouse). A crash before the manifest commit
leaves the manifest as it was, so the next ingest reads those input files again and step 1
removes whatever the crashed one added. Concurrent writers retry a conflicting commit a
bounded number of times. Replaced files stay on disk until `vacuum` removes them, no sooner
than the retention after they were replaced.
"""

import fcntl
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any, NamedTuple, TypeVar
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq

from transforms.contracts.schemas import TABLES
from transforms.errors import InputError, RunlakeError
from transforms.lake import commit as lakecommit
from transforms.lake.commit import CommitConflict, CommitResult, history, lake_meta, with_retries
from transforms.lake.files import (
    DATA_TABLES,
    MANIFEST,
    PARTITION,
    TABLE_PROPERTIES,
    duckdb_type,
    empty_select,
    files_sql,
    in_predicate,
    lake_schema,
    month_of,
    scan_sql,
    sql_str,
)
from transforms.lake.store import locate

__all__ = ["DATA_TABLES", "MANIFEST", "PARTITION", "CommitConflict", "CommitResult",
           "duckdb_type", "empty_select", "files_sql", "history", "lake_schema", "month_of",
           "scan_sql",
           "sql_str"]

REGISTRY = "_registry"
REGISTRY_SCHEMA = pa.schema([
    ("agent", pa.string()), ("tool_name", pa.string()), ("description", pa.string()),
    ("strict", pa.bool_()), ("parameters", pa.string()), ("registry_sha256", pa.string()),
    ("registry_file", pa.string())])
"""lake/_registry/tools.parquet: one row per registered tool of the last registry used."""
MODEL_TABLES = "_models/tables.json"
"""The model alias and price tables the last ingest was given (transforms.contracts.models)."""
MANIFEST_MADE = ".ingest_files.made"
"""lake/.ingest_files.made: the manifest has been committed once (without it, data tables and
no manifest are a first ingest that died before its manifest commit, not damage)."""
DEFAULT_RETENTION_HOURS = 2.0
"""How long a replaced file stays on disk for readers that listed it (RUNLAKE_RETENTION_HOURS)."""
LEGACY_MARKERS = ("_versions", "_commit.json", "_superseded")
"""What a lake written before Delta Lake holds (see transforms.lake.migrate)."""

T = TypeVar("T")


GLOB_CHARS = "[]?*{}\\"
"""Characters DuckDB gives a meaning to in file names (its globs)."""
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def unstorable(name: str) -> str | None:
    """What in a local home path the lake's Delta tables cannot store (delta-rs parses the
    path as a URL: it decodes a %XX escape, refuses control characters, and finds no history
    of a table under a #), or None. Any other
    character a file system allows works, but for DuckDB's glob characters (GLOB_CHARS)."""
    bad = sorted({ch for ch in name if ord(ch) < 32 or ord(ch) == 127})
    if bad:
        return "a control character (" + ", ".join(repr(ch) for ch in bad) + ")"
    m = _ESCAPE.search(name)
    if m:
        return f"a %XX escape ({m.group()!r})"
    if "#" in name:
        return "a # (delta-rs lists no history of a table under it)"
    return None


class KnownFile(NamedTuple):
    """What the manifest (`ingest_files`) says of an ingested file (`Lake.known_files`)."""

    sha256: str
    bytes: int
    tools_sha256: str | None
    """The digest of the tool registry it was read against (None: none)."""
    kind: str | None
    error: str | None
    """Why it could not be read to its end (None: it was): it is read again."""


class Lake:
    def __init__(self, home: Path | str) -> None:
        # Absolute, so that rows and manifests name the same files from any directory.
        self.where = locate(home)
        bad = None if self.where.remote else unstorable(self.where.name)
        if bad is not None:
            raise InputError(f"{self.where.name!r}: a home path holding {bad} cannot be stored "
                             "by the lake's Delta tables; choose another --home (docs/lake.md)")
        if any(ch in self.where.name for ch in GLOB_CHARS):
            # DuckDB reads the lake's files by name, and takes these characters as a glob.
            raise InputError(f"{self.where.name!r}: a warehouse folder whose path holds one of "
                             "[ ] ? * { } \\ cannot be read safely; choose another --home")
        if self.where.remote and any(ch in str(self.where.folder) for ch in GLOB_CHARS):
            # Staged files are read by name from the warehouse file's folder.
            raise InputError(f"{self.where.folder}: the warehouse folder of an s3:// home "
                             "holds one of [ ] ? * { } \\ and cannot be read safely; set "
                             "RUNLAKE_WAREHOUSE or XDG_CACHE_HOME elsewhere")
        self.home: Path | str = self.where.home
        self.remote = self.where.remote
        self.store = self.where.lake()

    @property
    def root(self) -> Path:
        """The local lake folder (a local home only: an s3:// home's lake is `store`)."""
        return self.store.path()

    @property
    def local_home(self) -> Path:
        """The local folder of a local home (never of an s3:// one)."""
        if self.remote:
            raise AssertionError(f"{self.home} is not a local folder")
        return Path(self.home)

    # -- tables -----------------------------------------------------------------------------
    def uri(self, table: str) -> str:
        """The table's folder as a path (or s3:// URL), for people and other engines."""
        return self.store.url(table)

    def delta_uri(self, table: str) -> str:
        """The table as delta-rs opens it (transforms.lake.store.Store.delta_url)."""
        return self.store.delta_url(table)

    def exists(self, table: str) -> bool:
        if self.remote:
            return self.store.exists(table, "_delta_log")
        return (self.root / table / "_delta_log").is_dir()

    def is_there(self) -> bool:
        """The lake folder exists (anything was ever written to it)."""
        return self.store.is_dir()

    def open(self, table: str, version: int | None = None) -> Any:
        """The DeltaTable of `table` (at `version`), or None when it was never written."""
        from deltalake import DeltaTable

        if self.remote:
            # One request fewer than asking first whether the log is there.
            from deltalake.exceptions import TableNotFoundError

            try:
                return DeltaTable(self.delta_uri(table), version=version,
                                  storage_options=self.store.options)
            except TableNotFoundError:
                return None
        if not self.exists(table):
            return None
        return DeltaTable(self.delta_uri(table), version=version)

    def _create(self, table: str) -> Any:
        from deltalake import DeltaTable

        try:
            return DeltaTable.create(self.delta_uri(table), lake_schema(table),
                                     partition_by=[PARTITION] if table != MANIFEST else None,
                                     mode="ignore", configuration=TABLE_PROPERTIES,
                                     storage_options=self.store.options or None)
        except Exception:  # noqa: BLE001 - another writer created it at the same moment
            dt = self.open(table)
            if dt is None:
                raise
            return dt

    def is_legacy(self) -> bool:
        """A lake written by runlake before Delta Lake (day links to version folders)."""
        if self.remote:
            return False  # runlake never wrote one to object storage
        return any((self.root / m).exists() for m in LEGACY_MARKERS) or (
            (self.root / "runs").is_dir() and not self.exists("runs")
            and any((self.root / "runs").glob("day=*")))

    def versions(self) -> dict[str, int]:
        """The current version of every table (-1: not written yet)."""
        out = {}
        for t in TABLES:
            dt = self.open(t)
            out[t] = -1 if dt is None else dt.version()
        return out

    def state(self, snapshot: dict[str, int] | None = None) -> str:
        """A fingerprint of one lake version (default: the newest): the table versions it
        reads, the tool registry and the model tables the views use. Equal fingerprints mean
        equal views."""
        snapshot = self.snapshot() if snapshot is None else snapshot
        parts = [f"{t}@{v}" for t, v in sorted(snapshot.items())]
        for extra in (f"{REGISTRY}/tools.parquet", MODEL_TABLES):
            try:
                data = self.store.read_bytes(*extra.split("/"))
            except FileNotFoundError:
                continue
            parts.append(f"{extra}>{hashlib.sha256(data).hexdigest()}")
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def snapshot(self, as_of: int | str | None = None) -> dict[str, int]:
        """Table versions of one consistent lake version: the manifest's newest commit made by
        an ingest (or forget, or repair), or `as_of` (such a manifest version, or an ISO
        timestamp), with the data table versions that manifest commit completed."""
        manifest = self.open(MANIFEST)
        if manifest is None:
            if as_of is not None:
                raise InputError("the lake has no history yet: run `runlake ingest PATH`")
            return {}
        # The lake's versions are the manifest commits runlake made: the commits vacuum
        # makes to the table (VACUUM START, VACUUM END) change no row and complete no ingest.
        history = {h["version"]: h for h in manifest.history() if lake_meta(h)}
        if as_of is None:
            if not history:  # created, and its first commit not made
                return {MANIFEST: manifest.version()}
            version = max(history)
        elif isinstance(as_of, int):
            version = as_of
        else:
            version = self._version_at(history, as_of)
        if version not in history:
            raise InputError(f"the lake has no version {version}: `runlake history` lists them")
        meta = lake_meta(history[version])
        tables = dict(meta.get("tables", {}))
        tables[MANIFEST] = version
        return tables

    @staticmethod
    def _version_at(history: dict[int, dict[str, Any]], when: str) -> int:
        from datetime import UTC, datetime

        try:
            ts = datetime.fromisoformat(when)
        except ValueError:
            raise InputError(f"--as-of {when!r} is neither a lake version nor a timestamp "
                             "like 2026-11-20T08:00:00Z") from None
        if ts.tzinfo is None:
            ts = ts.replace(tzinfo=UTC)
        ms = ts.timestamp() * 1000
        found = [v for v, h in history.items() if h["timestamp"] <= ms]
        if not found:
            raise InputError(f"the lake has no version as old as {when}")
        return max(found)

    def file_uris(self, table: str, version: int | None = None) -> list[str]:
        """The data files of `table` at `version` (default: current)."""
        if version is not None and version < 0:
            return []
        dt = self.open(table, version)
        if dt is None:
            return []
        try:
            # By the paths the log names (URL-encoded), not dt.file_uris(), which keeps the
            # encoding: a home with a space would read as .../h%20x/...
            paths = pa.table(dt.get_add_actions(flatten=False)).column("path").to_pylist()
            return sorted(self.store.url(table, *unquote(p).split("/")) for p in paths)
        except Exception as e:  # noqa: BLE001 - a log entry that names a missing file, ...
            raise RunlakeError(f"the lake table {table} cannot be read ({e}); run "
                               "`runlake doctor --repair`") from e

    def file_days(self, table: str, version: int) -> list[tuple[str, date | None, date | None]]:
        """The data files of `table` at `version` (absolute paths) with the first and last
        day of their rows (None when the file carries no statistics)."""
        dt = self.open(table, version) if version >= 0 else None
        if dt is None or table == MANIFEST:
            return []
        actions = pa.table(dt.get_add_actions(flatten=True))
        names = actions.column_names
        n = actions.num_rows
        lo = actions.column("min.day").to_pylist() if "min.day" in names else [None] * n
        hi = actions.column("max.day").to_pylist() if "max.day" in names else [None] * n
        return sorted((self.store.url(table, *unquote(path).split("/")), a, b)
                      for path, a, b in zip(
            actions.column("path").to_pylist(), lo, hi, strict=True))

    def columns(self, table: str, version: int | None = None) -> set[str]:
        """The columns of `table` at `version` (default: current; none below 0: the table
        was not yet in that lake version, though another writer may have created it since)."""
        if version is not None and version < 0:
            return set()
        dt = self.open(table, version)
        if dt is None:
            return set()
        return {f.name for f in pa.schema(dt.schema().to_arrow())}

    # -- reading ----------------------------------------------------------------------------
    def known_files(self) -> dict[str, KnownFile]:
        """source_file -> what the manifest says of it, for every file in the manifest."""
        dt = self.open(MANIFEST)
        if dt is None:
            return {}
        cols = ["source_file", "sha256", "bytes", "tools_sha256", "kind", "error"]
        have = self.columns(MANIFEST)
        rows = pa.table(dt.to_pyarrow_table(columns=[c for c in cols if c in have])).to_pylist()
        return {r["source_file"]: KnownFile(r["sha256"], r["bytes"], r.get("tools_sha256"),
                                            r["kind"], r.get("error")) for r in rows}

    def write_registry(self, rows: list[dict[str, Any]]) -> None:
        """Replace lake/_registry/tools.parquet (the tool registry last ingested with)."""
        table = pa.Table.from_pylist(rows, schema=REGISTRY_SCHEMA)
        if self.remote:
            sink = pa.BufferOutputStream()
            pq.write_table(table, sink, compression="zstd")
            self.store.write_bytes(sink.getvalue().to_pybytes(), REGISTRY, "tools.parquet")
            return
        folder = self.root / REGISTRY
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".tools.{os.getpid()}.{time.time_ns()}.parquet"
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, folder / "tools.parquet")

    # -- committing -------------------------------------------------------------------------
    @contextmanager
    def committing(self) -> Iterator[None]:
        """One ingest's commits at a time on this home (the parsing before runs in parallel):
        the versions a manifest commit records then hold that ingest whole and nothing of
        another's. Waits for the other writer; never fails for it.

        On object storage there is no lock: each commit relies on the store's conditional put
        and retries a conflict (`with_retries`), so a lake version may also hold the data
        files of another ingest whose manifest commit follows (docs/object-storage.md)."""
        if self.remote:
            yield
            return
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".commit.lock", "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def commit(self, staging: Path, sources: list[str], manifest: pa.Table, ingest_id: str,
               days: Iterable[date] = (), retention_hours: float = DEFAULT_RETENTION_HOURS,
               action: str = "ingest") -> CommitResult:
        """Commit one ingest (or, with action "forget", no staged parts and no manifest rows):
        the staged parts of every data table (replacing all rows of `sources`), the upkeep of
        the months it touched (`maintain`), then the manifest rows of `sources`, recording the
        table versions (see the module docstring)."""
        from deltalake import CommitProperties, write_deltalake

        lakecommit.vacuum_hours(retention_hours)  # refused before anything is committed
        result = CommitResult(days=sorted(set(days)))
        if not self.remote:
            self.root.mkdir(parents=True, exist_ok=True)
        for t in DATA_TABLES:
            version, added, removed = self._commit_table(t, staging / t, sources, ingest_id)
            result.versions[t] = version
            result.rows_added[t] = added
            result.rows_removed[t] = removed
        # Before the manifest, so the versions it records include the compacted files (the
        # files compaction replaced may then be vacuumed without breaking that version).
        result.maintenance = self.maintain({month_of(d) for d in result.days}, retention_hours)
        for t, v in self.versions().items():
            if t != MANIFEST and result.versions.get(t, -1) >= 0:
                result.versions[t] = v
        meta = {"action": action, "ingest_id": ingest_id, "files": sources[:1000],
                "n_files": len(sources), "tables": result.versions,
                "rows_added": result.rows_added, "rows_removed": result.rows_removed}
        data = manifest.cast(lake_schema(MANIFEST))
        predicate = in_predicate(sources)

        def write_manifest() -> int:
            if not self.exists(MANIFEST):
                self._create(MANIFEST)
            write_deltalake(self.delta_uri(MANIFEST), data, mode="overwrite", predicate=predicate,
                            schema_mode="merge", storage_options=self.store.options or None,
                            commit_properties=CommitProperties(
                                custom_metadata={"runlake": json.dumps(meta)}))
            return int(self.open(MANIFEST).version())

        result.versions[MANIFEST] = with_retries("ingest_files", write_manifest)
        self.store.touch(MANIFEST_MADE)
        return result

    def _commit_table(self, table: str, staged: Path, sources: list[str],
                      ingest_id: str) -> tuple[int, int, int]:
        """Replace the rows of `sources` in one table with its staged parts: (version, rows
        added, rows removed) (transforms.lake.commit.commit_table)."""
        return lakecommit.commit_table(self, table, staged, sources, ingest_id)

    def maintain(self, months: Iterable[str], retention_hours: float) -> dict[str, int]:
        """Compaction and vacuum as thresholds say (transforms.lake.commit.maintain)."""
        return lakecommit.maintain(self, months, retention_hours)

    def vacuum(self, retention_hours: float) -> int:
        return lakecommit.vacuum(self, retention_hours)

def clear_staging(staging: Path) -> None:
    shutil.rmtree(staging, ignore_errors=True)


OWNER = "owner.pid"
"""The pid of the process that owns a staging folder (.staging/<name>/owner.pid): a folder
no live process owns was left by a crash (transforms.ingest.clear_abandoned_staging)."""


def claim_staging(folder: Path) -> Path:
    """Create a staging folder owned by this process."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / OWNER).write_text(str(os.getpid()))
    return folder
