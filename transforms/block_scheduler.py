"""The block scheduler of an ingest: every readable file cut into blocks (or byte ranges a worker
reads itself), the blocks of all files sharing the parser processes, and what each file's
blocks made of its lines gathered back per file.

A worker task is a batch of blocks (transforms.normalize.worker.process_batch): consecutive
ranges of a large file, or the blocks of many small files. With one worker, or little input,
the blocks are read in the ingest's own process.
"""

from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import date, datetime
from multiprocessing import get_context
from multiprocessing.context import BaseContext
from pathlib import Path

from transforms import memory
from transforms.contracts import registry
from transforms.ingest_report import FileReport, Progress
from transforms.kinds import TOOL_CHECKED_KINDS
from transforms.normalize.worker import BlockResult, BlockTask, StagedParts, process_batch
from transforms.read import ranges
from transforms.read.dates import file_day
from transforms.read.readers import READABLE_KINDS, BlockReader, InputFile
from transforms.read.streams import combine, file_sha256


@dataclass
class FileState:
    file: InputFile
    report: FileReport
    days: set[date] = field(default_factory=set)
    sha256: str = ""
    pieces: dict[int, bytes] | None = None
    """Digests of the pieces of a file its workers read by range (transforms.read.ranges)."""

    def add(self, res: BlockResult) -> None:
        self.report.lines += res.lines
        self.report.accepted += res.accepted
        self.report.quarantined += res.quarantined
        self.report.blank += res.blank
        self.days.update(res.days)
        if self.pieces is not None:
            self.pieces.update(res.pieces)
        if res.error is not None and self.report.error is None:
            self.report.error = res.error

    def digest(self) -> str:
        if self.pieces is None:
            return self.sha256
        if self.report.error is not None:
            return ""  # read again by the next ingest, whatever its digest
        found = [self.pieces[i] for i in sorted(self.pieces)]
        assert sorted(self.pieces) == list(range(len(found))), "a piece was not hashed"
        return combine(found)


