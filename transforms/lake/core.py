"""The lake: a Delta Lake table per stored table under RUNLAKE_HOME/lake/.

An ingest writes each input line's rows to the tables it writes (`WRITTEN`): lake/_lines/<table>
for the tables whose rows the views resolve (runs, messages, spans, ...), lake/quarantine. The
derived tables (transforms.warehouse.derive) are made from those: lake/<table>, holding exactly
the rows the warehouse's view of that name shows, and lake/_derived/<name> behind the other
views. Written tables are partitioned by `month` (YYYY-MM of `day`; `day` stays a column of the
files), derived ones by `week`, and readers skip days by the files' statistics.

One lake version is one commit sequence (transforms.warehouse.lake_version, with the steps
`Lake` gives: `commit_table`, the derive, `maintain`, `commit_manifest`):
1. every written table: one Delta transaction that removes the files holding rows of the
   commit's input files (a changed file's old rows, or rows a crashed ingest left) and adds the
   staged files; files that mix several inputs (after compaction) are first cleaned by a
   predicate delete;
2. the derived tables, each rewritten for the weeks whose rows step 1 changed (a predicate
   overwrite of those week partitions);
3. compaction of the months step 1 touched, when they hold many files, and every so many
   versions a vacuum;
4. `ingest_files` last: the manifest of what the lake holds, one row per input file, replaced
   by a predicate overwrite. Its commit names the version of every table it completes.

Readers see one lake version whole or not at all: they read each table's files at the versions
the newest manifest commit names (`tables_at`). A crash before the manifest commit leaves the
manifest as it was, so the next ingest reads those input files again, step 1 removes whatever
the crashed one added, and step 2 rewrites every week whose rows differ from the version readers
see. Concurrent writers retry a conflicting commit a bounded number of times. Replaced files
stay on disk until `vacuum` removes them, no sooner than the retention after they were replaced.
"""

import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from transforms.contracts.schemas import TABLES as TABLES
from transforms.errors import InputError
from transforms.lake import commit as lakecommit
from transforms.lake.commit import CommitConflict, CommitResult, history, with_retries
from transforms.lake.files import (
    AS_READ,
    DATA_TABLES,
    DERIVED,
    LINES,
    MANIFEST,
    PARTITION,
    TABLE_PROPERTIES,
    WRITTEN,
    duckdb_type,
    empty_select,
    files_sql,
    in_predicate,
    lake_schema,
    lines_path,
    month_of,
    parquet_sql,
    scan_sql,
    sql_str,
)
from transforms.lake.files import WEEK as WEEK
from transforms.lake.store import locate
from transforms.lake.tables import LAYOUT, DataFile, KnownFile, Tables

__all__ = ["AS_READ", "DATA_TABLES", "DERIVED", "LAYOUT", "LINES", "MANIFEST", "PARTITION",
           "WEEK", "WRITTEN", "CommitConflict", "CommitResult", "DataFile", "KnownFile",
           "duckdb_type", "empty_select", "files_sql", "history", "lake_schema", "month_of",
           "scan_sql", "sql_str", "lines_path",
           "parquet_sql"]

REGISTRY = "_registry"
REGISTRY_SCHEMA = pa.schema([
    ("agent", pa.string()), ("tool_name", pa.string()), ("description", pa.string()),
    ("strict", pa.bool_()), ("parameters", pa.string()), ("registry_sha256", pa.string()),
    ("registry_file", pa.string())])
"""lake/_registry/tools.parquet: one row per registered tool of the last registry used."""
MODEL_TABLES = "_models/tables.json"
"""The model alias and price tables the last ingest was given (transforms.warehouse.lookups)."""
GRADING = "_grading/evaluations.json"
"""The evaluations that decide a run made from a trace, as the last ingest was given them
(transforms.warehouse.grading)."""
MANIFEST_MADE = ".ingest_files.made"
"""lake/.ingest_files.made: the manifest has been committed once (without it, data tables and
no manifest are a first ingest that died before its manifest commit, not damage)."""
DEFAULT_RETENTION_HOURS = 2.0
"""How long a replaced file stays on disk for readers that listed it (RUNLAKE_RETENTION_HOURS)."""
LEGACY_MARKERS = ("_versions", "_commit.json", "_superseded")
"""What a lake written before Delta Lake holds (see transforms.lake.migrate)."""

GLOB_CHARS = "[]?*{}\\"
"""Characters DuckDB gives a meaning to in file names (its globs)."""
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def unstorable(name: str) -> str | None:
    """What in a local home path the lake's Delta tables cannot store (delta-rs parses the
    path as a URL: it decodes a %XX escape, refuses control characters, and finds no history
    of a table under a #), or None. Any other
    character a file system allows works, but for DuckDB's glob characters (GLOB_CHARS)."""
    bad = sorted({ch for ch in name if ord(ch) < 32 or ord(ch) == 127})
    if bad:
        return "a control character (" + ", ".join(repr(ch) for ch in bad) + ")"
    m = _ESCAPE.search(name)
    if m:
        return f"a %XX escape ({m.group()!r})"
    if "#" in name:
        return "a # (delta-rs lists no history of a table under it)"
    return None



