"""The lake: Hive-partitioned Parquet under RUNLAKE_HOME/lake, switched atomically a day at a time.

Layout: `lake/<table>/day=YYYY-MM-DD` is a symbolic link to an immutable version folder
`lake/_versions/<table>/day=YYYY-MM-DD.<commit>/` of Parquet parts. A commit builds new version
folders aside and then replaces each link with `os.replace`, so a reader sees the old day or the
new one, never half of it. Old versions stay on disk for a grace period, so a query that listed
them just before the switch still finds its files.

Most commits only add: the parts the workers wrote become part of the day's new version next to
hard links of its old parts, and nothing is rewritten. A day is rewritten into one file, by
DuckDB, only when rows must go or move: a re-ingested file's old rows, a run_id that appears on
several lines (the later line wins; the others' rows go to `lake/_superseded/`, so the winner
can be recomputed when files change), or too many parts.

A commit is journaled (`lake/_commit.json`): if a process dies half-way through its link
switches, the next writer finishes them before doing anything. The lake is a function of the
set of ingested files: rows carry `source_file`; a changed file replaces its rows; an unchanged
file is skipped.
"""

import fcntl
import hashlib
import json
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from transforms import db
from transforms.errors import InputError, LakeBusy
from transforms.flags import CATALOG
from transforms.schemas import RUN_TABLES, TABLES

SUPERSEDED = "_superseded"
REGISTRY = "_registry"
REGISTRY_SCHEMA = pa.schema([
    ("agent", pa.string()), ("tool_name", pa.string()), ("description", pa.string()),
    ("strict", pa.bool_()), ("parameters", pa.string()), ("registry_sha256", pa.string()),
    ("registry_file", pa.string())])
"""lake/_registry/tools.parquet: one row per registered tool of the last registry used."""
MODEL_TABLES = "_models/tables.json"
"""The model alias and price tables the last ingest was given (transforms.models)."""
VERSIONS = "_versions"
JOURNAL = "_commit.json"
MAX_PARTS = 48
"""A day with more parts than this is compacted into one file by the next commit touching it."""
GRACE_SECONDS = 15 * 60
"""How long a replaced version stays on disk for queries that listed it before the switch."""
PARQUET = "(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)"


def duckdb_type(t: pa.DataType) -> str:
    """The DuckDB type of an Arrow type used in the lake schemas."""
    if pa.types.is_list(t):
        return duckdb_type(t.value_type) + "[]"
    mapping = {
        pa.string(): "VARCHAR", pa.int64(): "BIGINT", pa.float64(): "DOUBLE",
        pa.bool_(): "BOOLEAN", pa.date32(): "DATE", pa.binary(): "BLOB",
    }
    if pa.types.is_timestamp(t):
        return "TIMESTAMPTZ"
    return mapping[t]


def sql_str(value: str) -> str:
    """A SQL string literal (for file paths in DDL, where DuckDB takes no parameters)."""
    return "'" + value.replace("'", "''") + "'"


def empty_select(table: str) -> str:
    cols = ", ".join(f"CAST(NULL AS {duckdb_type(c.type)}) AS {c.name}"
                     for c in TABLES[table].columns)
    return f"SELECT {cols} WHERE false"


_FOOTERS: list[duckdb.DuckDBPyConnection] = []


def _footer_reader() -> duckdb.DuckDBPyConnection:
    """One in-memory connection, kept, for reading Parquet footers (opening one costs ~30 ms)."""
    if not _FOOTERS:
        _FOOTERS.append(db.connect())
    return _FOOTERS[0].cursor()


def scan_sql(root: Path, table: str) -> str:
    """SQL reading every day of `table` under `root` (a lake folder), typed even when empty.

    A column that no file has yet (a lake written before the column existed) reads as a typed
    null, so upgrading runlake never breaks the views of an existing lake."""
    if not any((root / table).glob("day=*/*.parquet")):
        return empty_select(table)
    glob = sql_str((root / table).resolve().as_posix() + "/day=*/*.parquet")
    present = {r[0] for r in _footer_reader().execute(
        f"SELECT DISTINCT name FROM parquet_schema({glob})").fetchall()}
    cols = ", ".join(c.name if c.name in present or c.name == "day"
                     else f"CAST(NULL AS {duckdb_type(c.type)}) AS {c.name}"
                     for c in TABLES[table].columns)
    return (f"SELECT {cols} FROM read_parquet({glob}, hive_partitioning = true, "
            f"hive_types = {{'day': DATE}}, union_by_name = true)")


