"""One block of lines -> staged Parquet parts: the unit of work that ingest runs in parallel.

A worker gets whole lines (a block never splits a line, and a worker reads a large file's range
itself: transforms.read.ranges), applies the line rule of transforms.read.readers, normalizes
the records and writes each table's rows to
`<parts>/<table>/month=YYYY-MM/part-<id>.parquet`. It returns only counts (and the digests of
the pieces it read), so the parent's memory does not grow with the input.
"""

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from transforms.contracts.registry import Registry
from transforms.contracts.schemas import LINKED, MANIFEST, PARTITION, TABLES
from transforms.kinds import INPUT_FORMATS
from transforms.normalize.columns import ColumnBuffers
from transforms.read import ranges
from transforms.read.readers import Block, parse_line, split_block

_REGISTRIES: dict[str, Registry] = {}

for _fmt in INPUT_FORMATS.values():
    # Every kind's normalizer, imported with this module: once in the fork server (which
    # preloads it), not again in each worker it forks.
    _fmt.load()


@dataclass
class BlockTask:
    block: Block | None
    """The lines, or None when the worker reads them itself (`range`)."""
    source_file: str
    kind: str
    file_day: date
    parts: str
    part: str
    registry: Registry | None = None
    range: ranges.FileRange | None = None

    @property
    def size(self) -> int:
        """Input bytes of the task."""
        if self.range is not None:
            return self.range.end - self.range.start
        return len(self.block.data) if self.block is not None else 0


@dataclass
class BlockResult:
    lines: int = 0
    accepted: int = 0
    quarantined: int = 0
    blank: int = 0
    days: set[date] = field(default_factory=set)
    pieces: dict[int, bytes] = field(default_factory=dict)
    """Digests of the file's pieces this worker read (a range task)."""
    error: str | None = None
    """Why a range could not be read (its lines are then read by the next ingest)."""


def process_batch(tasks: list[BlockTask], out: "StagedParts | None" = None
                  ) -> list[BlockResult]:
    """Read and normalize several blocks (consecutive ranges of a large file, or small files'
    whole contents) and stage their rows in one Parquet file per table and month, under the
    first task's part name (or in `out`, the files an ingest that reads in its own process
    keeps open for all its blocks), a row group per ROW_GROUP_INPUT bytes of input: only the
    rows of the group being written are in memory, and an ingest stages few, large files that
    the lake need not compact. The counts of each block."""
    # The rows are tuples without cycles: with the cyclic collector on, building the Arrow
    # columns rescans millions of them (a third of the time of to_arrow).
    with without_cyclic_gc():
        return _process_batch(tasks, out)


