"""Ingest: input files -> staged blocks (in parallel) -> one atomic commit to the lake -> views.

This is the function both the CLI and the Dagster assets call. It never loses a line: each file
gets an `ingest_files` row whose counts add up (lines = accepted + quarantined + blank), files
whose kind cannot be told are reported there too, and unchanged files are skipped so that
ingesting the same files again changes nothing (a file that could not be read to its end is
read again). Paths under the inputs that are not files to read are reported with the reason.
"""

import os
import uuid
from datetime import UTC, date, datetime
from pathlib import Path

from transforms import memory, warehouse
from transforms.block_scheduler import (
    file_digest,
    schedule_blocks,
    start_workers,
)
from transforms.contracts import models, registry
from transforms.errors import DiskFull, is_disk_full
from transforms.full_disk import disk_full
from transforms.ingest_report import FileReport, IngestReport, Progress
from transforms.ingest_summary import summarize
from transforms.kinds import TOOL_CHECKED_KINDS
from transforms.lake import (
    DEFAULT_RETENTION_HOURS,
    MANIFEST,
    OWNER,
    Lake,
    claim_scratch,
    clear_scratch,
    doctor,
)
from transforms.lake.core import KnownFile
from transforms.normalize.columns import ColumnBuffers
from transforms.read.dates import file_day
from transforms.read.discover import discover
from transforms.read.readers import DEFAULT_BLOCK_BYTES, READABLE_KINDS, InputFile
from transforms.warehouse import grading, lookups
from transforms.warehouse.lake_version import commit_version

__all__ = ["FileReport", "IngestReport", "Progress", "clear_abandoned_scratch", "unreadable_reason",
           "ingest"]


def ingest(paths: list[Path], home: Path | str, kind: str | None = None, workers: int | None = None,
           block_bytes: int = DEFAULT_BLOCK_BYTES, progress: Progress | None = None,
           now: datetime | None = None, build_views: bool = True,
           tools: Path | None = None, model_aliases: Path | None = None,
           prices: Path | None = None,
           retention_hours: float = DEFAULT_RETENTION_HOURS,
           deciding_evaluations: str | tuple[str, ...] | None = None) -> IngestReport:
    """Ingest `paths` (files or folders) into the lake under `home` and rebuild the views
    (unless `build_views` is False: the Dagster warehouse asset builds them). With `tools`, a
    tool registry file (transforms.contracts.registry), every tool call of a run is checked
    against it; files read against another registry (or none) are read again. `model_aliases`
    and `prices` extend or override the shipped model alias and price tables
    (transforms.contracts.models); they are stored with the lake and applied when the views are
    built, so a change re-reads no file. `deciding_evaluations` (names, or a comma-separated
    text) are the evaluations that decide a run made from a trace (transforms.warehouse.grading;
    none: every one), stored and applied likewise."""
    now = now or datetime.now(UTC)
    memory.budget().check()
    reg = registry.load(tools) if tools is not None else None
    tables = models.load(model_aliases, prices)
    deciding = grading.parse(deciding_evaluations)
    lake = Lake(home)
    skipped: list[tuple[str, str]] = []
    files = discover(paths, kind, skipped)
    start_workers(files, workers, block_bytes)
    from transforms.lake import migrate

    migrate.upgrade(lake)
    # What the lake claims to hold must be there, or this ingest would build on lost rows.
    doctor.raise_if_damaged(lake)
    try:
        return _ingest(lake, files, skipped, workers, block_bytes, progress, now, build_views,
                       reg, tables, retention_hours, deciding)
    except DiskFull:
        raise  # after its lake version: told by _ingest
    except Exception as e:
        if not is_disk_full(e):
            raise
        raise disk_full(lake, sum(f.size for f in files), e, None) from None


def unreadable_reason(f: InputFile) -> str:
    """Why a file is not read (its compression, or no kind runlake reads)."""
    suffix = f.path.suffix.lower()
    if suffix in (".bz2", ".xz", ".zip", ".lz4"):
        return f"{suffix} compression is not read: recompress as .gz or .zst"
    if f.kind is None:
        return ("kind unknown: name the file *.responses.jsonl (or .gz/.zst), put it under a "
                "responses/ folder, or pass --kind")
    return f"{f.kind} files are not read by this version of runlake (readable: " \
           f"{', '.join(READABLE_KINDS)})"


