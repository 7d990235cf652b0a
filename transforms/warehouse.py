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
import hashlib
import json
import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import duckdb

from transforms import db, models
from transforms.errors import InputError, WarehouseError
from transforms.flags import CATALOG
from transforms.lake import (
    DEFAULT_RETENTION_HOURS,
    MODEL_TABLES,
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
    stamp = tuple((f.name, f.stat().st_mtime_ns) for f in sorted(SQL_DIR.glob("*/*.sql")))
    if _ORDER and _ORDER[0][0] == stamp:
        return list(_ORDER[0][1])
    ordered = _build_order()
    _ORDER[:] = [(stamp, ordered)]
    return list(ordered)


_ORDER: list[tuple[tuple[tuple[str, int], ...], list[Path]]] = []
"""The last build order worked out, with the SQL files' names and times it was made from."""


def _build_order() -> list[Path]:
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
             snapshot: dict[str, int] | None = None, derived: Path | None = None,
             window: "Window | None" = None) -> None:
    """Schemas, a staging view per lake table (its files at the `snapshot` versions, default
    the lake's newest consistent version; with a `window`, only its days), flag_codes,
    model_aliases and model_prices."""
    _prepare_tables(con, home, snapshot, derived, window)
    _prepare_lookups(con, home)


def _prepare_tables(con: duckdb.DuckDBPyConnection, home: Path,
                    snapshot: dict[str, int] | None = None, derived: Path | None = None,
                    window: "Window | None" = None) -> None:
    """The schemas and the staging views of `_prepare`."""
    lake_ = Lake(home)
    lake = lake_.root
    versions = lake_.snapshot() if snapshot is None else snapshot
    for schema in ("staging", "intermediate", "checks"):
        con.execute(f"CREATE SCHEMA {schema}")
    for t in TABLES:
        v = versions.get(t, -1)
        if window is None or t == "ingest_files":
            files = lake_.file_uris(t, v) if v >= 0 else []
            present = lake_.columns(t, v) if files else None
        else:
            files, present = window.files[t], window.columns[t]
        body = files_sql(files, t, present)
        if window is not None and t != "ingest_files":
            body = (f"SELECT * FROM ({body}) WHERE day BETWEEN DATE '{window.first}' "
                    f"AND DATE '{window.last}'")
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


def _prepare_lookups(con: duckdb.DuckDBPyConnection, home: Path) -> None:
    """flag_codes and the model tables of `_prepare`."""
    lake = home / "lake"
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


NEIGHBOUR_DAYS = 1
"""How far a link reaches across midnight (the within_reach macro in sql/macros): a span to
its run, a span's LLM calls and findings to its run, a span to its parent."""
MARGIN_DAYS = 2 * NEIGHBOUR_DAYS
"""The days either side of a week its derived rows are computed from: a run's row reads its
spans within a day of it, and whether a span is the run's reads the runs within a day of the
span. So a week's rows are the same whatever wider window they are computed in."""
GROUP_WEEKS = 8
"""At most this many adjacent weeks computed in one pass (a backfill's weeks), each then
stored apart."""


@dataclass(frozen=True)
class Window:
    """The days some weeks' derived rows are computed from: the weeks and MARGIN_DAYS either
    side, read from the files that hold rows of those days."""

    week: str
    first: date
    last: date
    files: dict[str, list[str]]
    columns: dict[str, set[str]]

    @property
    def start(self) -> date:
        return self.first + timedelta(days=MARGIN_DAYS)

    @property
    def end(self) -> date:
        return self.last - timedelta(days=MARGIN_DAYS)


def _window(week: str, first: date, last: date,
            files: dict[str, list[tuple[str, date | None, date | None]]],
            columns: dict[str, set[str]]) -> Window:
    return Window(week, first, last, {
        t: [f for f, a, b in fs if a is None or b is None or (a <= last and b >= first)]
        for t, fs in files.items()}, columns)


