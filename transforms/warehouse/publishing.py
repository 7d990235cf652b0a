"""The views of a lake version, and warehouse.duckdb (transforms.warehouse).

`attach` makes every model of sql/ on a DuckDB connection over one lake version, through the
one builder (transforms.warehouse.builder): the staging models over the rows as ingested, each
stored model (its header's `-- stored:`) over the table the lake version stores, the other
views as SQL over those. `build` writes them to warehouse.duckdb (made aside and renamed into
place); only writers call it: an ingest, `runlake publish`, forget, the Dagster warehouse
asset. Readers open the file when it shows the lake's newest version from this home, and
otherwise make the same views in memory (`in_memory`), so a reader never writes.
"""

import os
import uuid
from pathlib import Path

import duckdb

from transforms import db
from transforms.contracts.schemas import TABLES
from transforms.errors import InputError
from transforms.lake import DEFAULT_RETENTION_HOURS, MANIFEST, WRITTEN, Lake, lake_schema
from transforms.lake.store import locate
from transforms.warehouse import BUILD, FILE_NAME, built_for, log_state, path
from transforms.warehouse.builder import IN_MEMORY
from transforms.warehouse.builder import build as build_models
from transforms.warehouse.derive import digest
from transforms.warehouse.staging import prepare
from transforms.warehouse.stored import version_source

# Readable by the duckdb CLI releases people have installed, not only by the newest library.
STORAGE_VERSION = "v1.5.0"


def attach(con: duckdb.DuckDBPyConnection, lake: Lake, snapshot: dict[str, int],
           materialize: bool = False) -> None:
    """Every model of sql/ on `con`, over the tables of the lake version `snapshot`: a stored
    model (`-- stored:`) reads the table that version stores; one that version lacks (a
    version written before runlake stored it) is computed by its SQL instead, the `table`
    models once as tables with `materialize` (an in-memory connection)."""
    lake.prefetch(snapshot)  # on object storage, every table of the version opened at once
    prepare(con, lake, snapshot)
    build_models(con, version_source(lake, snapshot, IN_MEMORY if materialize else frozenset()))


def is_current(home: Path | str) -> bool:
    """True when warehouse.duckdb shows the lake's newest version from this home folder;
    False after a commit that was not followed by a build, in a moved or copied home (its
    views name the old paths), or when the file does not open."""
    target = path(home)
    if not target.exists():
        return False
    try:
        con = db.connect(str(target), read_only=True)
    except duckdb.Error:
        return False  # a damaged file: build it again
    try:
        return built_for(con) == (locate(home).name, *log_state(home))
    finally:
        con.close()


def build(home: Path | str, target: Path | None = None) -> Path:
    """Write warehouse.duckdb for the lake's newest version of `home` (made aside, renamed
    into place), or the file `target` (see `staged`); returns its path."""
    return _build(home, target, keep=False)[1]


def _build(home: Path | str, target: Path | None,
           keep: bool) -> tuple[duckdb.DuckDBPyConnection | None, Path]:
    """`build`; with `keep`, also the connection that wrote the file, still open on it
    (renamed into place), whose caches hold what it read of the lake's files. It holds the
    file's write lock: only for a file no reader opens (`staged`)."""
    lake = Lake(home)
    target = path(home) if target is None else target
    target.parent.mkdir(parents=True, exist_ok=True)
    log, stamp = log_state(home)
    snapshot = lake.tables_at()
    tmp = target.with_name(f".{FILE_NAME}.{uuid.uuid4().hex}.tmp")
    try:
        con = db.connect(str(tmp), storage_compatibility_version=STORAGE_VERSION)
        try:
            attach(con, lake, snapshot)
            schema = BUILD.split(".")[0]
            con.execute(f"CREATE SCHEMA {schema}")
            con.execute(f"CREATE TABLE {BUILD} (home VARCHAR, log_version BIGINT, "
                        "lake_version BIGINT, log_stamp VARCHAR)")
            con.execute(f"INSERT INTO {BUILD} VALUES (?, ?, ?, ?)",
                        [locate(home).name, log, snapshot.get(MANIFEST, -1), stamp])
            con.execute("CHECKPOINT")
            if not keep:
                con.close()
            os.replace(tmp, target)
        except BaseException:
            con.close()
            raise
    finally:
        tmp.unlink(missing_ok=True)
        Path(str(tmp) + ".wal").unlink(missing_ok=True)
    return (con if keep else None), target


def publish(home: Path | str, retention_hours: float = DEFAULT_RETENTION_HOURS,
            build_file: bool = True) -> Path:
    """Bring the warehouse up to the lake's newest version, under the commit lock: derive the
    tables again first when the SQL, the tool registry or the model tables changed since the
    lake version was committed (a new lake version), then build warehouse.duckdb unless it is
    current (or `build_file` is False)."""
    from transforms.lake import migrate

    lake = Lake(home)
    migrate.upgrade(lake)
    with lake.committing():
        if lake.newest_version(MANIFEST) >= 0 \
                and lake.commit_meta().get("derived_from") != digest(lake):
            commit_derived(lake, retention_hours)
        if build_file and not is_current(home) and not _adopt(home):
            build(home)
    _drop_staged(home)
    return path(home)


STAGED_SUFFIX = ".staged"


