"""The lake: a Delta Lake table per stored table under RUNLAKE_HOME/lake/.

An ingest writes each input line's rows to the tables it writes (`WRITTEN`): lake/_lines/<table>
for the tables whose rows the views resolve (runs, messages, spans, ...), lake/quarantine. The
derived tables (transforms.warehouse.derive) are made from those: lake/<table>, holding exactly
the rows the warehouse's view of that name shows, and lake/_derived/<name> behind the other
views. Written tables are partitioned by `month` (YYYY-MM of `day`; `day` stays a column of the
files), derived ones by `week`, and readers skip days by the files' statistics.

One lake version is one commit sequence (`Lake.commit`):
1. every written table: one Delta transaction that removes the files holding rows of the
   commit's input files (a changed file's old rows, or rows a crashed ingest left) and adds the
   staged files; files that mix several inputs (after compaction) are first cleaned by a
   predicate delete;
2. the derived tables, each rewritten for the weeks whose rows step 1 changed (a predicate
   overwrite of those week partitions);
3. compaction of the months step 1 touched, when they hold many files, and every so many
   versions a vacuum;
4. `ingest_files` last: the manifest of what the lake holds, one row per input file, replaced
   by a predicate overwrite. Its commit names the version of every table it completes.

Readers see one lake version whole or not at all: they read each table's files at the versions
the newest manifest commit names (`snapshot`). A crash before the manifest commit leaves the
manifest as it was, so the next ingest reads those input files again, step 1 removes whatever
the crashed one added, and step 2 rewrites every week whose rows differ from the version readers
see. Concurrent writers retry a conflicting commit a bounded number of times. Replaced files
stay on disk until `vacuum` removes them, no sooner than the retention after they were replaced.
"""

import atexit
import contextlib
import fcntl
import json
import os
import random
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any, NamedTuple, TypeVar
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq

from transforms.contracts.schemas import TABLES as TABLES
from transforms.errors import InputError, RunlakeError
from transforms.lake import commit as lakecommit
from transforms.lake.commit import CommitConflict, CommitResult, history, lake_meta, with_retries
from transforms.lake.files import (
    AS_READ,
    DATA_TABLES,
    DERIVED,
    LINES,
    MANIFEST,
    PARTITION,
    TABLE_PROPERTIES,
    WRITTEN,
    duckdb_type,
    empty_select,
    files_sql,
    in_predicate,
    lake_schema,
    month_of,
    scan_sql,
    sql_str,
    stored,
)
from transforms.lake.files import WEEK as WEEK
from transforms.lake.store import locate

__all__ = ["AS_READ", "DATA_TABLES", "DERIVED", "LINES", "MANIFEST", "PARTITION", "WEEK",
           "WRITTEN", "CommitConflict", "CommitResult", "Derive", "duckdb_type", "empty_select",
           "files_sql", "history", "lake_schema", "month_of", "scan_sql", "sql_str", "stored"]

LAYOUT = 2
"""The layout a manifest commit's versions name (its `layout`): 2, the tables as read under
lake/_lines/ and the derived tables; a commit without it named the tables as read
lake/<table> (transforms.lake.migrate moves such a lake once)."""

REGISTRY = "_registry"
REGISTRY_SCHEMA = pa.schema([
    ("agent", pa.string()), ("tool_name", pa.string()), ("description", pa.string()),
    ("strict", pa.bool_()), ("parameters", pa.string()), ("registry_sha256", pa.string()),
    ("registry_file", pa.string())])
"""lake/_registry/tools.parquet: one row per registered tool of the last registry used."""
MODEL_TABLES = "_models/tables.json"
"""The model alias and price tables the last ingest was given (transforms.warehouse.lookups)."""
MANIFEST_MADE = ".ingest_files.made"
"""lake/.ingest_files.made: the manifest has been committed once (without it, data tables and
no manifest are a first ingest that died before its manifest commit, not damage)."""
DEFAULT_RETENTION_HOURS = 2.0
"""How long a replaced file stays on disk for readers that listed it (RUNLAKE_RETENTION_HOURS)."""
LEGACY_MARKERS = ("_versions", "_commit.json", "_superseded")
"""What a lake written before Delta Lake holds (see transforms.lake.migrate)."""

T = TypeVar("T")
R = TypeVar("R")

Derive = Callable[["Lake", dict[str, int]], dict[str, Any]]
"""Step 2 of a commit: given the lake and the table versions of the lake version readers saw
before it, rewrite the derived tables for what the written tables' commits changed; returns
what the manifest commit records of it."""