def _windows(lake: Lake, snapshot: dict[str, int]
             ) -> tuple[list[Window], dict[str, list[tuple[str, date | None, date | None]]],
                        dict[str, set[str]]]:
    """One window per week (Monday to Sunday) with rows, each with the files holding rows of
    its days (by the files' day statistics; a file without them is read by every window);
    also the files and columns of every table, to make wider windows from."""
    files = {t: lake.file_days(t, snapshot.get(t, -1)) for t in TABLES}
    columns = {t: lake.columns(t, snapshot.get(t, -1)) for t in TABLES}
    starts: set[date] = set()
    for fs in files.values():
        for _, a, b in fs:
            if a is None or b is None:
                continue
            d = a - timedelta(days=a.weekday())
            while d <= b:
                starts.add(d)
                d += timedelta(days=7)
    margin = timedelta(days=MARGIN_DAYS)
    return [_window(s.isoformat(), s - margin, s + timedelta(days=6) + margin, files, columns)
            for s in sorted(starts)], files, columns


def _groups(stale: list[Window]) -> list[list[Window]]:
    """Adjacent stale weeks, at most GROUP_WEEKS together, to compute in one pass."""
    groups: list[list[Window]] = []
    for w in stale:
        if groups and len(groups[-1]) < GROUP_WEEKS \
                and w.start - groups[-1][-1].start == timedelta(days=7):
            groups[-1].append(w)
        else:
            groups.append([w])
    return groups


def _key_column(con: duckdb.DuckDBPyConnection, relation: str) -> str | None:
    """What assigns a derived row to a week: the day of the run it counts toward (run_day),
    else its own day, else its span's day, else its run's day; None for a view with none of
    these (a lookup of names), kept whole in every week and read back distinct."""
    cols = {r[0] for r in con.execute(f"DESCRIBE {relation}").fetchall()}
    if "run_day" in cols:
        return "run_day" if "day" not in cols else "coalesce(run_day, day)"
    return next((c for c in ("day", "span_id", "run_id") if c in cols), None)


def _assign(key: str | None, w: Window) -> str:
    """The rows of an intermediate view (keyed by `key`, see _key_column) that belong to the
    window's weeks."""
    span = f"DATE '{w.start}' AND DATE '{w.end}'"
    if key == "span_id":
        return f"span_id IN (SELECT span_id FROM staging.stg_spans WHERE day BETWEEN {span})"
    if key == "run_id":
        return f"run_id IN (SELECT run_id FROM staging.stg_runs WHERE day BETWEEN {span})"
    return "true" if key is None else f"{key} BETWEEN {span}"


def _window_key(w: Window, common: str, superseded: Path, con: duckdb.DuckDBPyConnection) -> str:
    """What one week's derived rows depend on: the SQL, the lookups, the files of the days
    its window reads (a path in a Delta table never changes contents) and the lines that lose
    to a later line with their run_id within its days."""
    h = hashlib.sha256(common.encode())
    h.update(f"{w.week}:{w.first}:{w.last}\n".encode())  # which rows: the week's own
    for t in sorted(w.files):
        h.update(f"{t}:{','.join(w.files[t])}\n".encode())
    sup = con.execute(f"SELECT string_agg(run_id || source_file || source_line, ',' ORDER BY "
                      f"run_id, source_file, source_line) FROM read_parquet("
                      f"{sql_str(str(superseded))}) WHERE day BETWEEN DATE '{w.first}' AND "
                      f"DATE '{w.last}' OR win_day BETWEEN DATE '{w.first}' AND "
                      f"DATE '{w.last}'").fetchall()[0][0]
    h.update((sup or "").encode())
    return h.hexdigest()[:32]


def _common_key(home: Path) -> str:
    h = hashlib.sha256()
    for f in sql_files():
        if f.parent.name in ("macros", "intermediate"):
            h.update(f.read_bytes())
    for extra in (Path(REGISTRY) / "tools.parquet", Path(MODEL_TABLES)):
        p = home / "lake" / extra
        if p.exists():
            h.update(p.read_bytes())
    return h.hexdigest()


