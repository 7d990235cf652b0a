"""The derived tables: links between runs and spans, per-run totals, findings across tables,
resolved runs and per-group figures (the intermediate views), computed once per lake version
and stored under lake/_derived/, a week at a time, so that a nightly ingest recomputes its own
week only and a backfill computes adjacent weeks in one pass."""

import hashlib
import json
import shutil
import uuid
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import duckdb

from transforms import db
from transforms.contracts.schemas import TABLES
from transforms.lake import MODEL_TABLES, REGISTRY, Lake, claim_staging, clear_staging, sql_str
from transforms.lake.staging import (
    SUPERSEDED_LINES,
    prepare,
    prepare_lookups,
    prepare_tables,
    run_sql,
)
from transforms.lake.store import Store
from transforms.warehouse.sqlfiles import reads, sql_files

DERIVED = "_derived"
"""lake/_derived/<state>/<int_view>.parquet: the intermediate views of one lake version."""


def derived_dir(state: str) -> str:
    """The folder of one lake version's derived tables, relative to the lake."""
    return f"{DERIVED}/{state[:24]}"


NEIGHBOUR_DAYS = 1
"""How far a link reaches across midnight (the within_reach macro in sql/macros): a span to
its run, a span's LLM calls and findings to its run, a span to its parent."""


MARGIN_DAYS = 2 * NEIGHBOUR_DAYS
"""The days either side of a week its derived rows are computed from: a run's row reads its
spans within a day of it, and whether a span is the run's reads the runs within a day of the
span. So a week's rows are the same whatever wider window they are computed in."""


LAKE_WIDE = ("int_span_far_flags",)
"""Intermediate views a week cannot compute alone: whether the run a span looks for exists
anywhere in the lake, however far from the span. Computed once per lake version over the whole
lake, from the views they read as the weeks stored them (a few rows: one per trace, run looked
for and day of spans that meet no run within a day) and the runs' ids, traces and days (one
narrow scan), and stored in the version's folder; the weeks neither compute nor store them."""


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
                      f"{sql_str(str(superseded))}, hive_partitioning = false) "
                      f"WHERE day BETWEEN DATE '{w.first}' AND "
                      f"DATE '{w.last}' OR win_day BETWEEN DATE '{w.first}' AND "
                      f"DATE '{w.last}'").fetchall()[0][0]
    h.update((sup or "").encode())
    return h.hexdigest()[:32]


def _common_key(store: Store) -> str:
    h = hashlib.sha256()
    for f in sql_files():
        if f.parent.name in ("macros", "intermediate"):
            h.update(f.read_bytes())
    for extra in (f"{REGISTRY}/tools.parquet", MODEL_TABLES):
        try:
            h.update(store.read_bytes(*extra.split("/")))
        except FileNotFoundError:
            continue
    return h.hexdigest()


