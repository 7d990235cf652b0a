"""The days rows are dated by: timestamps in UTC within the calendar runlake dates rows in,
and dates read from folder names and batch ids."""

import re
from datetime import UTC, date, datetime
from pathlib import Path

_DATE_DIR = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_DATE_PREFIX = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?!\d)")


FIRST_DAY = date(2, 1, 1)
LAST_DAY = date(9998, 12, 31)
"""The days rows are dated within: Python's calendar (years 1 to 9999) less a year at either
end, the room the warehouse needs for the week and the day either side it computes around
every day. A timestamp outside is flagged and left empty; a date folder or batch_id outside
dates nothing."""


def file_day(path: Path, now: datetime) -> date:
    """The day of a file's own rows (ingest_files, quarantine): its date folder, else the day
    of the ingest."""
    return date_folder(path) or now.date()


def in_range(day: date) -> bool:
    """Whether rows may be dated `day` (FIRST_DAY to LAST_DAY)."""
    return FIRST_DAY <= day <= LAST_DAY


def in_utc(ts: datetime, what: str, bad: list[str]) -> datetime | None:
    """An aware timestamp in UTC when its day is in range, else None with the reason (naming
    the field as `what` says) added to `bad`."""
    try:
        utc = ts.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00:00+01:00 falls in the year 0
        utc = None
    if utc is None or not in_range(utc.date()):
        bad.append(f"{what} is out of range (UTC days {FIRST_DAY} to {LAST_DAY})")
        return None
    return utc


def _ymd(m: re.Match[str]) -> date | None:
    try:
        day = date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None
    return day if in_range(day) else None


def date_folder(path: Path) -> date | None:
    """The date of the nearest `YYYY-MM-DD` folder above the file (landing/2026-11-21/x.jsonl)."""
    for parent in path.parents:
        m = _DATE_DIR.match(parent.name)
        if m:
            return _ymd(m)
    return None


def date_prefix(text: str) -> date | None:
    """A date at the start of a string such as a batch_id (`2026-11-21`, `2026-11-21-nightly`)."""
    m = _DATE_PREFIX.match(text)
    return _ymd(m) if m else None
