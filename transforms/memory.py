"""How much memory an ingest may use, read from where it runs: the machine's memory, or the
limit of the container (cgroup v1 or v2) it runs in, whichever is smaller, or the
RUNLAKE_MEMORY_MB setting. An ingest splits it between its worker processes and the DuckDB
connections of its derive, so that the whole process tree stays under it; when a stage must
stop all the same, it says which stage, what it needed and what to change, in one line
(`MemoryStop`)."""

import os
import re
from dataclasses import dataclass
from pathlib import Path

from transforms.errors import RunlakeError, is_disk_full

MB = 1024 * 1024

DUCKDB_MAX_MB = 400
"""What DuckDB may hold while it derives, at most (it spills the rest to disk): more bought
little time and took the process tree of a large ingest past the memory it had
(docs/performance.md)."""
DUCKDB_MIN_MB = 128
"""The least DuckDB is given: below it a derive spills nearly everything."""
PARENT_MB = 300
"""What the ingest's own process holds besides DuckDB (Python, pyarrow, deltalake, the
fork server that starts the workers)."""
WORKER_MB = 280
"""What a worker process holds at most (the rows of ROW_GROUP_INPUT bytes of input, as
Python tuples and Arrow columns)."""
DUCKDB_OVERHEAD = 1.3
"""DuckDB's process memory for a memory_limit of 1: what it allocates outside its buffer
manager (query results handed to Python, the Parquet writer's buffers)."""
SMALLEST_MB = 400
"""The least memory an ingest starts with: its own process and DuckDB's smallest share."""
MAX_WORKERS = 8
"""Parser processes at most when none are asked for."""
HEADROOM = 0.85
"""The share of the limit an ingest plans to use: the rest is for the page cache, the
allocator's slack and whatever else runs beside it."""


class MemoryStop(RunlakeError):
    """A stage of an ingest needed more memory than its budget gave it."""


@dataclass(frozen=True)
class Budget:
    limit_mb: int
    """The memory available: the setting, else the machine's or its container's limit."""
    source: str
    """Where `limit_mb` comes from, for messages."""
    duckdb_mb: int
    """DuckDB's memory_limit in the derive and the warehouse build."""
    workers: int
    """Worker processes that fit beside the parent."""

    @property
    def duckdb_limit(self) -> str:
        return f"{self.duckdb_mb}MB"

    def described(self) -> str:
        return f"{self.limit_mb:,} MB: {self.source}"

    def check(self) -> None:
        """A MemoryStop before anything is read when the memory is less than SMALLEST_MB."""
        if self.limit_mb < SMALLEST_MB:
            raise MemoryStop(f"an ingest needs at least {SMALLEST_MB} MB and has "
                             f"{self.described()}: give it more memory (a larger machine or "
                             "container)")


def machine_mb() -> int:
    """The machine's memory (MemTotal), in MiB."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // MB
    except (ValueError, OSError):
        return 4096


def cgroup_mb(proc_cgroup: Path = Path("/proc/self/cgroup"),
              root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """The smallest memory limit of this process's cgroup and its ancestors, in MiB (None:
    no limit). cgroup v2 (its memory.max file) and v1 (memory.limit_in_bytes); the
    path /proc names is tried from its longest suffix, since a container mounts its own
    cgroup as the root."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return None
    found: list[int] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            mount, name = root, "memory.max"
            if not (root / "cgroup.controllers").exists():
                mount = root / "unified"
        elif "memory" in controllers.split(","):
            mount, name = root / "memory", "memory.limit_in_bytes"
        else:
            continue
        here = _own_folder(mount, path)
        while here is not None:
            value = _read_limit(here / name)
            if value is not None:
                found.append(value)
            here = here.parent if here != mount else None
    return min(found) // MB if found else None


def _own_folder(mount: Path, path: str) -> Path | None:
    """The folder of the cgroup `path` under `mount`: the path itself, or its longest suffix
    there (a container's mount starts at its own cgroup)."""
    parts = [p for p in path.split("/") if p]
    for i in range(len(parts) + 1):
        folder = mount.joinpath(*parts[i:])
        if folder.is_dir():
            return folder
    return None


_NUMBER = re.compile(r"\d+")


def _read_limit(file: Path) -> int | None:
    """A limit file's bytes (None: absent, `max`, or the value v1 writes for no limit)."""
    try:
        text = file.read_text().strip()
    except OSError:
        return None
    if not _NUMBER.fullmatch(text):
        return None
    value = int(text)
    return value if value < 2**60 else None


def budget(workers: int | None = None) -> Budget:
    """The memory an ingest plans with: RUNLAKE_MEMORY_MB when set, else the smaller of the
    machine's memory and its container's limit; DuckDB's share (the workers are gone when
    the derive starts), and how many of the `workers` asked for (default: the cores, up to
    MAX_WORKERS) fit beside the ingest's own process."""
    from transforms import settings

    setting = settings.load().memory_mb
    if setting is not None:
        limit, source = int(setting), "RUNLAKE_MEMORY_MB"
    else:
        limit, source = machine_mb(), "the machine's memory"
        contained = cgroup_mb()
        if contained is not None and contained < limit:
            limit, source = contained, "the container's memory limit"
    usable = int(limit * HEADROOM) - PARENT_MB
    duckdb_mb = max(DUCKDB_MIN_MB, min(DUCKDB_MAX_MB, int(usable / DUCKDB_OVERHEAD)))
    wanted = workers if workers is not None else min(os.cpu_count() or 1, MAX_WORKERS)
    return Budget(limit, source, duckdb_mb, max(1, min(wanted, usable // WORKER_MB)))


def out_of_memory(error: BaseException) -> bool:
    """A DuckDB error that says it ran out of memory: an OutOfMemoryException, or another
    kind raised where an allocation failed (a commit's "could not allocate block")."""
    import duckdb

    if is_disk_full(error):  # a spill the disk had no room for: said as a full disk
        return False
    return isinstance(error, duckdb.OutOfMemoryException) or (
        isinstance(error, duckdb.Error) and _ALLOCATION.search(str(error)) is not None)


def stopped(stage: str, error: BaseException, plan: Budget) -> MemoryStop:
    """The one line of a stage that ran out of memory: which stage, what DuckDB asked for
    beyond what it had, the budget and where it comes from, and what to change."""
    found = _ALLOCATION.search(str(error))
    needed = (f"DuckDB needed {found.group(1)} more with {found.group(2)} of its "
              f"{found.group(3)} in use" if found else "DuckDB needed more memory than it had")
    return MemoryStop(
        f"the ingest stopped while {stage}: {needed} ({plan.duckdb_mb} MB for DuckDB, of "
        f"{plan.described()}); the lake keeps its previous version. {MORE}")


MORE = ("Give the ingest more memory (RUNLAKE_MEMORY_MB, or a larger machine or container), "
        "or ingest fewer days at once")


def worker_lost(reading: str, plan: Budget) -> MemoryStop:
    """The one line of a parser process that died under the ingest (the system ends the
    largest process when memory runs out)."""
    return MemoryStop(f"the ingest stopped while reading {reading}: a parser process was "
                      f"ended by the system, most likely for want of memory ({plan.workers} "
                      f"parser processes in {plan.described()}); the lake keeps its previous "
                      f"version. {MORE}, or set RUNLAKE_WORKERS=1")


_ALLOCATION = re.compile(
    r"allocate (?:data|block) of size ([\d.]+ \w+) \(([\d.]+ \w+)/([\d.]+ \w+) used\)")