def derive(home: Path, snapshot: dict[str, int] | None = None,
           state: str | None = None) -> Path:
    """Compute the links between runs and spans, per-run totals and findings across tables
    for one lake version and store each intermediate view as Parquet, so the public views join
    small precomputed tables instead of recomputing them per query.

    The work is done a week at a time: a week's rows are computed from its days and
    MARGIN_DAYS either side, and stored under lake/_derived/weeks/<key>/, where the key names
    the files those days were read from. A nightly ingest adds files of its own days only, so
    only its week is computed again, whatever the length of the history; a backfill's adjacent
    weeks are computed in one pass (links reach one day, so a week's rows are the same in any
    window that covers it and its margin) and stored apart. The version's
    folder lake/_derived/<state>/ lists the weeks it reads (weeks.json) beside the lines that
    lose to a later line with their run_id (computed over the whole lake: one narrow scan)."""
    lake = Lake(home)
    snapshot = lake.snapshot() if snapshot is None else snapshot
    state = lake.state(snapshot) if state is None else state
    out = _derived_dir(home, state)
    if _derived_intact(home, state):
        return out
    shutil.rmtree(out, ignore_errors=True)  # damaged (a truncated or deleted file): again
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex}")
    tmp.mkdir(parents=True)
    cache = home / "lake" / DERIVED / WEEKS
    cache.mkdir(parents=True, exist_ok=True)
    con = db.connect()
    try:
        _prepare(con, home, snapshot)
        lines = tmp / "superseded_lines.parquet"
        con.execute(f"COPY ({SUPERSEDED_LINES}) TO {sql_str(str(lines))} "
                    "(FORMAT parquet, COMPRESSION zstd)")
        common = _common_key(home)
        weeks, files, columns = _windows(lake, snapshot)
        keys = [_window_key(w, common, lines, con) for w in weeks]
        stale = [w for w, k in zip(weeks, keys, strict=True) if not _intact(cache / k)]
        targets = {w.week: cache / k for w, k in zip(weeks, keys, strict=True)}
        for w in stale:  # a damaged week (a file truncated or deleted) is computed again
            shutil.rmtree(targets[w.week], ignore_errors=True)
        if stale:
            week_con = _week_connection(home)
            try:
                for group in _groups(stale):
                    whole = _window(group[0].week, group[0].first, group[-1].last, files,
                                    columns)
                    _derive_weeks(week_con, home, snapshot, whole, group, lines, targets)
            finally:
                week_con.close()
        (tmp / WEEKS_FILE).write_text(json.dumps(keys))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        con.close()
    _seal(tmp, state)
    try:
        os.replace(tmp, out)
    except OSError:  # another publisher stored the same version first
        shutil.rmtree(tmp, ignore_errors=True)
    return out


WINDOW_INPUTS = ("runs", "spans", "llm_calls", "tool_calls", "flags")
"""The staging tables the intermediate views read (messages and the rest they do not)."""


def _week_connection(home: Path) -> duckdb.DuckDBPyConnection:
    """One connection for every week a derive computes: the lookups and macros are set up
    once, each week then replaces the staging and intermediate schemas."""
    con = db.connect()
    try:
        _prepare_lookups(con, home)
        for f in sql_files():
            if f.parent.name == "macros":
                _run(con, f)  # intermediate views call them
    except BaseException:
        con.close()
        raise
    return con