def derive(home: Path | str, snapshot: dict[str, int] | None = None,
           state: str | None = None) -> str:
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
    lose to a later line with their run_id (computed over the whole lake: one narrow scan).
    Returns that folder, relative to the lake."""
    lake = Lake(home)
    store = lake.store
    snapshot = lake.snapshot() if snapshot is None else snapshot
    state = lake.state(snapshot) if state is None else state
    out = derived_dir(state)
    if derived_intact(store, state):
        return out
    store.rmtree(DERIVED, out.rsplit("/", 1)[-1])  # damaged (a truncated or deleted file)
    tmp = store.tmp_folder(DERIVED, out.rsplit("/", 1)[-1])
    if not store.remote:
        store.path(DERIVED, WEEKS).mkdir(parents=True, exist_ok=True)
    con = db.connect()
    try:
        prepare(con, home, snapshot)
        lines = tmp / "superseded_lines.parquet"
        con.execute(f"COPY ({SUPERSEDED_LINES}) TO {sql_str(str(lines))} "
                    "(FORMAT parquet, COMPRESSION zstd)")
        common = _common_key(store)
        weeks, files, columns = _windows(lake, snapshot)
        keys = [_window_key(w, common, lines, con) for w in weeks]
        stale = [w for w, k in zip(weeks, keys, strict=True) if not _intact(store, WEEKS, k)]
        targets = {w.week: k for w, k in zip(weeks, keys, strict=True)}
        for w in stale:  # a damaged week (a file truncated or deleted) is computed again
            store.rmtree(DERIVED, WEEKS, targets[w.week])
        if stale:
            scratch = claim_staging(lake.where.staging / f"derive-{uuid.uuid4().hex}")
            try:
                week_con = _week_connection(home, scratch)
                try:
                    for group in _groups(stale):
                        whole = _window(group[0].week, group[0].first, group[-1].last, files,
                                        columns)
                        _derive_weeks(week_con, home, snapshot, whole, group, lines, targets)
                finally:
                    week_con.close()
            finally:
                clear_staging(scratch)
        _derive_lake_wide(con, store, keys, lines, tmp)
        (tmp / WEEKS_FILE).write_text(json.dumps(keys))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        con.close()
    _seal(tmp, state)
    # Not when another publisher stored the same version first.
    store.publish_folder(tmp, DERIVED, out.rsplit("/", 1)[-1], last=COMPLETE)
    return out


WINDOW_INPUTS = ("runs", "spans", "llm_calls", "tool_calls", "flags")
"""The staging tables the intermediate views read (messages and the rest they do not)."""


def _week_connection(home: Path | str, scratch: Path) -> duckdb.DuckDBPyConnection:
    """One connection for every week a derive computes: the lookups and macros are set up
    once, each week then replaces the staging and intermediate schemas. It holds at most
    db.WORK_MEMORY and spills the rest to `scratch`."""
    con = db.connect(memory_limit=db.WORK_MEMORY, temp_directory=str(scratch))
    try:
        prepare_lookups(con, home)
        for f in sql_files():
            if f.parent.name == "macros":
                run_sql(con, f)  # intermediate views call them
    except BaseException:
        con.close()
        raise
    return con


def _derive_weeks(con: duckdb.DuckDBPyConnection, home: Path | str, snapshot: dict[str, int],
                  whole: Window, weeks: list[Window], superseded: Path,
                  targets: dict[str, str]) -> None:
    """Compute the intermediate views once over the `whole` window and store each week's rows
    in its own folder (lake/_derived/weeks/<targets[week]>)."""
    store = Lake(home).store
    tmps = {w.week: store.tmp_folder(DERIVED, WEEKS, targets[w.week]) for w in weeks}
    try:
        for schema in ("staging", "intermediate", "checks"):
            con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        prepare_tables(con, home, snapshot, window=whole)
        con.execute("CREATE OR REPLACE VIEW staging.stg_superseded_lines AS SELECT * FROM "
                    f"read_parquet({sql_str(str(superseded))}, hive_partitioning = false)")
        # Read the window's rows once; every intermediate view below reads them again.
        for t in WINDOW_INPUTS:
            con.execute(f"CREATE TABLE staging.stg_{t}__window AS SELECT * FROM staging.stg_{t}")
            con.execute(f"CREATE OR REPLACE VIEW staging.stg_{t} AS "
                        f"SELECT * FROM staging.stg_{t}__window")
        for f in sql_files():
            if f.parent.name != "intermediate" or f.stem in LAKE_WIDE:
                continue
            run_sql(con, f)
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
        # Not when another publisher stored the same week first.
        store.publish_folder(tmps[w.week], DERIVED, WEEKS, targets[w.week], last=COMPLETE)


def _derive_lake_wide(con: duckdb.DuckDBPyConnection, store: Store, weeks: list[str],
                      superseded: Path, folder: Path) -> None:
    """Compute the LAKE_WIDE views over the whole lake (`con`: staging views of every day)
    into `folder`, each from the intermediate views it reads as the weeks stored them."""
    con.execute("CREATE OR REPLACE VIEW staging.stg_superseded_lines AS SELECT * FROM "
                f"read_parquet({sql_str(str(superseded))}, hive_partitioning = false)")
    files = sql_files()
    wide = [f for f in files if f.parent.name == "intermediate" and f.stem in LAKE_WIDE]
    read = reads(wide)
    macros = {f.stem: f for f in files if f.parent.name == "macros"}
    calls = {m for m in read if m in macros}
    while more := reads([macros[m] for m in calls]) & macros.keys() - calls:
        calls |= more  # the macros those macros call
    for f in files:
        if not weeks:  # no week stored (no day in the lake): everything computed here
            if f.parent.name == "macros" or (f.parent.name == "intermediate"
                                              and f.stem not in LAKE_WIDE):
                run_sql(con, f)
        elif f.parent.name == "macros" and f.stem in calls:
            run_sql(con, f)
        elif f.parent.name == "intermediate" and f.stem in read and f.stem not in LAKE_WIDE:
            con.execute(f"CREATE OR REPLACE VIEW intermediate.{f.stem} AS "
                        f"{derived_sql(con, weeks, store, f.stem)}")
    for f in wide:
        run_sql(con, f)
        con.execute(f"COPY (SELECT * FROM intermediate.{f.stem}) TO "
                    f"{sql_str(str(folder / (f.stem + '.parquet')))} "
                    "(FORMAT parquet, COMPRESSION zstd)")


def lake_wide_sql(store: Store, derived: str, view: str) -> str | None:
    """The SQL reading a LAKE_WIDE view as a lake version's folder (`derived`, relative to
    the lake) stores it; None when the folder does not hold it."""
    parts = (*derived.split("/"), f"{view}.parquet")
    if view not in LAKE_WIDE or not store.exists(*parts):
        return None
    url = store.url(*parts) if store.remote else str(store.path(*parts).resolve())
    return f"SELECT * FROM read_parquet({sql_str(url)}, hive_partitioning = false)"


def derived_sql(con: duckdb.DuckDBPyConnection, weeks: list[str], store: Store,
                 view: str) -> str | None:
    """The SQL reading a view's stored rows from these weeks (None: no week stored)."""
    if not weeks:
        return None
    files = [store.url(DERIVED, WEEKS, k, f"{view}.parquet") if store.remote
             else str(store.path(DERIVED, WEEKS, k, f"{view}.parquet").resolve())
             for k in weeks]
    names = ", ".join(sql_str(f) for f in files)
    read = f"read_parquet([{names}], union_by_name = true, hive_partitioning = false)"
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


def _intact(store: Store, *folder: str, holding: tuple[str, ...] = ()) -> bool:
    """A finished derived folder (under lake/_derived/) whose files are all there at the
    sizes they were written, among them the files named `holding`."""
    try:
        sealed = json.loads(store.read_text(DERIVED, *folder, COMPLETE))
        sizes = store.sizes(DERIVED, *folder)
        return all(sizes.get(name) == size for name, size in sealed["sizes"].items()) \
            and all(name in sealed["sizes"] for name in holding)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def derived_intact(store: Store, state: str) -> bool:
    """The derived folder of a lake version and every week it lists are whole, and it holds
    the LAKE_WIDE views (a folder an earlier runlake derived may not)."""
    name = derived_dir(state).rsplit("/", 1)[-1]
    try:
        weeks = [str(k) for k in json.loads(store.read_text(DERIVED, name, WEEKS_FILE))]
    except (OSError, ValueError, TypeError):
        return False
    return _intact(store, name, holding=tuple(f"{v}.parquet" for v in LAKE_WIDE)) \
        and all(_intact(store, WEEKS, k) for k in weeks)
