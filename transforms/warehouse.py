"""Builds RUNLAKE_HOME/warehouse.duckdb: a file of views over the lake, plus `flag_codes` and
the model alias and price tables (`model_aliases`, `model_prices`: transforms.models).

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
import os
import re
import shutil
import time
import uuid
from pathlib import Path

import duckdb

from transforms import db, models
from transforms.errors import InputError, WarehouseError
from transforms.flags import CATALOG
from transforms.lake import (
    DEFAULT_RETENTION_HOURS,
    REGISTRY,
    REGISTRY_SCHEMA,
    Lake,
    duckdb_type,
    files_sql,
    sql_str,
)
from transforms.schemas import RUN_TABLES, TABLES

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
LAYERS = ("macros", "staging", "intermediate", "marts", "checks")
FILE_NAME = "warehouse.duckdb"
# Readable by the duckdb CLI releases people have installed, not only by the newest library.
STORAGE_VERSION = "v1.5.0"


def path(home: Path) -> Path:
    return home / FILE_NAME


def sql_files() -> list[Path]:
    """The SQL files in build order: layer by layer, and within a layer each file after the
    files whose objects it names (a file creates the object named like the file)."""
    ordered: list[Path] = []
    for layer in LAYERS:
        files = {f.stem: f for f in sorted((SQL_DIR / layer).glob("*.sql"))}
        code = {name: re.sub(r"--[^\n]*", "", f.read_text()) for name, f in files.items()}
        deps = {name: {other for other in files if other != name
                       and re.search(rf"\b{re.escape(other)}\b", code[name])}
                for name in files}
        done: set[str] = set()
        while len(done) < len(files):
            ready = sorted(n for n in files if n not in done and deps[n] <= done)
            if not ready:
                cycle = sorted(n for n in files if n not in done)
                raise WarehouseError(f"sql/{layer}: files reference each other in a cycle: "
                                     f"{', '.join(cycle)}")
            done.update(ready)
            ordered += [files[n] for n in ready]
    return ordered


DERIVED = "_derived"
"""lake/_derived/<state>/<int_view>.parquet: the intermediate views of one lake version."""


SUPERSEDED_LINES = """
    SELECT run_id, day, source_file, source_line, win_day, win_file, win_line
    FROM (
        SELECT run_id, day, source_file, source_line,
               first_value(day) OVER w AS win_day,
               first_value(source_file) OVER w AS win_file,
               first_value(source_line) OVER w AS win_line,
               row_number() OVER w AS rank_
        FROM staging.stg_runs_lines
        WINDOW w AS (PARTITION BY run_id ORDER BY source_file DESC, source_line DESC)
    )
    WHERE rank_ > 1"""
"""Lines whose run_id a later line (by source file path, then line number) also carries: the
later line wins, the earlier lines' rows stay in the lake and are left out of the views."""


def _prepare(con: duckdb.DuckDBPyConnection, home: Path,
             snapshot: dict[str, int] | None = None, derived: Path | None = None) -> None:
    """Schemas, a staging view per lake table (its files at the `snapshot` versions, default
    the lake's newest consistent version), flag_codes, model_aliases and model_prices."""
    lake_ = Lake(home)
    lake = lake_.root
    versions = lake_.snapshot() if snapshot is None else snapshot
    for schema in ("staging", "intermediate", "checks"):
        con.execute(f"CREATE SCHEMA {schema}")
    for t in TABLES:
        v = versions.get(t, -1)
        files = lake_.file_uris(t, v) if v >= 0 else []
        body = files_sql(files, t, lake_.columns(t, v) if files else None)
        name = f"stg_{t}_lines" if t in RUN_TABLES else f"stg_{t}"
        con.execute(f"CREATE VIEW staging.{name} AS {body}")
    # Every line keeps its rows in the lake; the views show the winning line of each run_id.
    stored = derived / "superseded_lines.parquet" if derived is not None else None
    if stored is not None and stored.exists():
        con.execute("CREATE VIEW staging.stg_superseded_lines AS SELECT * FROM "
                    f"read_parquet({sql_str(str(stored))})")
    else:
        con.execute(f"CREATE VIEW staging.stg_superseded_lines AS {SUPERSEDED_LINES}")
    for t in RUN_TABLES:
        con.execute(f"""CREATE VIEW staging.stg_{t} AS SELECT * FROM staging.stg_{t}_lines r
            WHERE NOT EXISTS (SELECT 1 FROM staging.stg_superseded_lines l
                              WHERE l.run_id = r.run_id AND l.source_file = r.source_file
                                AND l.source_line = r.source_line)""")
    con.execute("""CREATE VIEW staging.stg_superseded_runs AS SELECT * FROM staging.stg_runs_lines r
        WHERE EXISTS (SELECT 1 FROM staging.stg_superseded_lines l
                      WHERE l.run_id = r.run_id AND l.source_file = r.source_file
                        AND l.source_line = r.source_line)""")
    # The tool registry the last ingest checked calls against (empty without one).
    registry = lake / REGISTRY / "tools.parquet"
    if registry.exists():
        source = f"SELECT * FROM read_parquet({sql_str(str(registry.resolve()))})"
    else:
        source = "SELECT " + ", ".join(
            f"CAST(NULL AS {duckdb_type(f.type)}) AS {f.name}" for f in REGISTRY_SCHEMA
        ) + " WHERE false"
    con.execute(f"CREATE VIEW staging.stg_tool_registry AS {source}")
    con.execute("CREATE TABLE flag_codes (code VARCHAR PRIMARY KEY, severity VARCHAR, "
                "category VARCHAR, entity VARCHAR, description VARCHAR, source VARCHAR)")
    rows = [[s.code, s.severity, s.category, s.entity, s.description, s.source]
            for s in CATALOG.values()]
    con.execute("INSERT INTO flag_codes VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(rows)),
                [v for row in rows for v in row])
    # The model alias and price tables the last ingest stored (else the shipped ones).
    models.install(con, models.stored(lake) or models.load())