class Lake(Tables):
    def __init__(self, home: Path | str) -> None:
        # Absolute, so that rows and manifests name the same files from any directory.
        self.where = locate(home)
        bad = None if self.where.remote else unstorable(self.where.name)
        if bad is not None:
            raise InputError(f"{self.where.name!r}: a home path holding {bad} cannot be stored "
                             "by the lake's Delta tables; choose another --home (docs/lake.md)")
        if any(ch in self.where.name for ch in GLOB_CHARS):
            # DuckDB reads the lake's files by name, and takes these characters as a glob.
            raise InputError(f"{self.where.name!r}: a warehouse folder whose path holds one of "
                             "[ ] ? * { } \\ cannot be read safely; choose another --home")
        if self.where.remote and any(ch in str(self.where.folder) for ch in GLOB_CHARS):
            # Staged files are read by name from the warehouse file's folder.
            raise InputError(f"{self.where.folder}: the warehouse folder of an s3:// home "
                             "holds one of [ ] ? * { } \\ and cannot be read safely; set "
                             "RUNLAKE_WAREHOUSE or XDG_CACHE_HOME elsewhere")
        self.home: Path | str = self.where.home
        self.remote = self.where.remote
        self.store = self.where.lake()
        self._opened: dict[tuple[str, int], Any] = {}

    @property
    def root(self) -> Path:
        """The local lake folder (a local home only: an s3:// home's lake is `store`)."""
        return self.store.path()

    @property
    def local_home(self) -> Path:
        """The local folder of a local home (never of an s3:// one)."""
        if self.remote:
            raise AssertionError(f"{self.home} is not a local folder")
        return Path(self.home)

    def is_there(self) -> bool:
        """The lake folder exists (anything was ever written to it)."""
        return self.store.is_dir()

    def _create(self, table: str) -> Any:
        """Create a table an ingest writes (`WRITTEN`, or the manifest)."""
        from deltalake import DeltaTable

        try:
            return DeltaTable.create(self.delta_uri(table), lake_schema(table),
                                     partition_by=[PARTITION] if table != MANIFEST else None,
                                     mode="ignore", configuration=TABLE_PROPERTIES,
                                     storage_options=self.store.options or None)
        except Exception:  # noqa: BLE001 - another writer created it at the same moment
            dt = self.open(table)
            if dt is None:
                raise
            return dt

    def is_legacy(self) -> bool:
        """A lake written by runlake before Delta Lake (day links to version folders)."""
        if self.remote:
            return False  # runlake never wrote one to object storage
        return any((self.root / m).exists() for m in LEGACY_MARKERS) or (
            (self.root / "runs").is_dir() and not self.exists("runs")
            and any((self.root / "runs").glob("day=*")))

    def write_registry(self, rows: list[dict[str, Any]]) -> None:
        """Replace lake/_registry/tools.parquet (the tool registry last ingested with)."""
        sink = pa.BufferOutputStream()
        pq.write_table(pa.Table.from_pylist(rows, schema=REGISTRY_SCHEMA), sink,
                       compression="zstd")
        self.store.write_bytes(sink.getvalue().to_pybytes(), REGISTRY, "tools.parquet")

    @contextmanager
    def committing(self) -> Iterator[None]:
        """Commit sequences on this home take turns (the parsing before runs in parallel):
        the versions a manifest commit records then hold that commit whole and nothing of
        another's. Waits for the other writer; never fails for it (Store.writer_lock)."""
        with self.store.writer_lock():
            yield

    def commit_manifest(self, manifest: pa.Table, sources: list[str],
                        meta: dict[str, Any]) -> int:
        """The last step of a lake version (transforms.warehouse.lake_version): the manifest rows of
        `sources` replace theirs, in a commit that records `meta` (the version of every
        table it completes). Returns the manifest's version."""
        from deltalake import CommitProperties, write_deltalake

        data = manifest.cast(lake_schema(MANIFEST))
        predicate = in_predicate(sources)

        def write_manifest() -> int:
            manifest = self.newest_table(MANIFEST)
            if manifest is None:
                self._create(MANIFEST)
            else:
                lakecommit.with_properties(self, MANIFEST, manifest, TABLE_PROPERTIES)
            write_deltalake(self.delta_uri(MANIFEST), data, mode="overwrite", predicate=predicate,
                            schema_mode="merge", storage_options=self.store.options or None,
                            commit_properties=CommitProperties(
                                custom_metadata={"runlake": json.dumps(meta)}))
            return self.newest_version(MANIFEST)  # under the commit lock: this commit

        version = with_retries("ingest_files", write_manifest)
        self.store.touch(MANIFEST_MADE)
        return version

    def commit_table(self, table: str, staged: Path, sources: list[str],
                     ingest_id: str) -> tuple[int, int, int]:
        """Replace the rows of `sources` in one table with its staged parts: (version, rows
        added, rows removed) (transforms.lake.commit.commit_table)."""
        return lakecommit.commit_table(self, table, staged, sources, ingest_id)

    def maintain(self, months: Iterable[str], retention_hours: float) -> dict[str, int]:
        """Compaction and vacuum as thresholds say (transforms.lake.commit.maintain)."""
        return lakecommit.maintain(self, months, retention_hours)

    def vacuum(self, retention_hours: float) -> int:
        return lakecommit.vacuum(self, retention_hours)


def clear_scratch(parts: Path) -> None:
    shutil.rmtree(parts, ignore_errors=True)


OWNER = "owner.pid"
"""The pid of the process that owns a scratch folder (.scratch/<name>/owner.pid): a folder
no live process owns was left by a crash (transforms.ingest.clear_abandoned_scratch)."""


def claim_scratch(folder: Path) -> Path:
    """Create a scratch folder owned by this process."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / OWNER).write_text(str(os.getpid()))
    return folder