_AT_VERSION: dict[tuple[str, int, tuple[Any, ...]], Any] = {}
"""DeltaTables at a version, shared by the Lakes of a process (Lake._shared)."""
_AT_VERSION_MAX = 512
KEPT_VERSIONS = 2
"""Versions of a table kept in _AT_VERSION (its newest ones: a commit reads the version before
and makes the next), so that a long-lived process holds a few DeltaTables a table, not one a
commit."""
_AT_VERSION_LOCK = threading.Lock()
PREFETCH_THREADS = 8
"""Tables opened at once on object storage (Lake.prefetch)."""
# Dropped before the interpreter tears its modules down: DeltaTables still alive then took
# ~10 s to go at the exit of a Dagster partition run (measured), against 0.6 s dropped here.
atexit.register(_AT_VERSION.clear)
_LOG_ENTRY = re.compile(r"\d{20}\.json")


def _remember(key: tuple[str, int, tuple[Any, ...]], dt: Any) -> Any:
    """Share `dt` as the table at its version (key: uri, version, stamp), unless one is shared
    already (returned instead); a table's versions older than its KEPT_VERSIONS newest are
    let go."""
    uri, version, _ = key
    with _AT_VERSION_LOCK:  # prefetch opens from threads
        shared = _AT_VERSION.setdefault(key, dt)
        mine = sorted((k for k in _AT_VERSION if k[0] == uri), key=lambda k: k[1])
        for old in mine[:-KEPT_VERSIONS]:
            del _AT_VERSION[old]
        while len(_AT_VERSION) > _AT_VERSION_MAX:
            _AT_VERSION.pop(next(iter(_AT_VERSION)))
    return shared


def _remote_stamp(info: dict[str, Any]) -> tuple[Any, ...]:
    """An object's ETag and size, as a listing and a HEAD both give them (not its date: a
    listing gives milliseconds, a HEAD whole seconds)."""
    return (str(info.get("ETag") or info.get("etag") or "").strip('"'), info.get("size"))

RECENT_COMMITS = 16
"""Manifest commits read first for the newest lake version: a lake's history grows by a commit
a night, and on object storage each commit is a request."""


def _lake_commits(manifest: Any, back_to: int | None) -> dict[int, dict[str, Any]]:
    """The manifest commits runlake made (lake versions; not vacuum's), by version, read from
    the newest back: far enough to find the newest one (`back_to` None), back to version
    `back_to`, or all of them (-1)."""
    newest = int(manifest.version())
    if back_to is not None and back_to > newest:
        return {}
    window = RECENT_COMMITS if back_to is None else (
        None if back_to < 0 else newest - back_to + 1)
    while True:
        commits = manifest.history(window)
        found = {h["version"]: h for h in commits if lake_meta(h)}
        if window is None or len(commits) < window or back_to is not None or found:
            return found
        window *= 4


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