@dataclass
class CommitResult:
    days: list[date] = field(default_factory=list)
    rewritten_days: list[date] = field(default_factory=list)
    superseded_runs: int = 0


GLOB_CHARS = re.compile(r"[\[\]?*{}\\]")
"""Characters DuckDB's file globs give a meaning to."""


class Lake:
    def __init__(self, home: Path) -> None:
        # Absolute, so a journal left by a crash names the same files from any directory.
        self.home = home.resolve()
        if GLOB_CHARS.search(self.home.as_posix()):
            # DuckDB reads the lake through glob patterns: such a path could match other files.
            raise InputError(f"{self.home}: a warehouse folder whose path holds one of "
                             "[ ] ? * { } \\ cannot be read safely; choose another --home")
        self.root = self.home / "lake"

    def link(self, table: str, day: date, superseded: bool = False) -> Path:
        """The path readers glob for one day of a table: a link to its current version."""
        base = self.root / SUPERSEDED if superseded else self.root
        return base / table / f"day={day.isoformat()}"

    def _version(self, table: str, day: date, superseded: bool, commit: str) -> Path:
        name = f"{SUPERSEDED}.{table}" if superseded else table
        return self.root / VERSIONS / name / f"day={day.isoformat()}.{commit}"

    @contextmanager
    def writer(self) -> Iterator[None]:
        """Hold the one writer's lock of this home; readers are never blocked."""
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self.home / ".writer.lock", "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise LakeBusy(f"another runlake ingest is writing to {self.home}; run this "
                               "one again when it has finished") from None
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def state(self) -> str:
        """A fingerprint of what the lake holds: every day link and the version it names.
        Versions are immutable, so equal fingerprints mean equal contents."""
        links = sorted(
            f"{p.relative_to(self.root)}>{os.readlink(p)}"
            for base in (self.root, self.root / SUPERSEDED) if base.is_dir()
            for table in base.iterdir() if table.is_dir() and not table.name.startswith("_")
            for p in table.iterdir() if p.is_symlink())
        registry = self.root / REGISTRY / "tools.parquet"
        if registry.exists():
            st = registry.stat()
            links.append(f"{REGISTRY}>{st.st_size}:{st.st_mtime_ns}")
        # The model alias and price tables the views resolve models and costs with.
        model_tables = self.root / MODEL_TABLES
        if model_tables.exists():
            links.append(f"{MODEL_TABLES}>{hashlib.sha256(model_tables.read_bytes()).hexdigest()}")
        return hashlib.sha256("\n".join(links).encode()).hexdigest()

    # -- journal ----------------------------------------------------------------------------
    def recover(self) -> bool:
        """Finish a commit a crashed writer left half-applied; True if there was one."""
        journal = self.root / JOURNAL
        if not journal.exists():
            return False
        self._apply(json.loads(journal.read_text()))
        return True

    def _apply(self, plan: dict[str, list[list[str | None]]]) -> None:
        for link, target in plan["links"]:
            assert link is not None
            path = Path(link)
            if target is None:
                if path.is_symlink():
                    path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
            tmp.symlink_to(os.path.relpath(target, path.parent))
            os.replace(tmp, path)
        (self.root / JOURNAL).unlink(missing_ok=True)

    def collect_garbage(self, grace_seconds: float = GRACE_SECONDS) -> int:
        """Delete version folders no link points to, once older than the grace period."""
        versions = self.root / VERSIONS
        if not versions.exists():
            return 0
        live = {p.resolve() for base in (self.root, self.root / SUPERSEDED)
                for p in base.glob("*/day=*") if p.is_symlink()}
        cutoff = time.time() - grace_seconds
        removed = 0
        for v in versions.glob("*/day=*"):
            if v.resolve() not in live and v.stat().st_mtime < cutoff:
                shutil.rmtree(v, ignore_errors=True)
                removed += 1
        return removed

    # -- reading ----------------------------------------------------------------------------
    def known_files(self) -> dict[str, tuple[str, int, str | None, str | None]]:
        """source_file -> (sha256, bytes, tools_sha256, kind) of every file in the lake."""
        con = db.connect()
        try:
            rows = con.execute(
                "SELECT source_file, sha256, bytes, tools_sha256, kind FROM "
                f"({scan_sql(self.root, 'ingest_files')})").fetchall()
        finally:
            con.close()
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}

    def write_registry(self, rows: list[dict[str, Any]]) -> None:
        """Replace lake/_registry/tools.parquet (the tool registry last ingested with)."""
        folder = self.root / REGISTRY
        folder.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist(rows, schema=REGISTRY_SCHEMA)
        tmp = folder / f".tools.{uuid.uuid4().hex}.parquet"
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, folder / "tools.parquet")

    # -- committing -------------------------------------------------------------------------
    def commit(self, staging: Path, replaced: Iterable[str]) -> CommitResult:
        """Merge the staged parts (staging/<table>/day=D/*.parquet, final format) into the lake.

        Rows of `replaced` files already in the lake are dropped; run_id duplicates are
        resolved across all days (the later line wins).
        """
        self.recover()
        con = db.connect(memory_limit="1GB", temp_directory=str(staging / "_spill"))
        try:
            result = self._commit(con, staging, sorted(set(replaced)), uuid.uuid4().hex[:12])
        finally:
            con.close()
        self.collect_garbage()
        return result

    def _commit(self, con: duckdb.DuckDBPyConnection, staging: Path, replaced: list[str],
                commit: str) -> CommitResult:
        con.execute("CREATE TEMP TABLE replaced (source_file VARCHAR)")
        if replaced:
            con.executemany("INSERT INTO replaced VALUES (?)", [[r] for r in replaced])
        for t in TABLES:
            con.execute(f"CREATE TEMP VIEW old_{t} AS {scan_sql(self.root, t)}")
            con.execute(f"CREATE TEMP VIEW sup_{t} AS {scan_sql(self.root / SUPERSEDED, t)}")
            con.execute(f"CREATE TEMP VIEW new_{t} AS {scan_sql(staging, t)}")
        keep, gone = _KEEP, f"NOT ({_KEEP})"
        # Every copy of every run id, across all days, as it will be after this commit.
        con.execute(f"""
            CREATE TEMP TABLE g AS
            SELECT run_id, day, source_file, source_line FROM old_runs WHERE {keep}
            UNION ALL SELECT run_id, day, source_file, source_line FROM sup_runs WHERE {keep}
            UNION ALL SELECT run_id, day, source_file, source_line FROM new_runs""")
        con.execute("""
            CREATE TEMP TABLE w AS SELECT * FROM g
            QUALIFY row_number() OVER (PARTITION BY run_id
                                       ORDER BY source_file DESC, source_line DESC) = 1""")
        con.execute("""
            CREATE TEMP TABLE losers AS
            SELECT g.*, w.day AS win_day, w.source_file AS win_file, w.source_line AS win_line
            FROM g JOIN w USING (run_id)
            WHERE (g.source_file, g.source_line) <> (w.source_file, w.source_line)""")
        staged = {t: set(_staged_days(staging, t)) for t in TABLES}
        old_days = f"SELECT unnest(days) FROM old_ingest_files WHERE {gone}"
        touched = f"""SELECT day FROM g WHERE run_id IN (
                        SELECT run_id FROM new_runs
                        UNION SELECT run_id FROM old_runs WHERE {gone}
                        UNION SELECT run_id FROM sup_runs WHERE {gone})"""
        replaced_days = _days(con, old_days)
        days = sorted({d for t in TABLES for d in staged[t]} | replaced_days
                      | _days(con, touched))
        # Days whose rows must go or move: rewritten whole. The others only gain parts.
        rewrite = set(days) & (
            replaced_days
            | _days(con, "SELECT day FROM losers UNION SELECT win_day FROM losers")
            | _days(con, "SELECT day FROM sup_runs")
            | _days(con, "SELECT day FROM old_flags WHERE code = 'run_id_duplicate'"))
        plan: dict[str, list[list[str | None]]] = {"links": []}
        moves: list[tuple[str, date, list[Path], list[Path]]] = []
        for t in TABLES:
            for d in days:
                old_parts = sorted(self.link(t, d).glob("*.parquet"))
                new_parts = sorted((staging / t / f"day={d.isoformat()}").glob("*.parquet"))
                if d in rewrite or len(old_parts) + len(new_parts) > MAX_PARTS:
                    rewrite.add(d)
                    self._rewrite(con, t, d, commit, plan)
                elif new_parts:
                    moves.append((t, d, old_parts, new_parts))
        # Staged parts move only after every rewrite has read the staging folder whole.
        for t, d, old_parts, new_parts in moves:
            version = self._version(t, d, False, commit)
            version.mkdir(parents=True)
            for p in old_parts:
                _link_or_copy(p, version / p.name)
            for i, p in enumerate(new_parts):
                os.replace(p, version / f"part-{commit}-{i:05d}.parquet")
            plan["links"].append([str(self.link(t, d)), str(version)])
        self.root.mkdir(parents=True, exist_ok=True)
        journal = self.root / JOURNAL
        tmp_journal = self.root / (JOURNAL + ".tmp")
        tmp_journal.write_text(json.dumps(plan))
        os.replace(tmp_journal, journal)
        self._apply(plan)
        return CommitResult(days=days, rewritten_days=sorted(rewrite),
                            superseded_runs=int(db.scalar(con, "SELECT count(*) FROM losers")))

    def _rewrite(self, con: duckdb.DuckDBPyConnection, t: str, d: date, commit: str,
                 plan: dict[str, list[list[str | None]]]) -> None:
        """Write one day of table `t` anew from its old, superseded and staged rows."""
        cols = ", ".join(c.name for c in TABLES[t].columns)
        old_filter = f"day = $d AND {_KEEP}"
        if t == "flags":
            old_filter += " AND code <> 'run_id_duplicate'"
        parts = [f"SELECT {cols} FROM old_{t} WHERE {old_filter}",
                 f"SELECT {cols} FROM new_{t} WHERE day = $d"]
        if t in RUN_TABLES:
            parts.append(f"SELECT {cols} FROM sup_{t} WHERE {old_filter}")
        if t == "flags":
            parts.append(_DUPLICATE_FLAGS)
        rows = " UNION ALL ".join(parts)
        targets = [(False, "true")]
        if t in RUN_TABLES:
            # Rows of a line that lost to a later line with its run_id move aside; rows of
            # other files (spans naming the run) are never a losing line's.
            won = ("NOT EXISTS (SELECT 1 FROM losers l WHERE l.run_id = r.run_id "
                   "AND l.source_file = r.source_file AND l.source_line = r.source_line)")
            if t == "flags":
                won = f"code = 'run_id_duplicate' OR {won}"
            targets = [(False, won), (True, f"NOT ({won})")]
        out_cols = ", ".join(c.name for c in TABLES[t].columns if c.name != "day")
        for sup, cond in targets:
            version = self._version(t, d, sup, commit)
            version.mkdir(parents=True)
            target = version / f"part-{commit}-00000.parquet"
            n = db.scalar(con, f"COPY (SELECT {out_cols} FROM ({rows}) r WHERE {cond}) "
                               f"TO {sql_str(str(target))} {PARQUET}", {"d": d})
            if n:
                plan["links"].append([str(self.link(t, d, sup)), str(version)])
            else:
                shutil.rmtree(version)
                plan["links"].append([str(self.link(t, d, sup)), None])