def _staged_path(home: Path | str) -> Path:
    """warehouse.duckdb.staged: the warehouse file built aside by `staged`."""
    return path(home).with_name(FILE_NAME + STAGED_SUFFIX)


def _built_now(con: duckdb.DuckDBPyConnection, home: Path | str) -> bool:
    """The warehouse file open on `con` was built from this home for its newest lake version."""
    return built_for(con) == (locate(home).name, *log_state(home))


def staged(home: Path | str) -> duckdb.DuckDBPyConnection | None:
    """A connection to a warehouse file built aside (warehouse.duckdb.staged) for the lake's
    newest version (the one that built it: read it, write nothing), when it is what `live`
    would show (every table's newest version is the one the newest lake version names), else
    None. What the Dagster partition run checks the night with: `publish` then renames that
    file into place instead of building the views a second time, if no commit came
    between."""
    lake = Lake(home)
    # The connection that built the file reads it: the lake's files it read to make the
    # views are not read again (on object storage, a request or two a file).
    con, _ = _build(home, _staged_path(home), keep=True)
    assert con is not None
    snapshot = lake.tables_at()
    now = {**snapshot, **lake.newest_versions()}
    if {t: v for t, v in now.items() if v >= 0} != {t: v for t, v in snapshot.items()
                                                     if v >= 0} or not _built_now(con, home):
        # A table changed outside a commit of runlake's (`live` shows it), or a commit came.
        con.close()
        return None
    return con


def _adopt(home: Path | str) -> bool:
    """Rename the staged warehouse file into place when it was built for the lake's newest
    version from this home (under the commit lock: no commit comes between)."""
    aside = _staged_path(home)
    if not aside.exists():
        return False
    try:
        con = db.connect(str(aside), read_only=True)
    except duckdb.Error:
        return False
    try:
        fits = _built_now(con, home)
    finally:
        con.close()
    if fits:
        os.replace(aside, path(home))
    return fits


def _drop_staged(home: Path | str) -> None:
    aside = _staged_path(home)
    aside.unlink(missing_ok=True)
    Path(str(aside) + ".wal").unlink(missing_ok=True)


def commit_derived(lake: Lake, retention_hours: float = DEFAULT_RETENTION_HOURS) -> int:
    """A lake version that changes no row as ingested and derives the tables again (the SQL,
    the registry or the model tables changed); returns its version."""
    from transforms.warehouse.lake_version import commit_version  # it imports this module

    nothing = lake.where.scratch / f"derive-{uuid.uuid4().hex}"
    result = commit_version(lake, nothing, [], lake_schema(MANIFEST).empty_table(),
                            uuid.uuid4().hex, (), retention_hours, action="derive")
    return result.versions[MANIFEST]


def in_memory(home: Path | str, snapshot: dict[str, int] | None = None,
              temp: Path | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with every view of a lake version (default: the newest),
    read from the lake's tables where they are now: what a reader uses when warehouse.duckdb
    is missing, stale or names another home's paths. Writes nothing."""
    from transforms.lake import migrate

    lake = Lake(home)
    if lake.is_legacy() or migrate.needs_move(lake):
        raise InputError(f"the lake under {lake.home} was written by an earlier runlake: run "
                         "`runlake publish` once to bring it up to date")
    snapshot = lake.tables_at() if snapshot is None else snapshot
    con = db.connect(":memory:", False,
                     **({} if temp is None else {"temp_directory": str(temp)}))
    try:
        attach(con, lake, snapshot, materialize=True)
    except BaseException:
        con.close()
        raise
    return con


def computed(home: Path | str) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with every view of the newest lake version computed by its SQL
    from the rows as ingested, ignoring the derived tables: what they must equal."""
    lake = Lake(home)
    written = {t: v for t, v in lake.tables_at().items()
               if t in WRITTEN or t == MANIFEST}
    return in_memory(home, written)


def live(home: Path | str) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with every view over each table's newest version (a table
    changed by anything but a commit of runlake's then fails the checks rather than hiding
    behind the version the manifest named): what the checks read right after an ingest."""
    lake = Lake(home)
    return in_memory(home, {**lake.tables_at(), **lake.newest_versions()})


def at(home: Path | str, as_of: int | str,
       temp: Path | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with every view of an earlier lake version: a manifest version
    (`runlake history` lists them) or a timestamp; its files must not have been vacuumed.
    `temp`: the folder it spills into (default DuckDB's, `.tmp` in the current folder; a
    sandboxed connection needs its own, db.sandbox)."""
    lake = Lake(home)
    snapshot = lake.tables_at(as_of)
    try:
        con = in_memory(home, snapshot, temp)
        try:
            con.execute("SELECT count(*) FROM staging.stg_ingest_files").fetchall()
            for t in TABLES:
                con.execute(f"SELECT count(*) FROM {t}").fetchall()
        except BaseException:
            con.close()
            raise
    except duckdb.IOException as e:
        if snapshot == lake.tables_at():
            raise  # the newest version's files missing: damage, for `runlake doctor`
        raise InputError(f"lake version {snapshot.get(MANIFEST)} is older than the "
                         "retention (RUNLAKE_RETENTION_HOURS) and its files were vacuumed; "
                         "choose a newer one (`runlake history`)") from e
    return con
