"""The lake: Hive-partitioned Parquet under RUNLAKE_HOME/lake, written atomically a day at a time.

Layout: `lake/<table>/day=YYYY-MM-DD/data.parquet`, one file per table and day, replaced with
`os.replace` so a reader sees the old day or the new one, never half. Lines that lost to a later
line with the same run_id keep their rows in `lake/_superseded/<table>/...` so the winner can be
recomputed when files change. A commit is journaled (`lake/_commit.json`): if a process dies
half-way through its renames, the next writer rolls the commit forward before doing anything.

The lake is a function of the set of ingested files: a file's rows are identified by
`source_file`; ingesting a changed file replaces its rows; an unchanged file is skipped.
"""

import contextlib
import json
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import duckdb
import pyarrow as pa

from transforms import db
from transforms.flags import CATALOG
from transforms.schemas import RUN_TABLES, TABLES

SUPERSEDED = "_superseded"
JOURNAL = "_commit.json"

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


def scan_sql(root: Path, table: str) -> str:
    """SQL reading every day of `table` under `root` (a lake folder), typed even when empty."""
    files = list((root / table).glob("day=*/*.parquet"))
    if not files:
        return empty_select(table)
    cols = ", ".join(c.name for c in TABLES[table].columns)
    glob = sql_str((root / table).resolve().as_posix() + "/day=*/*.parquet")
    return (f"SELECT {cols} FROM read_parquet({glob}, hive_partitioning = true, "
            f"hive_types = {{'day': DATE}}, union_by_name = true)")


@dataclass
class CommitResult:
    days: list[date] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    superseded_runs: int = 0