@contextmanager
def without_cyclic_gc() -> Iterator[None]:
    """Turn Python's cyclic garbage collector off for the block, and back on after it when it
    was on: rows and records hold no cycles, and rescanning them costs a third of the time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


ROW_GROUP_INPUT = 16 * 1024 * 1024
"""The rows of about this many input bytes are written as one row group."""

MAX_BUFFERED_ROWS = 250_000
"""A block's rows are written out whenever this many are held, whatever the block's size in
bytes: a block of two-byte lines holds half as many quarantine rows as it has bytes (millions
for a block of readers.DEFAULT_BLOCK_BYTES), which held whole would take gigabytes."""


def _process_batch(tasks: list[BlockTask], given: "StagedParts | None") -> list[BlockResult]:
    results: list[BlockResult] = []
    out = given or StagedParts(Path(tasks[0].parts), tasks[0].part)
    try:
        pending: list[ColumnBuffers] = []
        size = 0
        for task in tasks:
            res, buffers = normalize_block(task, spill=lambda b: out.write([b]))
            results.append(res)
            pending.append(buffers)
            size += task.size
            if size >= ROW_GROUP_INPUT:
                out.write(pending)
                pending, size = [], 0
        out.write(pending)
    finally:
        if given is None:
            out.close()
    return results


class StagedParts:
    """One Parquet file per table and month of the staged parts (for the tables the lake
    shows as written, LINKED: per week of a month, the rows that name no run or are a span's
    in a file of their own), written a row group at a time, in the lake's final format: the
    commit adds these files to the Delta tables as they are."""

    def __init__(self, parts: Path, part: str) -> None:
        self.folder = parts
        self.part = part
        self._writers: dict[tuple[str, str, str], pq.ParquetWriter] = {}

    def write(self, buffers: list[ColumnBuffers]) -> None:
        for t in TABLES:
            if t == MANIFEST:
                continue
            parts = [b.to_arrow(t) for b in buffers if b.rows(t)]
            if parts:
                table = parts[0] if len(parts) == 1 else pa.concat_tables(parts)
                for month, piece in by_month(table):
                    if t not in LINKED:
                        self._writer(t, month, "").write_table(piece)
                        continue
                    for week, rows in by_week(piece):
                        # Rows that name no run, and a span's, apart: the others can be linked
                        # (a span's rows give way to a copy of the span read later).
                        pending = pc.is_null(rows.column("run_id"))
                        if "span_id" in rows.column_names:
                            pending = pc.or_(pending, pc.is_valid(rows.column("span_id")))
                        some = pc.any(pending).as_py()
                        if not some or not pc.all(pending).as_py():
                            own = rows.filter(pc.invert(pending)) if some else rows
                            self._writer(t, month, week).write_table(own)
                        if some:
                            self._writer(t, month, f"{week}-derived").write_table(
                                rows.filter(pending))

    def _writer(self, table: str, month: str, week: str) -> pq.ParquetWriter:
        w = self._writers.get((table, month, week))
        if w is None:
            folder = self.folder / table / f"{PARTITION}={month}"
            folder.mkdir(parents=True, exist_ok=True)
            name = f"part-{self.part}{'-' + week if week else ''}.parquet"
            w = pq.ParquetWriter(folder / name, TABLES[table].schema,
                                 compression="zstd", compression_level=1)
            self._writers[(table, month, week)] = w
        return w

    def close(self) -> None:
        """Close every file; the first failure (a full disk) raised once all were tried, and
        no writer left open to fail again when it is collected."""
        failed: BaseException | None = None
        for w in self._writers.values():
            try:
                w.close()
            except (OSError, pa.ArrowException) as e:
                w.is_open = False  # its __del__ would close it again and print the error
                failed = failed or e
        self._writers.clear()
        if failed is not None:
            raise failed


def by_week(table: pa.Table) -> Iterator[tuple[str, pa.Table]]:
    """The rows of `table` by the week of their day (its Monday, YYYY-MM-DD)."""
    days = table.column("day")
    weeks = sorted({d - timedelta(days=d.weekday()) for d in pc.unique(days).to_pylist()})
    for monday in weeks:
        if len(weeks) == 1:
            yield monday.isoformat(), table
            continue
        after = monday + timedelta(days=7)
        yield monday.isoformat(), table.filter(pc.and_(
            pc.greater_equal(days, pa.scalar(monday, pa.date32())),
            pc.less(days, pa.scalar(after, pa.date32()))))


def by_month(table: pa.Table) -> Iterator[tuple[str, pa.Table]]:
    """The rows of `table` by the month of their day (YYYY-MM)."""
    # The months from the few distinct days (formatting every row's day cost 0.1 s a block).
    days = table.column("day")
    months = sorted({d.strftime("%Y-%m") for d in pc.unique(days).to_pylist()})
    for m in months:
        if len(months) == 1:
            yield m, table
            continue
        first = date(int(m[:4]), int(m[5:]), 1)
        after = date(first.year + first.month // 12, first.month % 12 + 1, 1)
        yield m, table.filter(pc.and_(pc.greater_equal(days, pa.scalar(first, pa.date32())),
                                      pc.less(days, pa.scalar(after, pa.date32()))))


def normalize_block(task: BlockTask, spill: Callable[[ColumnBuffers], None] | None = None
                    ) -> tuple[BlockResult, ColumnBuffers]:
    """The rows of one block's lines, and what became of every line. With `spill`, the rows
    are handed to it (and let go) whenever MAX_BUFFERED_ROWS are held, between two lines; the
    buffers returned hold the rest."""
    # The records are trees without cycles: the cyclic collector would only rescan them.
    with without_cyclic_gc():
        return _normalize_block(task, spill)


def _normalize_block(task: BlockTask, spill: Callable[[ColumnBuffers], None] | None = None
                     ) -> tuple[BlockResult, ColumnBuffers]:
    buffers = ColumnBuffers()
    block = task.block
    pieces: dict[int, bytes] = {}
    if task.range is not None:
        got = ranges.read(task.range)
        if got.block is None:
            return BlockResult(error=got.error), buffers
        block, pieces = got.block, got.pieces
    assert block is not None
    fmt = INPUT_FORMATS[task.kind]
    # One registry object per process, so its compiled validators serve every block.
    reg = _REGISTRIES.setdefault(task.registry.sha256, task.registry) \
        if task.registry is not None and fmt.checks_tools else None
    norm = fmt.normalizer(task.source_file, task.file_day, buffers, reg)
    res = BlockResult(pieces=pieces)
    tables = list(buffers.rows_of.values())
    for line_no, offset, line, obj, code, message in records(block):
        res.lines += 1
        if spill is not None and not res.lines % 4096 \
                and sum(map(len, tables)) >= MAX_BUFFERED_ROWS:
            spill(buffers)
            for rows in tables:  # in place: the normalizer appends to these lists
                rows.clear()
        if obj is None and code is None:
            res.blank += 1
            continue
        if obj is not None:
            try:
                reason = norm.add(line_no, line, obj)
            except Exception as e:  # noqa: BLE001 - a reader's bug must not lose the line
                # Whatever the record made the reader trip on, the line is kept whole in the
                # quarantine and the rows it had begun are taken back: the newest rows of
                # each table, which end with this line's number (source_line).
                for rows in tables:
                    while rows and rows[-1][-1] == line_no:
                        rows.pop()
                reason = tripped(e)
            if reason is None:
                res.accepted += 1
                continue
            code, message = "unrecognized_record", reason
        buffers.append("quarantine", source_file=task.source_file, day=task.file_day,
                       line_number=line_no, byte_offset=offset, error_code=code,
                       error_message=message, raw=line)
        res.quarantined += 1
    res.days = norm.days | ({task.file_day} if res.quarantined else set())
    return res, buffers


def records(block: Block) -> Iterator[tuple[int, int, bytes, Any, str | None, str | None]]:
    """Every line of a block with what the line rule makes of it: (line number, byte offset,
    line, record or None, quarantine code, message); a blank line has neither record nor
    code. The ingest and `runlake validate` read lines through this one loop."""
    for line_no, offset, line in split_block(block):
        if not line.strip():
            yield line_no, offset, line, None, None, None
            continue
        obj, code, message = parse_line(line)
        yield line_no, offset, line, obj, code, message


def tripped(e: Exception) -> str:
    """The quarantine reason of a record a reader raised on (a bug to report, not bad input)."""
    return f"runlake could not read this record ({type(e).__name__}: {str(e)[:200]}); " \
        "please report it"