_KEEP = "source_file NOT IN (SELECT source_file FROM replaced)"
"""Rows of files this commit does not replace (`replaced` is a temp table of the commit)."""
_DUP = CATALOG["run_id_duplicate"]
_DUPLICATE_FLAGS = f"""
    SELECT 'run' AS entity, run_id, win_day AS day, NULL AS span_id, NULL AS message_index,
      NULL AS call_index, NULL AS tool_name, 'run_id_duplicate' AS code,
      '{_DUP.severity}' AS severity, '{_DUP.category}' AS category,
      printf('run_id %s is on %s:%d and again on the later line %s:%d, which wins',
             run_id, source_file, source_line, win_file, win_line) AS detail,
      'derived' AS source, NULL AS finding_key, source_file, source_line
    FROM losers WHERE win_day = $d"""


def _link_or_copy(src: Path, dst: Path) -> None:
    """A hard link (no bytes copied) where the file system has them, else a copy."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _days(con: duckdb.DuckDBPyConnection, sql: str) -> set[date]:
    return {r[0] for r in con.execute(sql).fetchall() if r[0] is not None}


def _staged_days(staging: Path, table: str) -> list[date]:
    return [date.fromisoformat(p.name.removeprefix("day="))
            for p in (staging / table).glob("day=*") if any(p.glob("*.parquet"))]


def clear_staging(staging: Path) -> None:
    shutil.rmtree(staging, ignore_errors=True)
