"""Converting a lake written by an earlier runlake, once, on first use by a writer.

A lake of Delta tables whose rows as ingested sit at lake/<table> (before the derived tables)
has those tables moved to lake/_lines/<table> (`move_to_lines`); the next commit derives the
rest. A lake written before Delta Lake (day links to version folders) is converted (`convert`):

The old lake is read whole through DuckDB (its current day links, and the rows of lines that
lost to a later line with the same run_id, which the Delta lake keeps in the tables), written
as Delta tables beside it, and swapped in; the old folder is kept as lake.before-delta-<time>
until the user removes it. Nothing is read from the input files again.
"""

import json
import os
import shutil
import sys
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from transforms import db
from transforms.contracts.schemas import TABLES
from transforms.lake.core import LAYOUT, Lake
from transforms.lake.files import (
    AS_READ,
    DERIVED,
    LINES,
    MANIFEST,
    PARTITION,
    duckdb_type,
    lake_schema,
    lines_path,
    sql_str,
)


def needs_move(lake: Lake) -> bool:
    """A Delta lake whose rows as ingested are at lake/<table> (an earlier layout)."""
    return not lake.exists(f"{LINES}/runs") and lake.exists("runs") \
        and lake.commit_meta().get("layout", 1) < LAYOUT


def move_to_lines(lake: Lake) -> None:
    """Move the tables as ingested of an earlier layout to lake/_lines/<table> (a rename of
    each folder; a copy on object storage), and drop the derived folders that layout kept
    outside Delta. Readers keep reading the lake versions before: their versions name the
    same tables under their new names (Lake.tables_at)."""
    with lake.committing():
        if not needs_move(lake):
            return  # another process moved it while this one waited
        print(f"runlake: moving the lake's tables as ingested under {lake.uri(LINES)} "
              "(once)", file=sys.stderr)
        for t in AS_READ:
            if not lake.exists(t):
                continue
            lake.store.move((t,), (LINES, t))
        lake.store.rmtree(DERIVED)
        # What that layout kept beside the warehouse file: its stamp, lock and marker.
        for left in (".warehouse.duckdb.lake_state", ".publish.lock", ".forget.pending"):
            (lake.where.folder / left).unlink(missing_ok=True)


_DAY_OF_FOLDER = ("CAST(regexp_extract(_runlake_file, "
                  "'/day=([0-9]{4}-[0-9]{2}-[0-9]{2})/[^/]*$', 1) AS DATE) AS day")
"""The `day` of a legacy lake row: its file's folder, lake/<table>/day=YYYY-MM-DD/."""


def _old_rows(con: duckdb.DuckDBPyConnection, root: Path, table: str) -> pa.Table:
    globs = [p for p in (root / table, root / "_superseded" / table)
             if any(p.glob("day=*/*.parquet"))]
    if not globs:
        return pa.Table.from_batches([], schema=lake_schema(table))
    present = {r[0] for g in globs for r in con.execute(
        f"SELECT DISTINCT name FROM parquet_schema({sql_str(str(g) + '/day=*/*.parquet')})"
    ).fetchall()} | {"day"}
    # The day is the name of the folder holding the file (day=YYYY-MM-DD), read from that
    # folder alone: DuckDB's Hive partitioning would also take any name=value folder above
    # the lake (in the home's path) for a column.
    cols = ", ".join(_DAY_OF_FOLDER if c.name == "day"
                     else c.name if c.name in present
                     else f"CAST(NULL AS {duckdb_type(c.type)}) AS {c.name}"
                     for c in TABLES[table].columns)
    parts = " UNION ALL ".join(
        f"SELECT {cols} FROM read_parquet({sql_str(str(g) + '/day=*/*.parquet')}, "
        "hive_partitioning = false, filename = '_runlake_file', union_by_name = true)"
        for g in globs)
    rows: pa.Table = con.sql(f"SELECT * FROM ({parts})").to_arrow_table()
    if table == "flags":  # now derived by the views from the lines that carry one run_id
        rows = rows.filter(pc.not_equal(rows["code"], "run_id_duplicate"))
    if table != MANIFEST:
        months = pc.strftime(rows["day"].cast(pa.timestamp("s")), format="%Y-%m")
        rows = rows.append_column(PARTITION, months)
    return rows.cast(lake_schema(table))


def convert(lake: Lake) -> None:
    """Convert the legacy lake under `home` into Delta tables, once."""
    from deltalake import CommitProperties, write_deltalake

    home = lake.local_home  # never on object storage (Lake.is_legacy)
    home.mkdir(parents=True, exist_ok=True)
    with lake.committing():
        if not lake.is_legacy():
            return  # another process converted it while this one waited
        print(f"runlake: converting the lake in {lake.root} to Delta Lake tables (once; the "
              f"old folder is kept beside it)", file=sys.stderr)
        fresh = home / f".lake.delta-{os.getpid()}"
        shutil.rmtree(fresh, ignore_errors=True)
        con = db.connect()
        try:
            # The manifest last, naming the table versions it completes (as an ingest does).
            for t in [*(t for t in TABLES if t != MANIFEST), MANIFEST]:
                rows = _old_rows(con, lake.root, t)
                meta = {"ingest_id": "migration", "files": [], "n_files": rows.num_rows,
                        "layout": LAYOUT,
                        "tables": {lines_path(t): 0 for t in TABLES if t != MANIFEST},
                        "rows_added": {}, "rows_removed": {}}
                write_deltalake((fresh / lines_path(t)).as_uri(), rows, mode="overwrite",
                                partition_by=[PARTITION] if t != MANIFEST else None,
                                commit_properties=CommitProperties(
                                    custom_metadata={"runlake": json.dumps(meta)}))
        finally:
            con.close()
        for keep in ("_registry", "_models"):
            if (lake.root / keep).exists():
                shutil.copytree(lake.root / keep, fresh / keep)
        old = home / f"lake.before-delta-{time.strftime('%Y%m%dT%H%M%S')}"
        os.replace(lake.root, old)
        os.replace(fresh, lake.root)


def upgrade(lake: Lake) -> None:
    """Bring a lake written by an earlier runlake to this layout (a writer's first step)."""
    if lake.is_legacy():
        convert(lake)
    if needs_move(lake):
        move_to_lines(lake)