def _ingest(lake: Lake, files: list[InputFile], skipped: list[tuple[str, str]],
            workers: int | None, block_bytes: int, progress: Progress | None, now: datetime,
            build_views: bool, reg: registry.Registry | None,
            tables: models.ModelTables, retention_hours: float,
            deciding: tuple[str, ...] = ()) -> IngestReport:
    home = lake.home
    report = IngestReport(home=home, skipped_paths=skipped)
    known = lake.known_files()
    tools_sha = reg.sha256 if reg is not None else None
    ingest_id = uuid.uuid4().hex
    # Staged on a local folder whatever the home: the home's own, or for an s3:// home the
    # warehouse file's (transforms.lake.store.locate).
    parts = lake.where.scratch / ingest_id
    clear_abandoned_scratch(lake.where.folder)
    ingest_rows = ColumnBuffers(("ingest_files",))
    todo: list[tuple[InputFile, FileReport]] = []
    copies = _Copies(known, files)
    for f in files:
        fr = FileReport(f.source_file, f.kind, f.size)
        report.files.append(fr)
        checked = tools_sha if f.kind in TOOL_CHECKED_KINDS else None
        # Unchanged: same bytes, read to their end, as the same kind against the same registry.
        prev = known.get(f.source_file)
        if prev is not None and prev.bytes == f.size and prev.tools_sha256 == checked \
                and prev.kind == (f.kind or "unknown") \
                and not (prev.error and f.kind in READABLE_KINDS) and prev.sha256 == file_digest(f):
            fr.skipped = True
            if progress:
                progress(f.size)
            continue
        if prev is None:
            fr.same_as, fr.renamed_from = copies.of(f)
            if fr.same_as is not None:
                fr.skipped = True
                if progress:
                    progress(f.size)
                continue
        todo.append((f, fr))
    gone = [fr.renamed_from for _, fr in todo if fr.renamed_from is not None]
    if todo or lake.is_there():
        # Applied when the views are built: a changed table changes the lake's fingerprint,
        # so the views are computed again below, without reading any file again.
        if not lake.remote:
            lake.root.mkdir(parents=True, exist_ok=True)
        report.model_tables_changed = lookups.store(lake.store, tables)
        grading.store(lake.store, deciding)
    try:
        claim_scratch(parts)
        all_days: set[date] = set()
        for f, fr, sha, days in schedule_blocks(todo, parts, block_bytes, workers, progress,
                                                now, reg):
            if f.kind not in READABLE_KINDS:
                fr.error = unreadable_reason(f)
            day = file_day(f.path, now)
            all_days |= days
            ingest_rows.append(
                "ingest_files", source_file=f.source_file, day=day,
                kind=f.kind or "unknown", compression=f.compression, sha256=sha,
                bytes=f.size, lines=fr.lines, lines_accepted=fr.accepted,
                lines_quarantined=fr.quarantined, lines_blank=fr.blank,
                days=sorted(days | {day}), error=fr.error, ingested_at=now,
                tools_sha256=tools_sha if f.kind in TOOL_CHECKED_KINDS else None)
        if todo:
            counts = summarize(parts, tables)
            report.rows = counts.rows
            report.flags_by_code = counts.flags_by_code
            report.quarantine_by_code = counts.quarantine_by_code
            report.unpriced_models = counts.unpriced_models
            if reg is not None:
                lake.write_registry(reg.rows())
            with lake.committing():
                # A renamed file's old name is among the sources: its rows go in this commit.
                result = commit_version(lake, parts,
                                        [f.source_file for f, _ in todo] + gone,
                                        ingest_rows.to_arrow("ingest_files"), ingest_id,
                                        all_days, retention_hours)
            report.days = result.days
            report.maintenance = result.maintenance
        # Also after an ingest that died before its warehouse file was built, and after a
        # change of the model tables (the tables are derived again: a new lake version).
        if lake.is_there() and (build_views or report.model_tables_changed):
            try:
                warehouse.publish(home, retention_hours, build_file=build_views)
            except Exception as e:
                if todo and is_disk_full(e):  # the lake has this ingest's version
                    raise disk_full(lake, sum(f.size for f in files), e,
                                    result.versions[MANIFEST]) from None
                raise
    finally:
        clear_scratch(parts)
    return report


class _Copies:
    """Which new files hold the same bytes as an ingested file or as an earlier file of this
    ingest: the same content under another name is the same data. Only files whose size and
    kind match another's are hashed before they are read."""

    def __init__(self, known: dict[str, KnownFile], files: list[InputFile]) -> None:
        self.known = known
        self.present = {f.source_file for f in files}
        # (size, kind) -> [(source_file, digest or None while not worked out, the file of this
        # ingest or None for an ingested one)]
        self.by_size: dict[tuple[int, str], list[tuple[str, str | None, InputFile | None]]] = {}
        for src, k in known.items():
            if not k.error:
                self.by_size.setdefault((k.bytes, k.kind or "unknown"), []).append(
                    (src, k.sha256, None))

    def of(self, f: InputFile) -> tuple[str | None, str | None]:
        """(same_as, renamed_from) for a file not ingested before: same_as names the file
        whose copy it is (still there, or earlier in this ingest); renamed_from the ingested
        file it replaces under a new name (no longer there)."""
        others = self.by_size.setdefault((f.size, f.kind or "unknown"), [])
        sha: str | None = None
        for i, (src, other_sha, other) in enumerate(others):
            if sha is None:
                sha = file_digest(f)
            if other_sha is None and other is not None:
                other_sha = file_digest(other)
                others[i] = (src, other_sha, other)
            if sha and other_sha == sha:
                if other is not None or src in self.present or _still_there(src):
                    return src, None
                return None, src
        others.append((f.source_file, sha, f))
        return None, None


def _still_there(source_file: str) -> bool:
    """Whether an ingested file is still where it was read (a file on object storage counts as
    still there: renames are told apart on local folders only)."""
    if "://" in source_file:
        return True
    return Path(source_file).exists()


def clear_abandoned_scratch(home: Path) -> int:
    """Remove scratch folders that no live ingest owns (left by a crash or kill -9)."""
    removed = 0
    for folder in (home / ".scratch").glob("*"):
        try:
            pid = int((folder / OWNER).read_text())
            os.kill(pid, 0)
            continue  # its ingest is still running
        except (OSError, ValueError):
            pass
        clear_scratch(folder)
        removed += 1
    return removed
