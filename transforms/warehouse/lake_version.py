"""Commit one lake version: the one sequence an ingest, `runlake forget`, a repair and a build
of the derived tables all run, under the home's writer lock (Lake.committing).

1. every written table (transforms.lake.core.Lake.commit_table): the files holding rows of
   the version's input files removed, the staged files added;
2. the derived tables, for what step 1 changed against the lake version readers saw
   (transforms.warehouse.derive);
3. the upkeep of the months step 1 touched (compaction, now and then a vacuum);
4. the manifest last, naming the version of every table: readers see the new version from
   this commit on, and a crash before it leaves them the one before. A failure before it
   undoes steps 1 to 3 (transforms.lake.rollback): a retry finds the lake as readers see it.
"""

import sys
from collections.abc import Iterable
from datetime import date
from pathlib import Path

import pyarrow as pa

from transforms.lake import DEFAULT_RETENTION_HOURS, Lake
from transforms.lake.commit import CommitResult, vacuum_hours
from transforms.lake.files import DATA_TABLES, MANIFEST, lines_path, month_of
from transforms.lake.rollback import roll_back
from transforms.lake.tables import LAYOUT
from transforms.warehouse.derive import derive


def commit_version(lake: Lake, parts: Path, sources: list[str], manifest: pa.Table,
                   ingest_id: str, days: Iterable[date] = (),
                   retention_hours: float = DEFAULT_RETENTION_HOURS,
                   action: str = "ingest", replaced: Iterable[str] = ()) -> CommitResult:
    """Commit one lake version: the staged parts of every written table (replacing all rows
    of `sources`; with action "forget" or "repair" no parts, only removals), the derived
    tables, the upkeep of the months it touched, then the manifest rows of `sources`.
    `replaced`: tables made anew since the version readers saw (a repair moved them aside),
    whose versions before name nothing any more: the derive compares nothing with them and
    derives every week again. Call it holding `lake.committing()`."""
    vacuum_hours(retention_hours)  # refused before anything is committed
    gone = set(replaced)
    seen = lake.tables_at()
    try:
        return _commit(lake, parts, sources, manifest, ingest_id, days, retention_hours,
                       action, {t: v for t, v in seen.items() if t not in gone})
    except BaseException:
        # Unless the manifest commit landed (what failed came after it), nothing of it reaches
        # readers: undone, nothing of it is left for a retry to add to. Unsure (the manifest's
        # log cannot be listed), nothing is undone: the next ingest replaces it.
        try:
            if lake.tables_at().get(MANIFEST, -1) == seen.get(MANIFEST, -1):
                roll_back(lake, seen, skip=gone)
        except Exception as e:  # noqa: BLE001 - the failure that got here is the one to tell
            sys.stderr.write(f"warning: what the failed ingest committed could not all be "
                             f"undone ({e}); the next ingest replaces it\n")
        raise


def _commit(lake: Lake, parts: Path, sources: list[str], manifest: pa.Table, ingest_id: str,
            days: Iterable[date], retention_hours: float, action: str,
            before: dict[str, int]) -> CommitResult:
    result = CommitResult(days=sorted(set(days)))
    for t in DATA_TABLES:
        version, added, removed = lake.commit_table(t, parts / t, sources, ingest_id)
        result.versions[lines_path(t)] = version
        result.rows_added[t] = added
        result.rows_removed[t] = removed
    extra = derive(lake, before)
    # Before the manifest, so the versions it records include the compacted files (the
    # files compaction replaced may then be vacuumed without breaking that version).
    result.maintenance = lake.maintain({month_of(d) for d in result.days}, retention_hours)
    result.versions = {t: v for t, v in lake.newest_versions().items()
                       if t != MANIFEST and (v >= 0 or t in result.versions)}
    meta = {"action": action, "ingest_id": ingest_id, "files": sources[:1000],
            "n_files": len(sources), "layout": LAYOUT, "tables": result.versions,
            "rows_added": result.rows_added, "rows_removed": result.rows_removed, **extra}
    result.versions[MANIFEST] = lake.commit_manifest(manifest, sources, meta)
    return result