class Lake:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.root = home / "lake"

    def day_file(self, table: str, day: date, superseded: bool = False) -> Path:
        base = self.root / SUPERSEDED if superseded else self.root
        return base / table / f"day={day.isoformat()}" / "data.parquet"

    # -- journal ----------------------------------------------------------------------------
    def recover(self) -> bool:
        """Finish a commit a crashed writer left half-applied; True if there was one."""
        journal = self.root / JOURNAL
        if not journal.exists():
            return False
        plan = json.loads(journal.read_text())
        self._apply(plan)
        return True

    def _apply(self, plan: dict[str, list]) -> None:
        for tmp, final in plan["replace"]:
            if os.path.exists(tmp):
                os.makedirs(os.path.dirname(final), exist_ok=True)
                os.replace(tmp, final)
        for final in plan["delete"]:
            if os.path.exists(final):
                os.remove(final)
                _prune_empty(Path(final).parent)
        (self.root / JOURNAL).unlink(missing_ok=True)

    # -- reading ----------------------------------------------------------------------------
    def known_files(self) -> dict[str, tuple[str, int]]:
        """source_file -> (sha256, bytes) of every file already in the lake."""
        con = db.connect()
        try:
            rows = con.execute(
                f"SELECT source_file, sha256, bytes FROM ({scan_sql(self.root, 'ingest_files')})"
            ).fetchall()
        finally:
            con.close()
        return {r[0]: (r[1], r[2]) for r in rows}

    # -- committing -------------------------------------------------------------------------
    def commit(self, staging: Path, replaced: Iterable[str]) -> CommitResult:
        """Merge the staged rows (staging/<table>/day=D/*.parquet) into the lake.

        Rows of `replaced` files already in the lake are dropped; for every day touched, each
        table's day file is rebuilt from the old rows, the superseded rows and the new rows,
        and run_id duplicates are resolved across all days (the later line wins).
        """
        self.recover()
        out = staging / "_out"
        con = db.connect(memory_limit="1GB", temp_directory=str(staging / "_spill"))
        try:
            return self._commit(con, staging, out, sorted(set(replaced)))
        finally:
            con.close()

    def _commit(self, con: duckdb.DuckDBPyConnection, staging: Path, out: Path,
                replaced: list[str]) -> CommitResult:
        con.execute("CREATE TEMP TABLE replaced (source_file VARCHAR)")
        if replaced:
            con.executemany("INSERT INTO replaced VALUES (?)", [[r] for r in replaced])
        for t in TABLES:
            con.execute(f"CREATE TEMP VIEW old_{t} AS {scan_sql(self.root, t)}")
            con.execute(f"CREATE TEMP VIEW sup_{t} AS {scan_sql(self.root / SUPERSEDED, t)}")
            con.execute(f"CREATE TEMP VIEW new_{t} AS {scan_sql(staging, t)}")
        keep = "source_file NOT IN (SELECT source_file FROM replaced)"
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
        days_sql = " UNION ".join(
            [f"SELECT day FROM new_{t}" for t in TABLES]
            + [f"SELECT day FROM old_{t} WHERE NOT ({keep})" for t in ("runs", "ingest_files")]
            + ["SELECT unnest(days) FROM old_ingest_files WHERE NOT (" + keep + ")",
               """SELECT day FROM g WHERE run_id IN (
                    SELECT run_id FROM new_runs UNION
                    SELECT run_id FROM old_runs WHERE NOT (""" + keep + """) UNION
                    SELECT run_id FROM sup_runs WHERE NOT (""" + keep + "))"])
        days = sorted(r[0] for r in con.execute(days_sql).fetchall() if r[0] is not None)
        con.execute("CREATE TEMP TABLE affected (day DATE)")
        con.executemany("INSERT INTO affected VALUES (?)", [[d] for d in days])
        result = CommitResult(days=days)
        n_losers = int(db.scalar(con, "SELECT count(*) FROM losers"))
        result.superseded_runs = n_losers
        plan: dict[str, list] = {"replace": [], "delete": []}
        in_days = "day IN (SELECT day FROM affected)"
        for t in TABLES:
            cols = ", ".join(c.name for c in TABLES[t].columns)
            old_filter = f"{in_days} AND {keep}"
            if t == "flags":
                old_filter += " AND code <> 'run_id_duplicate'"
            parts = [f"SELECT {cols} FROM old_{t} WHERE {old_filter}",
                     f"SELECT {cols} FROM new_{t} WHERE {in_days}"]
            if t in RUN_TABLES:
                parts.append(f"SELECT {cols} FROM sup_{t} WHERE {old_filter}")
            if t == "flags":
                parts.append(_DUPLICATE_FLAGS)
            rows = " UNION ALL ".join(parts)
            targets = [(False, "true")]
            if t in RUN_TABLES and n_losers:
                won = ("run_id IS NULL OR EXISTS (SELECT 1 FROM w WHERE w.run_id = r.run_id "
                       "AND w.source_file = r.source_file AND w.source_line = r.source_line)")
                if t == "flags":
                    won = f"code = 'run_id_duplicate' OR {won}"
                targets = [(False, won), (True, f"NOT ({won})")]
            for sup, cond in targets:
                dest = out / ("sup" if sup else "main") / t
                dest.parent.mkdir(parents=True, exist_ok=True)
                n = db.scalar(con, 
                    f"COPY (SELECT * FROM ({rows}) r WHERE {cond}) "
                    f"TO {sql_str(str(dest))} (FORMAT parquet, PARTITION_BY (day), "
                    "FILENAME_PATTERN 'data', COMPRESSION zstd, ROW_GROUP_SIZE 122880)")
                if not sup:
                    result.rows[t] = int(n or 0)
                for d in days:
                    final = self.day_file(t, d, sup)
                    if not sup and t in RUN_TABLES and not n_losers:
                        # No line lost anywhere: no superseded rows may remain on these days.
                        plan["delete"].append(str(self.day_file(t, d, True)))
                    written = sorted((dest / f"day={d.isoformat()}").glob("*.parquet"))
                    if len(written) > 1:
                        written = [_merge(con, written)]
                    if written:
                        plan["replace"].append([str(written[0]), str(final)])
                    else:
                        plan["delete"].append(str(final))
        self.root.mkdir(parents=True, exist_ok=True)
        journal = self.root / JOURNAL
        tmp_journal = self.root / (JOURNAL + ".tmp")
        tmp_journal.write_text(json.dumps(plan))
        os.replace(tmp_journal, journal)
        self._apply(plan)
        return result


_DUP = CATALOG["run_id_duplicate"]
_DUPLICATE_FLAGS = f"""
    SELECT 'run' AS entity, run_id, win_day AS day, NULL AS span_id, NULL AS message_index,
      NULL AS call_index, 'run_id_duplicate' AS code, '{_DUP.severity}' AS severity,
      '{_DUP.category}' AS category,
      printf('run_id %s is on %s:%d and again on the later line %s:%d, which wins',
             run_id, source_file, source_line, win_file, win_line) AS detail,
      source_file, source_line
    FROM losers WHERE win_day IN (SELECT day FROM affected)"""


def _merge(con: duckdb.DuckDBPyConnection, files: list[Path]) -> Path:
    """One file from the several a partitioned COPY may write for a day."""
    target = files[0].with_name("merged.parquet")
    listing = ", ".join(sql_str(str(f)) for f in files)
    con.execute(f"COPY (SELECT * FROM read_parquet([{listing}])) TO {sql_str(str(target))} "
                "(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)")
    return target


def _prune_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):
        folder.rmdir()


def clear_staging(staging: Path) -> None:
    shutil.rmtree(staging, ignore_errors=True)
