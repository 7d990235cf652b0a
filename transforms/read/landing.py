"""The landing folder: which UTC day each file belongs to, and a digest of each day's files.

Files land as `landing/YYYY-MM-DD/...` (the folder names the day) or loose in the landing
folder, where the day is a `YYYY-MM-DD` in the file name, else the UTC day the file was last
modified. The Dagster partition of a file is that day; the rows it holds go to the day of each
run's `started_at`, which is usually the same.
"""

import hashlib
import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import cast

from transforms.read import remote
from transforms.read.dates import date_folder
from transforms.read.discover import discover
from transforms.read.readers import InputFile

_NAME_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def landing_day(path: Path) -> date:
    """The day a landing file belongs to: its date folder, a date in its name, else its mtime."""
    day = date_folder(path)
    if day is not None:
        return day
    m = _NAME_DATE.search(path.name)
    if m:
        try:
            return date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            pass
    return datetime.fromtimestamp(stat_of(path)[1] / 1e9, UTC).date()


def stat_of(path: Path) -> tuple[int, int]:
    """(size, last modified in ns) of a landing file, local or in a bucket."""
    if remote.is_s3(path):
        found = remote.info(remote.S3Path(path))
        return int(found["size"]), remote.mtime_ns(found)
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def landing_root(landing: Path | str) -> Path:
    """The landing folder, or for an s3:// URL its prefix (an S3Path)."""
    return cast(Path, remote.s3_path(landing)) if isinstance(landing, str) else landing


def files_by_day(landing: Path | str) -> dict[date, list[InputFile]]:
    """Every input file under `landing` (a folder, or an s3:// prefix), grouped by the day it
    belongs to."""
    root = landing_root(landing)
    if not (remote.is_dir(root) if remote.is_s3(root) else root.is_dir()):  # type: ignore[arg-type]
        return {}
    days: dict[date, list[InputFile]] = {}
    for f in discover([root]):
        days.setdefault(landing_day(f.path), []).append(f)
    return days


def day_digest(files: list[tuple[str, str]]) -> str:
    """One digest for a day's files from their (source_file, sha256) pairs: the same files with
    the same contents give the same digest, whenever and however often they were dropped."""
    h = hashlib.sha256()
    for name, sha in sorted(files):
        h.update(f"{name}\0{sha}\n".encode())
    return h.hexdigest()[:24]