def _derive_weeks(con: duckdb.DuckDBPyConnection, home: Path, snapshot: dict[str, int],
                  whole: Window, weeks: list[Window], superseded: Path,
                  targets: dict[str, Path]) -> None:
    """Compute the intermediate views once over the `whole` window and store each week's rows
    in its own folder (targets[week])."""
    tmps = {w.week: targets[w.week].with_name(f".{targets[w.week].name}.{uuid.uuid4().hex}")
            for w in weeks}
    for tmp in tmps.values():
        tmp.mkdir(parents=True)
    try:
        for schema in ("staging", "intermediate", "checks"):
            con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        _prepare_tables(con, home, snapshot, window=whole)
        con.execute("CREATE OR REPLACE VIEW staging.stg_superseded_lines AS SELECT * FROM "
                    f"read_parquet({sql_str(str(superseded))})")
        # Read the window's rows once; every intermediate view below reads them again.
        for t in WINDOW_INPUTS:
            con.execute(f"CREATE TABLE staging.stg_{t}__window AS SELECT * FROM staging.stg_{t}")
            con.execute(f"CREATE OR REPLACE VIEW staging.stg_{t} AS "
                        f"SELECT * FROM staging.stg_{t}__window")
        for f in sql_files():
            if f.parent.name != "intermediate":
                continue
            _run(con, f)
            # Later views read this one whole (the margin days included).
            con.execute(f"CREATE TABLE intermediate.{f.stem}__window AS "
                        f"SELECT * FROM intermediate.{f.stem}")
            con.execute(f"CREATE OR REPLACE VIEW intermediate.{f.stem} AS "
                        f"SELECT * FROM intermediate.{f.stem}__window")
            key = _key_column(con, f"intermediate.{f.stem}")
            for w in weeks:
                con.execute(f"COPY (SELECT * FROM intermediate.{f.stem} WHERE "
                            f"{_assign(key, w)}) TO "
                            f"{sql_str(str(tmps[w.week] / (f.stem + '.parquet')))} "
                            "(FORMAT parquet, COMPRESSION zstd)")
    except BaseException:
        for tmp in tmps.values():
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    for w in weeks:
        _seal(tmps[w.week], w.week)
        try:
            os.replace(tmps[w.week], targets[w.week])
        except OSError:  # another publisher stored the same week first
            shutil.rmtree(tmps[w.week], ignore_errors=True)


def _derived_sql(con: duckdb.DuckDBPyConnection, weeks: list[str], cache: Path,
                 view: str) -> str | None:
    """The SQL reading a view's stored rows from these weeks (None: no week stored)."""
    files = [cache / k / f"{view}.parquet" for k in weeks]
    if not files:
        return None
    names = ", ".join(sql_str(str(f.resolve())) for f in files)
    read = f"read_parquet([{names}], union_by_name = true)"
    distinct = "DISTINCT " if _key_column(con, f"SELECT * FROM {read}") is None else ""
    return f"SELECT {distinct}* FROM {read}"


WEEKS = "weeks"
"""lake/_derived/weeks/<key>/: one week's derived rows, shared by every lake version whose
files for that week's days are the same."""
WEEKS_FILE = "weeks.json"


COMPLETE = "_complete"
"""The marker of a finished lake/_derived/ folder: what it is, and the size of each file."""


def _seal(folder: Path, what: str) -> None:
    sizes = {f.name: f.stat().st_size for f in folder.iterdir() if f.suffix == ".parquet"}
    (folder / COMPLETE).write_text(json.dumps({"of": what, "sizes": sizes}))


def _intact(folder: Path) -> bool:
    """A finished derived folder whose files are all there at the sizes they were written."""
    try:
        sealed = json.loads((folder / COMPLETE).read_text())
        return all((folder / name).stat().st_size == size
                   for name, size in sealed["sizes"].items())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _derived_intact(home: Path, state: str) -> bool:
    """The derived folder of a lake version and every week it lists are whole."""
    out = _derived_dir(home, state)
    try:
        weeks = [str(k) for k in json.loads((out / WEEKS_FILE).read_text())]
    except (OSError, ValueError, TypeError):
        return False
    return _intact(out) and all(_intact(out.parent / WEEKS / k) for k in weeks)


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
    if not _derived_intact(home, state):
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
            _prepare(con, home, snapshot, derived)
            listing = derived / WEEKS_FILE if derived is not None else None
            weeks = json.loads(listing.read_text()) if listing and listing.exists() else []
            for f in sql_files():
                stored = _derived_sql(con, weeks, home / "lake" / DERIVED / WEEKS, f.stem) \
                    if f.parent.name == "intermediate" else None
                if stored is not None:
                    con.execute(f"CREATE VIEW intermediate.{f.stem} AS {stored}")
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
