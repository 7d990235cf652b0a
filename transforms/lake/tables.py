"""A lake's Delta tables as readers see them: each table opened at a version (once per
process while that version's log entry is the same file), its newest version from one listing
of its log, the versions of one consistent lake version (the manifest's commits), and what a
table's data files hold. `Lake` (transforms.lake.core) adds writing to these."""

import atexit
import contextlib
import re
import threading
from collections.abc import Callable
from datetime import date
from typing import Any, NamedTuple, TypeVar
from urllib.parse import unquote

import pyarrow as pa

from transforms.errors import InputError, RunlakeError
from transforms.lake.commit import lake_meta
from transforms.lake.files import DERIVED, LINES, MANIFEST, WRITTEN, lines_path
from transforms.lake.store import Store

T = TypeVar("T")
R = TypeVar("R")

LAYOUT = 2
"""The layout a manifest commit's versions name (its `layout`): 2, the tables as read under
lake/_lines/ and the derived tables; a commit without it named the tables as read
lake/<table> (transforms.lake.migrate moves such a lake once)."""

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


def kept_versions(uri: str) -> list[int]:
    """The versions of the table at `uri` this process keeps open to share, oldest first."""
    with _AT_VERSION_LOCK:
        return sorted(k[1] for k in _AT_VERSION if k[0] == uri)


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



class Tables:
    """The reading half of a lake (`Lake`): its store, and the tables it opened.

    Two kinds of version, asked by name: a table's own (`newest_version`, `newest_versions`
    for every table, `newest_table` for its DeltaTable, `open` at a given one), and the lake's,
    a manifest commit (`tables_at`: each table's version in it; `commit_meta`: what it
    recorded)."""

    store: Store
    remote: bool
    _opened: dict[tuple[str, int], Any]

    def uri(self, table: str) -> str:
        """The table's folder as a path (or s3:// URL), for people and other engines."""
        return self.store.url(table)

    def delta_uri(self, table: str) -> str:
        """The table as delta-rs opens it (transforms.lake.store.Store.delta_url)."""
        return self.store.delta_url(table)

    def exists(self, table: str) -> bool:
        return self.store.is_dir(table, "_delta_log")  # one listing, not a HEAD and one

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

    def newest_table(self, table: str) -> Any:
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
        version it holds now, with the readers that come after (`newest_table`, `open(table, v)`):
        the version a commit made is then not opened again."""
        version = int(dt.version())
        stamp = self._stamp(table, version)
        if stamp is None:
            return
        shared = _remember((self.delta_uri(table), version, stamp), dt)
        self._opened.setdefault((table, version), shared)

    def _stamp(self, table: str, version: int) -> tuple[Any, ...] | None:
        """What tells the log entry of `version` from another file of the same name
        (Store.stamp; None when it is not there)."""
        return self.store.stamp(table, "_delta_log", f"{version:020d}.json")

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

    def newest_version(self, table: str) -> int:
        """The newest version of `table` from one listing of its log (-1: no log there):
        what DeltaTable(...).version() says, without reading the log."""
        return self._newest_entry(table)[0]

    def _newest_entry(self, table: str) -> tuple[int, tuple[Any, ...] | None]:
        """The newest version in the log of `table` (-1: no log there) and the `_stamp` of its
        entry, from one listing."""
        try:
            listed = self.store.listing(table, "_delta_log")
        except FileNotFoundError:
            return -1, None
        found = [n for n in listed if _LOG_ENTRY.fullmatch(n)]
        if not found:
            return -1, None
        name = max(found)
        version = int(name[:-5])
        stamp = listed[name]
        return version, stamp if stamp is not None else self._stamp(table, version)

    def _open(self, table: str, version: int | None) -> Any:
        """The DeltaTable, or None when it was never written (one request fewer on object
        storage than asking first whether its log is there)."""
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        try:
            return DeltaTable(self.delta_uri(table), version=version,
                              storage_options=self.store.options or None)
        except TableNotFoundError:
            return None

    def tables(self) -> list[str]:
        """Every Delta table of the lake, by its name relative to the lake (`runs`,
        `_lines/runs`, `_derived/int_flags`, ...)."""
        out = []
        for folder in ("", LINES, DERIVED):
            for name in self.store.folders(*([folder] if folder else [])):
                table = f"{folder}/{name}" if folder else name
                if not name.startswith((".", "_")) and self.exists(table):
                    out.append(table)
        return sorted(out)

    def newest_versions(self) -> dict[str, int]:
        """The current version of every table (the written tables and the manifest at -1
        when not written yet)."""
        out = {t: -1 for t in (*WRITTEN, MANIFEST)}
        tables = [f"{folder}/{name}" if folder else name
                  for folder in ("", LINES, DERIVED)
                  for name in self.store.folders(*([folder] if folder else []))
                  if not name.startswith((".", "_"))]
        found = self._each(self.newest_version, tables)  # a listing each
        out.update({t: v for t, v in zip(tables, found, strict=True) if v >= 0})
        return out

    def commit_meta(self, version: int | None = None) -> dict[str, Any]:
        """What the manifest commit of a lake version (default: the newest) recorded."""
        manifest = self.newest_table(MANIFEST)
        if manifest is None:
            return {}
        found = {v: lake_meta(h) for v, h in _lake_commits(manifest, version).items()}
        if not found:
            return {}
        return found[max(found) if version is None else version] if (
            version is None or version in found) else {}

    def tables_at(self, as_of: int | str | None = None) -> dict[str, int]:
        """Table versions of one consistent lake version: the manifest's newest commit made by
        an ingest (or forget, or repair), or `as_of` (such a manifest version, or an ISO
        timestamp), with the versions of the tables that manifest commit completed (by their
        names in this layout: a version written before it names the tables as read by their
        own names)."""
        manifest = self.newest_table(MANIFEST)
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
            tables = {lines_path(t): v for t, v in tables.items()}
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
        dt = self.newest_table(table) if version is None else self.open(table, version)
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
        dt = self.newest_table(table) if version is None else self.open(table, version)
        if dt is None:
            return set()
        return {f.name for f in pa.schema(dt.schema().to_arrow())}

    def known_files(self) -> dict[str, KnownFile]:
        """source_file -> what the manifest says of it, for every file in the manifest."""
        dt = self.newest_table(MANIFEST)
        if dt is None:
            return {}
        cols = ["source_file", "sha256", "bytes", "tools_sha256", "kind", "error"]
        have = self.columns(MANIFEST)
        rows = pa.table(dt.to_pyarrow_table(columns=[c for c in cols if c in have])).to_pylist()
        return {r["source_file"]: KnownFile(r["sha256"], r["bytes"], r.get("tools_sha256"),
                                            r["kind"], r.get("error")) for r in rows}
