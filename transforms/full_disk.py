"""What an ingest stopped by a full disk says: which disk, what it has free, and what the ingest
needs there, so that a user knows what to free or where to move the home."""

import shutil
from pathlib import Path

from transforms.errors import DiskFull, causes
from transforms.lake import Lake
from transforms.memory import MB

NEED_OF_INPUT = 0.5
"""The free space an ingest needs while it runs, at most, as a share of its input's bytes: its
staged rows, the lake files it writes and the derive's spill, with room for real traces, which
repeat less than the benches' (docs/performance.md has the measured shares)."""


def disk_full(lake: Lake, input_bytes: int, e: BaseException,
              committed: int | None) -> DiskFull:
    """The one line of an ingest stopped by a full disk: the disk (by the nearest folder there
    of the file being written, else of the home's local folder), what it has free now that the
    ingest cleared what it wrote, and what it needs. `committed`: the lake version the ingest
    made when only the warehouse file could not be written (None: the lake is as before)."""
    written = [x.filename for x in causes(e) if isinstance(x, OSError) and x.filename]
    folder = Path(str(written[0])) if written else lake.where.folder
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        usage = shutil.disk_usage(folder)
        room = f"{usage.free / MB:,.0f} MB free of {usage.total / MB:,.0f} MB"
    except OSError:
        room = "its free space unknown"
    spill = "while DuckDB spilled the derive to disk, " if any(
        "temp" in str(x).lower() and "duckdb" in type(x).__module__ for x in causes(e)) else ""
    if committed is not None:
        return DiskFull(
            f"the ingest's rows are in the lake (lake version {committed}), but the warehouse "
            f"file could not be written: the disk holding {folder} is full ({room}). Free "
            "space on that disk (the warehouse file takes about what it took before, and as "
            "much again while it is written) and run `runlake publish`")
    return DiskFull(
        f"the ingest stopped: the disk holding {folder} is full ({spill}{room}). An ingest "
        f"needs about {NEED_OF_INPUT:.0%} of its input's size free there while it runs: this "
        f"one, {input_bytes / MB:,.0f} MB of input, needs about "
        f"{max(1.0, input_bytes * NEED_OF_INPUT / MB):,.0f} MB. Free space on that disk or "
        "use a home on a larger one; the lake keeps its previous version, and what this "
        "ingest wrote was removed (a warning above says so when some could not be)")
