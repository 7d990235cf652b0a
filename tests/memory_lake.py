"""Input files read into lake tables in this process, without a process pool, Delta or a
warehouse file: the files are found (`discover`) and cut into blocks (`BlockReader`) as the
ingest does, every block's lines go through the ingest workers' own per-line code
(`transforms.normalize.worker.normalize_block`: the line rule and the normalizers), and each file
gets the `ingest_files` row the ingest would write. `transforms.warehouse.memory.connect` then
builds every view over them.

Used by the given/expect view cases (tests/sql/test_views.py, tests/transforms/
test_flag_cases.py); a few of their cases also run through the real ingest, and must give
the same answers both ways."""

from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from transforms.contracts import models, registry
from transforms.contracts.schemas import TABLES
from transforms.ingest import unreadable_reason
from transforms.kinds import TOOL_CHECKED_KINDS
from transforms.lake.core import REGISTRY_SCHEMA
from transforms.lake.files import MANIFEST
from transforms.normalize.columns import ColumnBuffers
from transforms.normalize.worker import BlockTask, normalize_block
from transforms.read.dates import file_day
from transforms.read.discover import discover
from transforms.read.readers import READABLE_KINDS, BlockReader
from transforms.read.streams import file_sha256
from transforms.warehouse import memory


def lake_tables(paths: list[Path], tools: Path | None = None,
                now: datetime | None = None) -> tuple[dict[str, pa.Table], pa.Table | None]:
    """The rows an ingest of `paths` into an empty lake would commit, by lake table, and the
    tool registry's rows (None without `tools`)."""
    now = now or datetime.now(UTC)
    reg = registry.load(tools) if tools is not None else None
    tools_sha = reg.sha256 if reg is not None else None
    parts: dict[str, list[pa.Table]] = {t: [] for t in TABLES if t != MANIFEST}
    manifest = ColumnBuffers((MANIFEST,))
    for seq, f in enumerate(discover(paths)):
        day = file_day(f.path, now)
        lines = accepted = quarantined = blank = 0
        days: set[date] = set()
        if f.kind in READABLE_KINDS:
            reader = BlockReader(f)
            for i, block in enumerate(reader):
                task = BlockTask(block, f.source_file, f.kind, day, "", f"{seq:06d}-{i:06d}",
                                 reg if f.kind in TOOL_CHECKED_KINDS else None)
                res, buffers = normalize_block(task)
                lines += res.lines
                accepted += res.accepted
                quarantined += res.quarantined
                blank += res.blank
                days |= res.days
                for t, got in parts.items():
                    if buffers.rows(t):
                        got.append(buffers.to_arrow(t))
            error, sha256 = reader.error, reader.sha256
        else:
            error, sha256 = unreadable_reason(f), file_sha256(f.path)
        manifest.append(
            MANIFEST, source_file=f.source_file, day=day, kind=f.kind or "unknown",
            compression=f.compression, sha256=sha256, bytes=f.size, lines=lines,
            lines_accepted=accepted, lines_quarantined=quarantined, lines_blank=blank,
            days=sorted(days | {day}), error=error, ingested_at=now,
            tools_sha256=tools_sha if f.kind in TOOL_CHECKED_KINDS else None)
    tables = {t: pa.concat_tables(got) for t, got in parts.items() if got}
    tables[MANIFEST] = manifest.to_arrow(MANIFEST)
    rows = pa.Table.from_pylist(reg.rows(), schema=REGISTRY_SCHEMA) \
        if reg is not None else None
    return tables, rows


def connect(paths: list[Path], tools: Path | None = None,
            now: datetime | None = None) -> duckdb.DuckDBPyConnection:
    """Every view of sql/ over the rows of `paths`, in memory (see `lake_tables`)."""
    tables, rows = lake_tables(paths, tools, now)
    return memory.connect(tables, rows, models.load())