def _run(con: duckdb.DuckDBPyConnection, f: Path) -> None:
    try:
        con.execute(f.read_text())
    except duckdb.Error as e:
        raise WarehouseError(f"{f.relative_to(SQL_DIR.parent)}: {e}") from e


def _derived_dir(home: Path, state: str) -> Path:
    return home / "lake" / DERIVED / state[:24]


def derive(home: Path, snapshot: dict[str, int] | None = None,
           state: str | None = None) -> Path:
    """Compute the links between runs and spans, per-run totals and findings across tables
    over one lake version and store each intermediate view as a Parquet file in
    lake/_derived/<state>/, so the public views join small precomputed tables instead of
    recomputing them per query. A folder per lake version: readers of an older warehouse
    keep reading the folder it names."""
    lake = Lake(home)
    snapshot = lake.snapshot() if snapshot is None else snapshot
    state = lake.state(snapshot) if state is None else state
    out = _derived_dir(home, state)
    if (out / COMPLETE).exists():
        return out
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex}")
    tmp.mkdir(parents=True)
    con = db.connect()
    try:
        _prepare(con, home, snapshot)
        lines = tmp / "superseded_lines.parquet"
        con.execute(f"COPY ({SUPERSEDED_LINES}) TO {sql_str(str(lines))} "
                    "(FORMAT parquet, COMPRESSION zstd)")
        con.execute("CREATE OR REPLACE VIEW staging.stg_superseded_lines AS SELECT * FROM "
                    f"read_parquet({sql_str(str(lines))})")
        for f in sql_files():
            if f.parent.name == "macros":
                _run(con, f)  # intermediate views may call them
            elif f.parent.name == "intermediate":
                _run(con, f)
                stored = tmp / f"{f.stem}.parquet"
                con.execute(f"COPY (SELECT * FROM intermediate.{f.stem}) TO "
                            f"{sql_str(str(stored))} (FORMAT parquet, COMPRESSION zstd)")
                # Later intermediate views read this one from its file, as the warehouse will.
                con.execute(f"CREATE OR REPLACE VIEW intermediate.{f.stem} AS "
                            f"SELECT * FROM read_parquet({sql_str(str(stored))})")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        con.close()
    (tmp / COMPLETE).write_text(state)
    try:
        os.replace(tmp, out)
    except OSError:  # another publisher stored the same version first
        shutil.rmtree(tmp, ignore_errors=True)
    return out


COMPLETE = "_complete"
"""The marker of a finished lake/_derived/<state>/ folder."""


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
    if built.read_text() != _stamp_text(home, Lake(home).state()):
        return False
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
            _prepare(con, home, snapshot, derived)
            for f in sql_files():
                stored = derived / f"{f.stem}.parquet" if derived is not None else None
                if f.parent.name == "intermediate" and stored is not None and stored.exists():
                    con.execute(f"CREATE VIEW intermediate.{f.stem} AS SELECT * FROM "
                                f"read_parquet({sql_str(str(stored.resolve()))})")
                else:
                    _run(con, f)
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
            for old in (home / "lake" / DERIVED).glob("*"):
                if old != derived and old.stat().st_mtime < cutoff:
                    shutil.rmtree(old, ignore_errors=True)
            return target
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def header(path: Path) -> dict[str, str]:
    """The `-- Purpose:` and `-- Grain:` of a SQL file's header comment."""
    found: dict[str, str] = {}
    key = None
    for line in path.read_text().splitlines():
        if not line.startswith("--"):
            break
        text = line[2:].strip()
        for k in ("Purpose", "Grain"):
            if text.startswith(k + ":"):
                key, text = k.lower(), text[len(k) + 1:].strip()
        if key:
            found[key] = (found.get(key, "") + " " + text).strip()
    return found


def view_docs() -> dict[str, dict[str, str]]:
    """Purpose and grain of each public view, from the headers of sql/marts."""
    return {f.stem: header(f) for f in sorted((SQL_DIR / "marts").glob("*.sql"))}


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
        _prepare(con, home, snapshot)
        con.execute(f"CREATE TABLE staging.superseded_lines__computed AS {SUPERSEDED_LINES}")
        con.execute("CREATE OR REPLACE VIEW staging.stg_superseded_lines AS "
                    "SELECT * FROM staging.superseded_lines__computed")
        for f in sql_files():
            _run(con, f)
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
