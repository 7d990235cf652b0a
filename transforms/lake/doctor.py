"""Checking that the lake holds what it claims, and repairing it (`runlake doctor`).

The lake's Delta logs name every data file with its size, and the `ingest_files` table names
every input file with its digest. Damage from outside runlake (a deleted or truncated data
file, a deleted month folder, a damaged log entry, a removed table) is found by comparing the
two with what is on disk. Every ingest checks first and stops with a one-line error naming
the damage; `runlake doctor --repair` then drops what cannot be read, removes every row of the
input files that had rows there (so nothing is half there), and reads those files again from
where they were ingested. Input files that are gone are listed: their rows are not in the lake
any more.
"""

import contextlib
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import pyarrow as pa

from transforms.errors import RunlakeError
from transforms.lake.commit import CommitResult
from transforms.lake.core import MANIFEST_MADE, Lake
from transforms.lake.files import MANIFEST, PARTITION, WRITTEN, lake_schema

DAMAGED = ".damaged"
"""lake/.damaged/: tables whose log could not be read, moved aside by a repair."""


@dataclass
class Damage:
    table: str
    what: str
    sources: set[str] | None = None
    """Input files whose rows were in what is damaged (None: every input file of the lake)."""
    files: list[str] = field(default_factory=list)
    """Data files (paths relative to the table) the log names that are missing or damaged."""
    unreadable: bool = False
    """The table's log cannot be read at the version the lake uses."""


class LakeDamaged(RunlakeError):
    """The lake does not hold what it claims: `runlake doctor --repair` repairs it."""


def _short(e: BaseException) -> str:
    return " ".join(str(e).split())[:200]


def check(lake: Lake) -> list[Damage]:
    """What is damaged in the lake (empty when it holds what its logs claim)."""
    if not lake.is_there():
        return []
    if not lake.exists(MANIFEST):
        if any(lake.exists(t) for t in WRITTEN) and lake.store.exists(MANIFEST_MADE):
            return [Damage(MANIFEST, "the ingest_files table is missing (lake/ingest_files)")]
        return []  # empty, or a first ingest that died before its manifest commit
    # Also for a lake written before the marker; a lake on a read-only disk is checked anyway.
    with contextlib.suppress(OSError):
        lake.store.touch(MANIFEST_MADE)
    try:
        snapshot = lake.tables_at()
        known = lake.known_files()
    except Exception as e:  # noqa: BLE001 - whatever delta-rs raises for a damaged log
        return [Damage(MANIFEST, f"the ingest_files table cannot be read: {_short(e)}",
                       unreadable=True)]
    out = []
    # Every file's size from one listing of the lake (not a request a file on object
    # storage), and the tables opened at once.
    stored = lake.store.tree_sizes()
    lake.prefetch({t: v for t, v in snapshot.items() if t != MANIFEST})
    for t, version in sorted(snapshot.items()):
        if version < 0 or t == MANIFEST:
            continue
        # A derived table holds no input file's rows of its own: it is made again whole.
        derived = t not in WRITTEN
        try:
            dt = lake.open(t, version)  # None: no log there
            actions = None if dt is None else pa.table(dt.get_add_actions(flatten=True))
        except Exception as e:  # noqa: BLE001
            out.append(Damage(t, f"the {t} table cannot be read at version {version}: "
                              f"{_short(e)}", set() if derived else None, unreadable=True))
            continue
        if actions is None:
            out.append(Damage(t, f"the {t} table is missing (lake/{t})",
                              set() if derived else None, unreadable=True))
            continue
        damage = _files(lake, t, actions, [] if derived else sorted(known), stored)
        if damage is not None and derived:
            damage.sources, damage.unreadable = set(), True
        if damage is not None:
            out.append(damage)
    return out


def _files(lake: Lake, table: str, actions: pa.Table, sources: list[str],
           stored: Mapping[str, int]) -> Damage | None:
    """Missing or truncated data files of one table, with the input files they held rows of
    (by the files' source_file statistics); the lake's files have the sizes `stored` (by
    name under the lake)."""
    names = actions.column_names
    n = actions.num_rows
    lo = actions.column("min.source_file").to_pylist() if "min.source_file" in names else [None] * n
    hi = actions.column("max.source_file").to_pylist() if "max.source_file" in names else [None] * n
    bad: list[str] = []
    held: set[str] | None = set()
    for path, size, a, b in zip(actions.column("path").to_pylist(),
                                actions.column("size_bytes").to_pylist(), lo, hi, strict=True):
        if stored.get(f"{table}/{unquote(path)}") == size:
            continue
        bad.append(path)
        if a is None or b is None or held is None:
            held = None
        else:
            held |= {s for s in sources if a <= s <= b}
    if not bad:
        return None
    what = (f"{len(bad)} data file{'s' if len(bad) > 1 else ''} of the {table} table "
            f"{'are' if len(bad) > 1 else 'is'} missing or truncated ({bad[0]}"
            f"{', ...' if len(bad) > 1 else ''})")
    return Damage(table, what, held, bad)


