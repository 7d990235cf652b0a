"""Forgetting input files: every row a file added leaves the lake in one commit.

`runlake forget PATH...` is how a bad file's rows are taken out (a file of test runs that should
never have landed, a file with secrets in it): the rows it added to every table, its flags and
quarantined lines, and its `ingest_files` row, removed as one lake version that `runlake
history` lists. The views are built again. Ingesting the file again brings its rows back; the
versions before stay readable with `runlake sql --as-of` until vacuum removes their files.

A PATH names a file as it was ingested (its absolute path, whether or not it still exists), or
a folder: every ingested file under it.
"""

import uuid
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import pyarrow as pa

from transforms import warehouse
from transforms.errors import InputError
from transforms.lake import (
    DEFAULT_RETENTION_HOURS,
    MANIFEST,
    Lake,
    doctor,
    history,
    lake_schema,
    migrate,
)
from transforms.read.readers import source_name
from transforms.warehouse.lake_version import commit_version


@dataclass
class ForgetReport:
    files: list[str] = field(default_factory=list)
    earlier: list[str] = field(default_factory=list)
    """Files the paths name that an earlier forget removed (their rows are in no view)."""
    rows_removed: dict[str, int] = field(default_factory=dict)
    version: int | None = None


def matching(known: list[str], paths: list[Path]) -> tuple[list[str], list[Path]]:
    """The ingested files each path names (the file itself, or every file under a folder),
    and the paths that name none."""
    found: set[str] = set()
    unmatched = []
    for p in paths:
        name = source_name(p)
        hit = [k for k in known if k == name or k.startswith(name.rstrip("/") + "/")]
        if not hit:
            unmatched.append(p)
        found.update(hit)
    return sorted(found), unmatched


def forget(paths: list[Path], home: Path | str,
           retention_hours: float = DEFAULT_RETENTION_HOURS) -> ForgetReport:
    """Remove every row of the ingested files that `paths` name, in one lake version (their
    rows as ingested and everything derived from them), and build the warehouse file. Raises
    an InputError, and changes nothing, when a path names no ingested file (nor one an earlier
    forget removed)."""
    lake = Lake(home)
    if not lake.is_there():
        raise InputError(f"no lake under {home}: nothing to forget")
    migrate.upgrade(lake)
    doctor.raise_if_damaged(lake)
    report = ForgetReport()
    ingest_id = uuid.uuid4().hex
    # A folder of staged parts never made: each table's commit finds no parts to add, only the
    # files' rows to remove.
    nothing_staged = lake.where.scratch / ingest_id
    with lake.committing():
        manifest = lake.open(MANIFEST)
        rows = [] if manifest is None else pa.table(
            manifest.to_pyarrow_table(columns=["source_file", "days"])).to_pylist()
        known = [r["source_file"] for r in rows]
        files, unmatched = matching(known, paths)
        if unmatched:
            gone = {f for h in history(lake) if h.get("action") == "forget"
                    for f in h.get("files", [])}
            report.earlier, unmatched = matching(sorted(gone - set(known)), unmatched)
        if unmatched:
            raise InputError(
                f"{unmatched[0]}: no ingested file has this path (`runlake sql \"select "
                "source_file from ingest_files\"` lists them); nothing was forgotten")
        if files:
            wanted = set(files)
            days: set[date] = {d for r in rows if r["source_file"] in wanted
                               for d in r["days"] or ()}
            result = commit_version(lake, nothing_staged, files,
                                    lake_schema(MANIFEST).empty_table(), ingest_id, days,
                                    retention_hours, action="forget")
            report.rows_removed = {t: n for t, n in result.rows_removed.items() if n}
            report.version = result.versions.get(MANIFEST)
        else:
            report.version = lake.tables_at().get(MANIFEST)
    report.files = files
    warehouse.publish(lake.home, retention_hours)
    return report
