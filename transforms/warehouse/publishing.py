"""Building and publishing warehouse.duckdb (transforms.warehouse): the derived tables of a
lake version, the file of views built aside and renamed into place, and in-memory connections
to the lake as it is now or was."""

import contextlib
import fcntl
import json
import os
import time
import uuid
from pathlib import Path

import duckdb

from transforms import db
from transforms.contracts.schemas import TABLES
from transforms.errors import InputError
from transforms.lake import DEFAULT_RETENTION_HOURS, Lake, history
from transforms.lake.staging import SUPERSEDED_LINES, prepare, run_sql
from transforms.lake.store import locate
from transforms.warehouse import FILE_NAME, FORGET_PENDING, _built_stamp, path
from transforms.warehouse.derived import (
    DERIVED,
    LAKE_WIDE,
    WEEKS,
    WEEKS_FILE,
    derive,
    derived_intact,
    derived_sql,
    lake_wide_sql,
)
from transforms.warehouse.sqlfiles import sql_files

# Readable by the duckdb CLI releases people have installed, not only by the newest library.


STORAGE_VERSION = "v1.5.0"


def _stamp_text(home: Path | str, state: str) -> str:
    return f"{state}\n{locate(home).name}"


def is_current(home: Path | str) -> bool:
    """True when the published warehouse was built from the lake's newest version in this
    home folder; False after an ingest that died before publishing, after a failed build, in
    a moved or copied home (its views name the old paths), or when the file does not open."""
    built = _built_stamp(home)
    if not (path(home).exists() and built.exists()):
        return False
    state = Lake(home).state()
    if built.read_text() != _stamp_text(home, state):
        return False
    if not derived_intact(Lake(home).store, state):
        return False  # a derived file deleted or truncated: compute it again
    try:
        db.connect(str(path(home)), read_only=True).close()
    except duckdb.Error:
        return False  # a damaged file: build it again
    return True


def build(home: Path | str, snapshot: dict[str, int] | None = None,
          derived: str | None = None) -> Path:
    """Rebuild the warehouse file for one lake version (default: the newest) of `home`;
    returns its path. Intermediate views read their derived files when given (see
    `derive`: a folder relative to the lake)."""
    lake = Lake(home)
    target = path(home)
    target.parent.mkdir(parents=True, exist_ok=True)
    snapshot = lake.snapshot() if snapshot is None else snapshot
    state = lake.state(snapshot)
    _built_stamp(home).unlink(missing_ok=True)
    tmp = target.with_name(f".{FILE_NAME}.{uuid.uuid4().hex}.tmp")
    try:
        con = db.connect(str(tmp), storage_compatibility_version=STORAGE_VERSION)
        try:
            prepare(con, home, snapshot, derived)
            weeks = []
            if derived is not None:
                with contextlib.suppress(FileNotFoundError):
                    weeks = json.loads(lake.store.read_text(*derived.split("/"), WEEKS_FILE))
            for f in sql_files():
                stored = None
                if f.parent.name == "intermediate" and derived is not None:
                    stored = lake_wide_sql(lake.store, derived, f.stem) \
                        if f.stem in LAKE_WIDE else derived_sql(con, weeks, lake.store, f.stem)
                if stored is not None:
                    con.execute(f"CREATE VIEW intermediate.{f.stem} AS {stored}")
                else:
                    run_sql(con, f)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(tmp, target)
        _built_stamp(home).write_text(_stamp_text(home, state))
    finally:
        tmp.unlink(missing_ok=True)
        Path(str(tmp) + ".wal").unlink(missing_ok=True)
    return target