class DataFile(NamedTuple):
    """A data file of a table (its absolute path or URL) with the first and last day of its
    rows (None when the file carries no statistics)."""

    path: str
    first: date | None
    last: date | None


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
        self._opened: dict[tuple[str, int], Any] = {}

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
            return self.store.is_dir(table, "_delta_log")  # one listing, not a HEAD and one
        return (self.root / table / "_delta_log").is_dir()

    def is_there(self) -> bool:
        """The lake folder exists (anything was ever written to it)."""
        return self.store.is_dir()

    def open(self, table: str, version: int | None = None) -> Any:
        """The DeltaTable of `table` (at `version`), or None when it was never written. A
        table at a given version never changes: it is opened once per Lake, and once per
        process while the log entry of that version is the same file (`_shared`)."""
        if version is None:
            return self._open(table, None)
        key = (table, version)
        if key not in self._opened:
            self._opened[key] = self._shared(table, version)
        return self._opened[key]

    def prefetch(self, versions: dict[str, int]) -> None:
        """Open the tables at these versions (those below 0 are not there) at once, a few
        threads at a time, for the reads that follow: on object storage each open is several
        round trips, which delta-rs waits on without holding the GIL."""
        todo = [(t, v) for t, v in versions.items() if v >= 0 and (t, v) not in self._opened]
        if not self.remote or len(todo) < 2:
            return

        def one(key: tuple[str, int]) -> None:
            with contextlib.suppress(Exception):  # the read that needs it says what is wrong
                self.open(*key)

        self._each(one, todo)

    def _each(self, work: Callable[[T], R], items: list[T]) -> list[R]:
        """`work` of each item, in order: on object storage a few at once (each is a round
        trip or more, waited on without the GIL), locally one after another."""
        if not self.remote or len(items) < 2:
            return [work(i) for i in items]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(PREFETCH_THREADS) as pool:
            return list(pool.map(work, items))

    def newest(self, table: str) -> Any:
        """The DeltaTable of `table` at its newest version, or None when it was never
        written: one listing of its log, and the table opened only the first time this
        process asks for that version. It is shared (`_shared`): read it, never change it;
        a writer opens its own (`open(table)`)."""
        version, stamp = self._newest_entry(table)
        if version < 0:
            return None
        key = (table, version)
        if key not in self._opened:
            self._opened[key] = self._shared(table, version, stamp)
        return self._opened[key]

    def adopt(self, table: str, dt: Any) -> None:
        """Share a DeltaTable this process opened to write and will change no more, at the
        version it holds now, with the readers that come after (`newest`, `open(table, v)`):
        the version a commit made is then not opened again."""
        version = int(dt.version())
        stamp = self._stamp(table, version)
        if stamp is None:
            return
        shared = _remember((self.delta_uri(table), version, stamp), dt)
        self._opened.setdefault((table, version), shared)

    def _stamp(self, table: str, version: int) -> tuple[Any, ...] | None:
        """What tells the log entry of `version` from another file of the same name: its
        size and ETag on object storage, its inode, size and modification time locally (None
        when it is not there)."""
        name = f"{version:020d}.json"
        try:
            if self.remote:
                return _remote_stamp(self.store.fs.info(self.store._key(table, "_delta_log",
                                                                         name)))
            st = os.stat(self.store.path(table, "_delta_log", name))
        except (FileNotFoundError, NotADirectoryError):
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _shared(self, table: str, version: int, stamp: tuple[Any, ...] | None = None) -> Any:
        """The DeltaTable of `table` at `version`, from the process's cache (_AT_VERSION) when
        the log entry of that version is the file it was opened from (`_stamp`; `stamp`
        when the caller has it), so a table removed and written again under the same name is
        opened anew. Without that entry (never written, or cleaned up after a checkpoint) it
        is opened every time."""
        if stamp is None:
            stamp = self._stamp(table, version)
        if stamp is None:
            return self._open(table, version)
        key = (self.delta_uri(table), version, stamp)
        dt = _AT_VERSION.get(key)
        if dt is None:
            dt = self._open(table, version)
            if dt is not None:
                dt = _remember(key, dt)
        return dt

    def log_version(self, table: str) -> int:
        """The newest version of `table` from one listing of its log (-1: no log there):
        what DeltaTable(...).version() says, without reading the log."""
        return self._newest_entry(table)[0]

    def _newest_entry(self, table: str) -> tuple[int, tuple[Any, ...] | None]:
        """The newest version in the log of `table` (-1: no log there) and the `_stamp` of its
        entry, from one listing."""
        try:
            if self.remote:
                listed = {str(f["name"]).rsplit("/", 1)[-1]: f for f in self.store.fs.ls(
                    self.store._key(table, "_delta_log"), detail=True)}
            else:
                listed = dict.fromkeys(os.listdir(self.store.path(table, "_delta_log")))
        except (FileNotFoundError, NotADirectoryError):
            return -1, None
        found = [n for n in listed if _LOG_ENTRY.fullmatch(n)]
        if not found:
            return -1, None
        name = max(found)
        version = int(name[:-5])
        if self.remote:
            return version, _remote_stamp(listed[name])
        return version, self._stamp(table, version)

    def _open(self, table: str, version: int | None, listed: bool = False) -> Any:
        from deltalake import DeltaTable

        if self.remote:
            # One request fewer than asking first whether the log is there.
            from deltalake.exceptions import TableNotFoundError

            try:
                return DeltaTable(self.delta_uri(table), version=version,
                                  storage_options=self.store.options)
            except TableNotFoundError:
                return None
        if not listed and not self.exists(table):
            return None
        return DeltaTable(self.delta_uri(table), version=version)

    def _create(self, table: str) -> Any:
        """Create a table an ingest writes (`WRITTEN`, or the manifest)."""
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

    def tables(self) -> list[str]:
        """Every Delta table of the lake, by its name relative to the lake (`runs`,
        `_lines/runs`, `_derived/int_flags`, ...)."""
        out = []
        for folder in ("", LINES, DERIVED):
            for name in self._children(folder):
                table = f"{folder}/{name}" if folder else name
                if not name.startswith((".", "_")) and self.exists(table):
                    out.append(table)
        return sorted(out)

    def _children(self, folder: str) -> list[str]:
        if self.remote:
            try:
                found = self.store.fs.ls(self.store._key(*([folder] if folder else [])),
                                         detail=False)
            except FileNotFoundError:
                return []
            return [str(f).rstrip("/").rsplit("/", 1)[-1] for f in found]
        try:
            return [p.name for p in (self.root / folder).iterdir() if p.is_dir()]
        except OSError:
            return []

    def versions(self) -> dict[str, int]:
        """The current version of every table (the written tables and the manifest at -1
        when not written yet)."""
        out = {t: -1 for t in (*WRITTEN, MANIFEST)}
        tables = [f"{folder}/{name}" if folder else name
                  for folder in ("", LINES, DERIVED) for name in self._children(folder)
                  if not name.startswith((".", "_"))]
        found = self._each(self.log_version, tables)  # a listing each
        out.update({t: v for t, v in zip(tables, found, strict=True) if v >= 0})
        return out

    def meta(self, version: int | None = None) -> dict[str, Any]:
        """What the manifest commit of a lake version (default: the newest) recorded."""
        manifest = self.newest(MANIFEST)
        if manifest is None:
            return {}
        found = {v: lake_meta(h) for v, h in _lake_commits(manifest, version).items()}
        if not found:
            return {}
        return found[max(found) if version is None else version] if (
            version is None or version in found) else {}

    def snapshot(self, as_of: int | str | None = None) -> dict[str, int]:
        """Table versions of one consistent lake version: the manifest's newest commit made by
        an ingest (or forget, or repair), or `as_of` (such a manifest version, or an ISO
        timestamp), with the versions of the tables that manifest commit completed (by their
        names in this layout: a version written before it names the tables as read by their
        own names)."""
        manifest = self.newest(MANIFEST)
        if manifest is None:
            if as_of is not None:
                raise InputError("the lake has no history yet: run `runlake ingest PATH`")
            return {}
        # The lake's versions are the manifest commits runlake made: the commits vacuum
        # makes to the table (VACUUM START, VACUUM END) change no row and complete no ingest.
        history = _lake_commits(manifest, as_of if isinstance(as_of, int) or as_of is None
                                else -1)
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
        if meta.get("layout", 1) < LAYOUT:
            tables = {stored(t): v for t, v in tables.items()}
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
        dt = self.newest(table) if version is None else self.open(table, version)
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

    def file_days(self, table: str, version: int) -> list["DataFile"]:
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
        return sorted(DataFile(self.store.url(table, *unquote(path).split("/")), a, b)
                      for path, a, b in zip(
            actions.column("path").to_pylist(), lo, hi, strict=True))

    def columns(self, table: str, version: int | None = None) -> set[str]:
        """The columns of `table` at `version` (default: current; none below 0: the table
        was not yet in that lake version, though another writer may have created it since)."""
        if version is not None and version < 0:
            return set()
        dt = self.newest(table) if version is None else self.open(table, version)
        if dt is None:
            return set()
        return {f.name for f in pa.schema(dt.schema().to_arrow())}

    # -- reading ----------------------------------------------------------------------------
    def known_files(self) -> dict[str, KnownFile]:
        """source_file -> what the manifest says of it, for every file in the manifest."""
        dt = self.newest(MANIFEST)
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
        """Commit sequences on this home take turns (the parsing before runs in parallel):
        the versions a manifest commit records then hold that commit whole and nothing of
        another's. Waits for the other writer; never fails for it. On a local home the lock
        is a file lock (lake/.commit.lock); on object storage, an object (lake/_writer.lock)
        created only if it is not there (a conditional put), which a writer that died leaves
        behind until WRITER_LEASE_SECONDS have passed, or at once when it ran on this machine."""
        if self.remote:
            with self._bucket_lock():
                yield
            return
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".commit.lock", "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    @contextmanager
    def _bucket_lock(self) -> Iterator[None]:
        import socket
        import uuid

        fs, key = self.store.fs, self.store._key(WRITER_LOCK)
        me = json.dumps({"host": socket.gethostname(), "pid": os.getpid(),
                         "id": uuid.uuid4().hex, "at": time.time()}).encode()
        wait = 0.05
        while True:
            try:
                fs.pipe_file(key, me, mode="create")
                break
            except FileExistsError:
                try:
                    held = bytes(fs.cat_file(key))
                except FileNotFoundError:
                    continue  # released meanwhile
                if _abandoned(held) and bytes(fs.cat_file(key)) == held:
                    with contextlib.suppress(FileNotFoundError):
                        fs.rm(key)
                    continue
                time.sleep(wait * (0.5 + random.random()))
                wait = min(2.0, wait * 2)
        try:
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                if bytes(fs.cat_file(key)) == me:
                    fs.rm(key)

    def commit(self, parts: Path, sources: list[str], manifest: pa.Table, ingest_id: str,
               days: Iterable[date] = (), retention_hours: float = DEFAULT_RETENTION_HOURS,
               action: str = "ingest", *, derive: "Derive") -> CommitResult:
        """Commit one lake version (see the module docstring): the staged parts of every
        written table (replacing all rows of `sources`; with action "forget" or "repair" no
        parts, only removals), the derived tables (`derive`, given the lake version readers
        saw before: transforms.warehouse.derive.derive), the upkeep of the months it touched
        (`maintain`), then the manifest rows of `sources`, naming every table's version."""
        from deltalake import CommitProperties, write_deltalake

        lakecommit.vacuum_hours(retention_hours)  # refused before anything is committed
        result = CommitResult(days=sorted(set(days)))
        if not self.remote:
            self.root.mkdir(parents=True, exist_ok=True)
        before = self.snapshot()
        for t in DATA_TABLES:
            version, added, removed = self._commit_table(t, parts / t, sources, ingest_id)
            result.versions[stored(t)] = version
            result.rows_added[t] = added
            result.rows_removed[t] = removed
        extra = derive(self, before)
        # Before the manifest, so the versions it records include the compacted files (the
        # files compaction replaced may then be vacuumed without breaking that version).
        result.maintenance = self.maintain({month_of(d) for d in result.days}, retention_hours)
        result.versions = {t: v for t, v in self.versions().items()
                           if t != MANIFEST and (v >= 0 or t in result.versions)}
        meta = {"action": action, "ingest_id": ingest_id, "files": sources[:1000],
                "n_files": len(sources), "layout": LAYOUT, "tables": result.versions,
                "rows_added": result.rows_added, "rows_removed": result.rows_removed, **extra}
        data = manifest.cast(lake_schema(MANIFEST))
        predicate = in_predicate(sources)

        def write_manifest() -> int:
            manifest = self.newest(MANIFEST)
            if manifest is None:
                self._create(MANIFEST)
            else:
                lakecommit.with_properties(self, MANIFEST, manifest, TABLE_PROPERTIES)
            write_deltalake(self.delta_uri(MANIFEST), data, mode="overwrite", predicate=predicate,
                            schema_mode="merge", storage_options=self.store.options or None,
                            commit_properties=CommitProperties(
                                custom_metadata={"runlake": json.dumps(meta)}))
            return self.log_version(MANIFEST)  # under the commit lock: this commit

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

WRITER_LOCK = "_writer.lock"
"""lake/_writer.lock on object storage: the writer committing now (Lake.committing)."""
WRITER_LEASE_SECONDS = 3600.0
"""How long the lock of a writer on another machine holds before another may take it."""


def _abandoned(held: bytes) -> bool:
    """A bucket lock left by a writer that died: one of this machine whose process is gone, or
    one older than WRITER_LEASE_SECONDS."""
    import socket

    try:
        owner = json.loads(held)
        host, pid, at = owner["host"], int(owner["pid"]), float(owner["at"])
    except (ValueError, KeyError, TypeError):
        return True  # not a lock runlake wrote
    if time.time() - at > WRITER_LEASE_SECONDS:
        return True
    if host != socket.gethostname():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def clear_scratch(parts: Path) -> None:
    shutil.rmtree(parts, ignore_errors=True)


OWNER = "owner.pid"
"""The pid of the process that owns a scratch folder (.scratch/<name>/owner.pid): a folder
no live process owns was left by a crash (transforms.ingest.clear_abandoned_scratch)."""


def claim_scratch(folder: Path) -> Path:
    """Create a scratch folder owned by this process."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / OWNER).write_text(str(os.getpid()))
    return folder