def raise_if_damaged(lake: Lake) -> None:
    """Stop an ingest on a damaged lake with one line saying what and how to repair it.
    Checked between other writers' commits (a commit in progress is not damage)."""
    if not lake.is_there():
        return
    with lake.committing():
        found = check(lake)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise LakeDamaged(f"the lake under {lake.home} is damaged: {found[0].what}{more}. Run "
                          "`runlake doctor --repair` to read the affected input files again")


@dataclass
class Repair:
    damage: list[Damage]
    forgotten: list[str]
    """Input files whose rows were removed from every table (to be read again)."""
    moved: list[str] = field(default_factory=list)
    """Tables moved aside to lake/.damaged/ because their log could not be read."""


Committer = Callable[..., CommitResult]
"""What commits a lake version (transforms.warehouse.lake_version.commit_version)."""


def repair(lake: Lake, commit: Committer) -> Repair:
    """Make the lake consistent again: drop damaged data files from their tables' logs, move
    aside tables whose log cannot be read, and remove every row (and the ingest_files row) of
    the input files that had rows in anything damaged, so that the next ingest of those files
    reads them whole; a damaged derived table is moved aside and made again, in a lake version
    `commit` makes (transforms.warehouse.lake_version.commit_version). Returns what was done;
    the caller reads the files again."""
    with lake.committing():
        found = check(lake)
        if not found:
            return Repair([], [])
        everything = any(d.sources is None or (d.unreadable and d.table in WRITTEN)
                         for d in found)
        moved = []
        for d in found:
            if d.unreadable and lake.store.renames and lake.store.exists(d.table):
                flat = d.table.replace("/", "-")
                lake.store.move((d.table,),
                                (DAMAGED, f"{flat}-{time.strftime('%Y%m%dT%H%M%S')}"))
                moved.append(d.table)
            elif d.unreadable and lake.store.is_dir(d.table, "_delta_log"):
                # Where a move copies every object, the unreadable log goes (its data files
                # stay until a vacuum of the table made anew).
                lake.store.rmtree(d.table, "_delta_log")
                moved.append(d.table)
            elif d.files:
                _drop(lake, d.table, d.files)
        if everything:
            sources = _all_sources(lake)
        else:
            sources = set().union(*(d.sources or set() for d in found))
        _forget(lake, sorted(sources), commit, moved)
        return Repair(found, sorted(sources), moved)


def _drop(lake: Lake, table: str, paths: Iterable[str]) -> None:
    """Remove data files from a table's log (they are gone or damaged on disk)."""
    from deltalake.transaction import RemoveAction

    dt = lake.open(table)
    actions = pa.table(dt.get_add_actions(flatten=True))
    wanted = set(paths)
    now = int(time.time() * 1000)
    removes = [RemoveAction(p, True, now, int(s), {PARTITION: m})
               for p, s, m in zip(actions.column("path").to_pylist(),
                                  actions.column("size_bytes").to_pylist(),
                                  actions.column(f"partition.{PARTITION}").to_pylist(),
                                  strict=True) if p in wanted]
    if removes:
        dt.create_write_transaction(removes, mode="append", schema=lake_schema(table),
                                    partition_by=[PARTITION])


def _all_sources(lake: Lake) -> set[str]:
    """Every input file with rows in a readable table or a row in ingest_files."""
    out: set[str] = set()
    for t in (*WRITTEN, MANIFEST):
        try:
            dt = lake.newest_table(t)
            if dt is not None:
                out |= set(dt.to_pyarrow_table(columns=["source_file"])
                           .column("source_file").to_pylist())
        except Exception:  # noqa: BLE001 - a table that still cannot be read holds nothing
            continue
    out.discard(None)  # type: ignore[arg-type]
    return out


def _forget(lake: Lake, sources: list[str], commit: Committer,
            moved: list[str] | None = None) -> None:
    """Remove every row of `sources` from every table, committed as one lake version (also
    with no sources: the derived tables are then made again); the tables `moved` aside are
    made anew by it."""
    parts = lake.where.scratch / f"repair-{uuid.uuid4().hex}"
    parts.mkdir(parents=True)
    try:
        empty = lake_schema(MANIFEST).empty_table()
        commit(lake, parts, sources, empty, f"repair-{uuid.uuid4().hex}", action="repair",
               replaced=moved or [])
    finally:
        shutil.rmtree(parts, ignore_errors=True)


def rereadable(sources: Iterable[str]) -> tuple[list[Path], list[str]]:
    """The input files that are still where they were ingested from, and those that are not."""
    from transforms.read import remote

    here: list[Path] = []
    gone: list[str] = []
    for s in sources:
        if s.startswith("s3://"):
            try:
                path = remote.s3_path(s)
                there = remote.exists(path)
            except (ValueError, OSError):
                there = False
            if there:
                here.append(path)  # type: ignore[arg-type]
            else:
                gone.append(s)
        elif Path(s).is_file():
            here.append(Path(s))
        else:
            gone.append(s)
    return here, gone
