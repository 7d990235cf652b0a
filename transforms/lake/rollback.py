"""Undoing what a lake version that failed had committed before its manifest commit.

Readers never see those commits (they read the tables at the versions the manifest names), but
left in place they cost the disk twice over: their files stay in the tables' newest versions,
and the next try replaces them, which keeps them for the retention as files a version before
may read. A failure (a full disk, a lost connection, memory) therefore restores every table the
failed try changed to the version readers see, and deletes the files its commits added at
once: a retry starts from the same lake, whatever failed and however often.
"""

import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote

from transforms.errors import RunlakeError
from transforms.lake.commit import LakeTables
from transforms.lake.files import MANIFEST


def roll_back(lake: LakeTables, versions: dict[str, int], skip: Iterable[str] = ()) -> int:
    """Restore every table of the lake whose newest version is past its version in `versions`
    (what readers see) to that version, and delete the data files the commits since added; a
    table `versions` does not name (made since) is removed. Tables in `skip` and the manifest
    are left as they are. Every table is tried; a RunlakeError names those that could not be
    undone. Returns how many files were deleted."""
    skipped = set(skip) | {MANIFEST}
    deleted = 0
    failed: list[str] = []
    for table in lake.tables():
        if table in skipped:
            continue
        try:
            deleted += _roll_back_table(lake, table, versions.get(table, -1))
        except Exception as e:  # noqa: BLE001 - every table is tried; the failures told at the end
            failed.append(f"{table}: {e}")
    if failed:
        raise RunlakeError(f"{len(failed)} table(s) not undone: {'; '.join(failed)[:500]}")
    return deleted


def _roll_back_table(lake: LakeTables, table: str, seen: int) -> int:
    """One table of `roll_back`: restored first, its files deleted once no version it shows
    names them (a restore that fails leaves the files the newest version names)."""
    if seen < 0:  # made by the failed try (a first ingest's tables): no reader names it
        lake.store.rmtree(table)
        return 0
    newest = lake.newest_version(table)
    if newest <= seen:
        return 0
    added = _added_since(lake, table, seen, newest)
    lake.open(table).restore(seen)
    kept = _paths(lake.open(table, seen))
    for path in sorted(added - kept):
        lake.store.delete(table, *path.split("/"))
    return len(added - kept)


def _added_since(lake: LakeTables, table: str, seen: int, newest: int) -> set[str]:
    """The paths of the data files the log entries after `seen` up to `newest` add."""
    out: set[str] = set()
    for version in range(seen + 1, newest + 1):
        try:
            entry = lake.store.read_bytes(table, "_delta_log", f"{version:020d}.json")
        except FileNotFoundError:
            continue
        for line in entry.splitlines():
            action = json.loads(line) if line.strip() else {}
            add = action.get("add")
            if isinstance(add, dict) and isinstance(add.get("path"), str):
                out.add(unquote(add["path"]))
    return out


def _paths(dt: Any) -> set[str]:
    import pyarrow as pa

    paths = pa.table(dt.get_add_actions(flatten=False)).column("path").to_pylist()
    return {unquote(p) for p in paths}