def publish(home: Path | str, retention_hours: float = DEFAULT_RETENTION_HOURS) -> Path:
    """Derive and build the warehouse for the lake's newest version, one publisher at a time
    (a later one finds the work done); derived folders of older versions go once they are
    older than the retention. For an s3:// home the lock is the local warehouse folder's:
    publishers on other machines each build their own warehouse file, and may derive the
    same lake version at once (each writes the same files)."""
    where = locate(home)
    where.folder.mkdir(parents=True, exist_ok=True)
    with open(where.folder / ".publish.lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            if is_current(home):
                return path(home)
            lake = Lake(home)
            snapshot = lake.snapshot()
            state = lake.state(snapshot)
            derived = derive(home, snapshot, state)
            target = build(home, snapshot, derived)
            cutoff = time.time() - retention_hours * 3600
            store = lake.store
            keep = set(json.loads(store.read_text(*derived.split("/"), WEEKS_FILE)))
            current = derived.rsplit("/", 1)[-1]
            for name, mtime in store.folder_ages(DERIVED).items():
                if name not in (current, WEEKS) and mtime < cutoff:
                    store.rmtree(DERIVED, name)
            for name, mtime in store.folder_ages(DERIVED, WEEKS).items():
                if name not in keep and mtime < cutoff:
                    store.rmtree(DERIVED, WEEKS, name)
            return target
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def live(home: Path | str) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with every view computed from the lake as it is now (each
    table's newest version; a table changed by anything but an ingest then fails the checks
    rather than hiding behind the version the manifest pinned), ignoring lake/_derived and
    warehouse.duckdb: what the checks read before a warehouse is published."""
    return _computed(home, Lake(home).versions())


def at(home: Path | str, as_of: int | str,
       temp: Path | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with every view of an earlier lake version: a manifest version
    (`runlake history` lists them) or a timestamp; its files must not have been vacuumed.
    `temp`: the folder it spills into (default DuckDB's, `.tmp` in the current folder; a
    sandboxed connection needs its own, db.sandbox)."""
    lake = Lake(home)
    snapshot = lake.snapshot(as_of)
    try:
        con = _computed(home, snapshot, temp)
        try:
            con.execute("SELECT count(*) FROM staging.stg_ingest_files").fetchall()
            for t in TABLES:
                con.execute(f"SELECT count(*) FROM staging.stg_{t}").fetchall()
        except BaseException:
            con.close()
            raise
    except duckdb.IOException as e:
        if snapshot == lake.snapshot():
            raise  # the newest version's files missing: damage, for `runlake doctor`
        raise InputError(f"lake version {snapshot.get('ingest_files')} is older than the "
                         "retention (RUNLAKE_RETENTION_HOURS) and its files were vacuumed; "
                         "choose a newer one (`runlake history`)") from e
    return con


def _computed(home: Path | str, snapshot: dict[str, int],
              temp: Path | None = None) -> duckdb.DuckDBPyConnection:
    con = db.connect(":memory:", False,
                     **({} if temp is None else {"temp_directory": str(temp)}))
    try:
        prepare(con, home, snapshot)
        con.execute(f"CREATE TABLE staging.superseded_lines__computed AS {SUPERSEDED_LINES}")
        con.execute("CREATE OR REPLACE VIEW staging.stg_superseded_lines AS "
                    "SELECT * FROM staging.superseded_lines__computed")
        for f in sql_files():
            run_sql(con, f)
            if f.parent.name == "intermediate":
                # Computed once here, as `derive` stores them, not once per query.
                con.execute(f"CREATE TABLE intermediate.{f.stem}__computed AS "
                            f"SELECT * FROM intermediate.{f.stem}")
                con.execute(f"CREATE OR REPLACE VIEW intermediate.{f.stem} AS "
                            f"SELECT * FROM intermediate.{f.stem}__computed")
    except BaseException:
        con.close()
        raise
    return con


def finish_pending(home: Path | str,
                   retention_hours: float = DEFAULT_RETENTION_HOURS) -> list[str]:
    """Finish a forget that was stopped after its commit and before it built the views: build
    them (the files it removed, returned, are then in no reader's view). A forget that is
    still running is left alone; one that died before its commit forgot nothing."""
    marker = locate(home).folder / FORGET_PENDING
    try:
        pending = json.loads(marker.read_text())
    except FileNotFoundError:
        return []
    except ValueError:
        pending = {}  # a damaged marker: build the views again, to be sure

    def committed() -> bool:
        lake = Lake(home)
        return not pending or any(h.get("ingest_id") == pending.get("ingest_id")
                                  for h in history(lake))

    done = committed()
    if not done:
        if _alive(pending.get("pid")):
            return []  # that forget is still running: it builds the views itself
        done = committed()  # it may have committed just before it ended
        if not done:
            marker.unlink(missing_ok=True)  # it died before its commit: nothing forgotten
            return []
    publish(home, retention_hours)
    marker.unlink(missing_ok=True)
    return list(pending.get("files", []))


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True
