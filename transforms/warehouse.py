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

import os
import re
import uuid
from pathlib import Path

import duckdb

from transforms import db, models
from transforms.errors import WarehouseError
from transforms.flags import CATALOG
from transforms.lake import (
    REGISTRY,
    REGISTRY_SCHEMA,
    SUPERSEDED,
    Lake,
    duckdb_type,
    scan_sql,
    sql_str,
)
from transforms.schemas import TABLES

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
"""lake/_derived/<int_view>.parquet: the intermediate views, computed once per commit."""
STAMP = "_lake_state"
"""lake/_derived/_lake_state: the Lake.state() fingerprint the derived files were computed from."""


def _prepare(con: duckdb.DuckDBPyConnection, home: Path) -> None:
    """Schemas, a staging view per lake table, flag_codes, model_aliases and model_prices."""
    lake = home / "lake"
    for schema in ("staging", "intermediate", "checks"):
        con.execute(f"CREATE SCHEMA {schema}")
    for t in TABLES:
        con.execute(f"CREATE VIEW staging.stg_{t} AS {scan_sql(lake, t)}")
    # Runs that lost to a later line with the same run_id: kept, and counted by the checks.
    con.execute("CREATE VIEW staging.stg_superseded_runs AS "
                f"{scan_sql(lake / SUPERSEDED, 'runs')}")
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


def derive(home: Path) -> None:
    """Compute the intermediate views (links between runs and spans, per-run totals, findings
    across tables) over the whole lake and store each as lake/_derived/<name>.parquet, so that
    the public views join small precomputed tables instead of recomputing them per query.
    Called by the writer after each commit."""
    out = home / "lake" / DERIVED
    out.mkdir(parents=True, exist_ok=True)
    (out / STAMP).unlink(missing_ok=True)
    state = Lake(home).state()
    con = db.connect()
    try:
        _prepare(con, home)
        for f in sql_files():
            if f.parent.name == "macros":
                _run(con, f)  # intermediate views may call them
            elif f.parent.name == "intermediate":
                _run(con, f)
                tmp = out / f".{f.stem}.{uuid.uuid4().hex}.parquet"
                con.execute(f"COPY (SELECT * FROM intermediate.{f.stem}) TO {sql_str(str(tmp))} "
                            "(FORMAT parquet, COMPRESSION zstd)")
                stored = out / f"{f.stem}.parquet"
                os.replace(tmp, stored)
                # Later intermediate views read this one from its file, as the warehouse will.
                con.execute(f"CREATE OR REPLACE VIEW intermediate.{f.stem} AS "
                            f"SELECT * FROM read_parquet({sql_str(str(stored))})")
    finally:
        con.close()
    (out / STAMP).write_text(state)


def _built_stamp(home: Path) -> Path:
    """The lake state the published warehouse file was built from."""
    return home / f".{FILE_NAME}.lake_state"


def is_current(home: Path) -> bool:
    """True when lake/_derived was computed from the lake as it is now and the published
    warehouse was built after it; False after a commit whose derive or build step did not
    finish (a crash, a recovered journal, a failed build) or when the file does not open."""
    stamp = home / "lake" / DERIVED / STAMP
    built = _built_stamp(home)
    if not (path(home).exists() and stamp.exists() and built.exists()):
        return False
    state = Lake(home).state()
    if stamp.read_text() != state or built.read_text() != state:
        return False
    try:
        db.connect(str(path(home)), read_only=True).close()
    except duckdb.Error:
        return False  # a damaged file: build it again
    return True


def build(home: Path) -> Path:
    """Rebuild the warehouse file for the lake under `home`; returns its path. Intermediate
    views read their lake/_derived file when there is one (see `derive`)."""
    home.mkdir(parents=True, exist_ok=True)
    target = path(home)
    derived = home / "lake" / DERIVED
    state = Lake(home).state()
    _built_stamp(home).unlink(missing_ok=True)
    tmp = home / f".{FILE_NAME}.{uuid.uuid4().hex}.tmp"
    try:
        con = db.connect(str(tmp), storage_compatibility_version=STORAGE_VERSION)
        try:
            _prepare(con, home)
            for f in sql_files():
                stored = derived / f"{f.stem}.parquet"
                if f.parent.name == "intermediate" and stored.exists():
                    con.execute(f"CREATE VIEW intermediate.{f.stem} AS SELECT * FROM "
                                f"read_parquet({sql_str(str(stored.resolve()))})")
                else:
                    _run(con, f)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(tmp, target)
        _built_stamp(home).write_text(state)
    finally:
        tmp.unlink(missing_ok=True)
        Path(str(tmp) + ".wal").unlink(missing_ok=True)
    return target


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
    """An in-memory connection with every view computed from the lake as it is now, ignoring
    lake/_derived and warehouse.duckdb: what the checks read before a warehouse is published."""
    con = db.connect()
    try:
        _prepare(con, home)
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
    """A read-only connection to the warehouse; many may be open while a writer ingests."""
    target = path(home)
    if not target.exists():
        raise FileNotFoundError(f"no warehouse at {target}: run `runlake ingest PATH` first")
    return db.connect(str(target), read_only=True)
