"""User-facing errors: each message says what is wrong and what to do; the CLI prints it as
one line and exits non-zero, never with a traceback."""

import errno
import re


class RunlakeError(Exception):
    """A problem the user can act on."""


class InputError(RunlakeError):
    """A problem with the inputs: a missing path, an unknown kind, ..."""


class LakeBusy(RunlakeError):
    """Another writer holds the warehouse."""


class DiskFull(RunlakeError):
    """A disk ran out of space; the message names it, what it has free and what is needed."""


_NO_SPACE = re.compile(r"no space left on device|\bENOSPC\b|\b(os )?errno? 28\b|"
                       r"max_temp_directory_size", re.IGNORECASE)
"""How libraries word a full disk: the OS's ENOSPC, pyarrow's "[errno 28]", DuckDB's spill
refused beyond its temporary directory's limit (by default most of the disk's free space)."""


def causes(e: BaseException) -> list[BaseException]:
    """`e` and what caused it, or was being handled when it was raised (a few links at most)."""
    chain: list[BaseException] = []
    at: BaseException | None = e
    while at is not None and at not in chain and len(chain) < 10:
        chain.append(at)
        at = at.__cause__ or at.__context__
    return chain


def is_disk_full(e: BaseException) -> bool:
    """Whether `e` (or its cause) is a full disk, as any library words it."""
    return any((isinstance(x, OSError) and x.errno in (errno.ENOSPC, errno.EDQUOT))
               or _NO_SPACE.search(str(x)) is not None for x in causes(e))


class WarehouseError(RunlakeError):
    """The views could not be built; the message names the SQL file."""


class NoWarehouse(FileNotFoundError):
    """A home with no lake yet: nothing to read until an ingest makes one."""

    def __init__(self, target: object) -> None:
        super().__init__(f"no warehouse at {target}: run `runlake ingest PATH` first")
        self.target = target

    def __reduce__(self) -> tuple[type, tuple[object]]:  # pickled as made: from its target
        return NoWarehouse, (self.target,)