def schedule_blocks(todo: list[tuple[InputFile, FileReport]], parts: Path, block_bytes: int,
         workers: int | None, progress: Progress | None, now: datetime,
         reg: registry.Registry | None = None
         ) -> Iterator[tuple[InputFile, FileReport, str, set[date]]]:
    """Process every readable file block by block, blocks of all files sharing the workers;
    yields each file with its digest and the days its rows landed in."""
    n_workers = worker_count(workers)
    pool = None
    # Consecutive ranges of a large file go to a worker together (staged as one file per table
    # and month, a row group per range): large tasks while much is left, single ranges at the
    # end, so that the workers finish together.
    left = sum(f.size for f, _ in todo if f.kind in READABLE_KINDS)
    if runs_in_parallel([f for f, _ in todo], n_workers, block_bytes):
        pool = ProcessPoolExecutor(n_workers, mp_context=fork_server())
    # Read in this process: one staged file per table and month for all the blocks.
    here = StagedParts(parts, "here") if pool is None else None
    states: list[FileState] = []
    in_flight: list[tuple[Future[list[BlockResult]], list[FileState]]] = []
    batch: list[tuple[BlockTask, FileState]] = []
    batch_bytes = 0

    def flush() -> None:
        """Process the gathered blocks as one task (staged together)."""
        nonlocal batch, batch_bytes
        if not batch:
            return
        tasks, owners = [t for t, _ in batch], [o for _, o in batch]
        batch, batch_bytes = [], 0
        if pool is None:
            for owner, res in zip(owners, process_batch(tasks, here), strict=True):
                owner.add(res)
            return
        in_flight.append((pool.submit(process_batch, tasks), owners))
        while len(in_flight) >= 2 * n_workers:
            fut, waiting = in_flight.pop(0)
            for owner, res in zip(waiting, task_result(fut, waiting, n_workers), strict=True):
                owner.add(res)

    try:
        for seq, (f, fr) in enumerate(todo):
            state = FileState(f, fr)
            states.append(state)
            if f.kind not in READABLE_KINDS:
                state.sha256 = file_digest(f)
                if progress:
                    progress(f.size)
                continue
            if pool is not None and ranges.by_range(f, block_bytes):
                # The workers read the file themselves, a range each (transforms.read.ranges).
                state.pieces = {}
                try:
                    for i, r in enumerate(ranges.plan(f, block_bytes)):
                        task = BlockTask(None, f.source_file, f.kind or "responses",
                                         file_day(f.path, now), str(parts), f"{seq:06d}-{i:06d}",
                                         reg if f.kind in TOOL_CHECKED_KINDS else None, r)
                        batch.append((task, state))
                        batch_bytes += r.end - r.start
                        if batch_bytes >= min(max(block_bytes, left // (2 * n_workers)),
                                              RANGES_PER_TASK * block_bytes):
                            left -= batch_bytes
                            flush()
                        if progress:
                            progress(r.end - r.start)
                except OSError as e:
                    fr.error = f"cannot read the file: {e.strerror or e}"
                continue
            try:
                reader = BlockReader(f, block_bytes)
            except OSError as e:
                # Listed with the reason (ingest_files.error); read again by the next ingest.
                fr.error = f"cannot read the file: {e.strerror or e}"
                if progress:
                    progress(f.size)
                continue
            seen = 0
            for i, block in enumerate(reader):
                task = BlockTask(block, f.source_file, f.kind or "responses", file_day(f.path, now),
                                 str(parts), f"{seq:06d}-{i:06d}",
                                 reg if f.kind in TOOL_CHECKED_KINDS else None)
                batch.append((task, state))
                batch_bytes += len(block.data)
                if batch_bytes >= block_bytes or len(batch) >= BATCH_FILES:
                    flush()
                if progress:
                    progress(reader.bytes_read - seen)
                    seen = reader.bytes_read
            fr.error = reader.error
            state.sha256 = reader.sha256
            left -= f.size
            if progress and f.size > seen:
                progress(f.size - seen)
        flush()
        for fut, waiting in in_flight:
            for owner, res in zip(waiting, task_result(fut, waiting, n_workers), strict=True):
                owner.add(res)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
        if here is not None:
            here.close()
    for state in states:
        yield state.file, state.report, state.digest(), state.days


def task_result(fut: "Future[list[BlockResult]]", owners: list["FileState"],
            n_workers: int) -> list[BlockResult]:
    """What a worker made of a task; a one-line MemoryStop when the system ended it."""
    try:
        return fut.result()
    except BrokenProcessPool:
        raise memory.worker_lost(owners[0].file.source_file,
                                 memory.budget(n_workers)) from None


def worker_count(workers: int | None) -> int:
    """The parser processes: those asked for (default: the cores, at most 8), as many as the
    ingest's memory holds (transforms.memory)."""
    return memory.budget(workers).workers


def runs_in_parallel(files: list[InputFile], n_workers: int, block_bytes: int) -> bool:
    """Whether these files are read by worker processes (more than two blocks of them)."""
    total = sum(f.size for f in files if f.kind in READABLE_KINDS)
    return n_workers > 1 and total > 2 * block_bytes


def fork_server() -> BaseContext:
    """A fork server, started once per process with the worker module preloaded, forks each
    worker from a clean process: no inherited DuckDB threads, and no per-worker import cost."""
    ctx = get_context("forkserver")
    ctx.set_forkserver_preload(["transforms.normalize.worker"])
    return ctx


def start_workers(files: list[InputFile], workers: int | None, block_bytes: int) -> None:
    """Start the fork server now when the ingest may use it, so that its imports overlap the
    lake's checks rather than delay the first block (docs/performance.md)."""
    if runs_in_parallel(files, worker_count(workers), block_bytes):
        from multiprocessing import forkserver

        fork_server()
        forkserver.ensure_running()


RANGES_PER_TASK = 8
"""At most this many consecutive ranges of a file make one worker task."""
BATCH_FILES = 1000
"""At most this many small files' blocks are normalized and staged together."""


def file_digest(f: InputFile) -> str:
    """The file's digest, or "" when it cannot be read (it is then read, and reported)."""
    try:
        return file_sha256(f.path)
    except OSError:
        return ""
