"""Builds RUNLAKE_HOME/warehouse.duckdb: a file of views over the lake, plus `flag_codes` and
the model alias and price tables (`model_aliases`, `model_prices`: transforms.contracts.models).

`staging.stg_<table>` reads each lake table as stored; the SQL under `sql/` builds everything
else on them, among it the public view of each lake table (runs, messages, spans, ...), where
links across files are resolved (a span's run, a run's model and token totals from its spans,
flags derived from several tables).

The file is built aside and renamed into place, so readers holding the old one `read_only`
are never broken, and it holds no data but small lookup tables: opening it is cheap. SQL under
`sql/` is applied in layer order (macros, staging, intermediate, marts, checks); a broken
reference fails the build loudly and leaves the previous warehouse in place.
"""

import fcntl
import json
import os
import shutil
import time
import uuid
from pathlib import Path

import duckdb

from transforms import db
from transforms.contracts.schemas import TABLES
from transforms.errors import InputError, WarehouseError
from transforms.lake import DEFAULT_RETENTION_HOURS, Lake
from transforms.lake.staging import SUPERSEDED_LINES, prepare, run_sql
from transforms.warehouse.derived import (
    DERIVED,
    GROUP_WEEKS,
    NEIGHBOUR_DAYS,
    WEEKS,
    WEEKS_FILE,
    derive,
    derived_intact,
    derived_sql,
)
from transforms.warehouse.sqlfiles import SQL_DIR, sql_files, view_docs

__all__ = ["DERIVED", "GROUP_WEEKS", "NEIGHBOUR_DAYS", "SQL_DIR", "WEEKS", "WEEKS_FILE",
           "WarehouseError", "at", "build", "connect", "derive", "is_current", "live", "path",
           "publish", "view_docs"]

FILE_NAME = "warehouse.duckdb"
# Readable by the duckdb CLI releases people have installed, not only by the newest library.


STORAGE_VERSION = "v1.5.0"


def path(home: Path) -> Path:
    return home / FILE_NAME


def _built_stamp(home: Path) -> Path:
    """The lake state (and home folder) the published warehouse file was built from."""
    return home / f".{FILE_NAME}.lake_state"


def _stamp_text(home: Path, state: str) -> str:
    return f"{state}\n{home.resolve()}"


def is_current(home: Path) -> bool:
    """True when the published warehouse was built from the lake's newest version in this
    home folder; False after an ingest that died before publishing, after a failed build, in
    a moved or copied home (its views name the old paths), or when the file does not open."""
    built = _built_stamp(home)
    if not (path(home).exists() and built.exists()):
        return False
    state = Lake(home).state()
    if built.read_text() != _stamp_text(home, state):
        return False
    if not derived_intact(home, state):
        return False  # a derived file deleted or truncated: compute it again
    try:
        db.connect(str(path(home)), read_only=True).close()
    except duckdb.Error:
        return False  # a damaged file: build it again
    return True


def build(home: Path, snapshot: dict[str, int] | None = None,
          derived: Path | None = None) -> Path:
    """Rebuild the warehouse file for one lake version (default: the newest) under `home`;
    returns its path. Intermediate views read their derived files when given (see
    `derive`)."""
    home.mkdir(parents=True, exist_ok=True)
    lake = Lake(home)
    snapshot = lake.snapshot() if snapshot is None else snapshot
    state = lake.state(snapshot)
    target = path(home)
    _built_stamp(home).unlink(missing_ok=True)
    tmp = home / f".{FILE_NAME}.{uuid.uuid4().hex}.tmp"
    try:
        con = db.connect(str(tmp), storage_compatibility_version=STORAGE_VERSION)
        try:
            prepare(con, home, snapshot, derived)
            listing = derived / WEEKS_FILE if derived is not None else None
            weeks = json.loads(listing.read_text()) if listing and listing.exists() else []
            for f in sql_files():
                stored = derived_sql(con, weeks, home / "lake" / DERIVED / WEEKS, f.stem) \
                    if f.parent.name == "intermediate" else None
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


def publish(home: Path, retention_hours: float = DEFAULT_RETENTION_HOURS) -> Path:
    """Derive and build the warehouse for the lake's newest version, one publisher at a time
    (a later one finds the work done); derived folders of older versions go once they are
    older than the retention."""
    home.mkdir(parents=True, exist_ok=True)
    with open(home / ".publish.lock", "a+") as fh:
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
            keep = set(json.loads((derived / WEEKS_FILE).read_text()))
            for old in (home / "lake" / DERIVED).glob("*"):
                if old not in (derived, home / "lake" / DERIVED / WEEKS) \
                        and old.stat().st_mtime < cutoff:
                    shutil.rmtree(old, ignore_errors=True)
            for old in (home / "lake" / DERIVED / WEEKS).glob("*"):
                if old.name not in keep and old.stat().st_mtime < cutoff:
                    shutil.rmtree(old, ignore_errors=True)
            return target
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def live(home: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with every view computed from the lake as it is now (each
    table's newest version; a table changed by anything but an ingest then fails the checks
    rather than hiding behind the version the manifest pinned), ignoring lake/_derived and
    warehouse.duckdb: what the checks read before a warehouse is published."""
    return _computed(home, Lake(home).versions())


def at(home: Path, as_of: int | str) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with every view of an earlier lake version: a manifest version
    (`runlake history` lists them) or a timestamp; its files must not have been vacuumed."""
    lake = Lake(home)
    snapshot = lake.snapshot(as_of)
    con = _computed(home, snapshot)
    try:
        con.execute("SELECT count(*) FROM staging.stg_ingest_files").fetchall()
        for t in TABLES:
            con.execute(f"SELECT count(*) FROM staging.stg_{t}").fetchall()
    except duckdb.IOException as e:
        con.close()
        raise InputError(f"lake version {snapshot.get('ingest_files')} is older than the "
                         "retention and its files were vacuumed; choose a newer one") from e
    return con


def _computed(home: Path, snapshot: dict[str, int]) -> duckdb.DuckDBPyConnection:
    con = db.connect()
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


def connect(home: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the warehouse; many may be open while a writer ingests. In a
    moved or copied home the views are built again first (they name the lake's files)."""
    target = path(home)
    if not target.exists():
        raise FileNotFoundError(f"no warehouse at {target}: run `runlake ingest PATH` first")
    built = _built_stamp(home)
    if built.exists() and not built.read_text().endswith(f"\n{home.resolve()}"):
        publish(home)
    return db.connect(str(target), read_only=True)
