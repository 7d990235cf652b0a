"""A derive's pass over windows of days: the weekly stored models (`-- partition: week`)
computed for a group of adjacent weeks from their days and MARGIN_DAYS either side, through the
one builder, and written a week a folder (transforms.warehouse.weeks).

Which models a window computes is read from the declarations: every weekly model but those that
read a model computed over the whole lake after the weeks (`-- scope: lake` outside staging),
and whatever models they read. A staging model of `-- scope: lake` was computed over the whole
lake before the windows; a window reads it from the scratch folder."""

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path

import duckdb

from transforms.lake import Lake, parquet_sql
from transforms.lake.core import DataFile
from transforms.warehouse.builder import IN_WINDOW, Source, build, needed
from transforms.warehouse.linked import LINKED, restore, window_view
from transforms.warehouse.models import Model, models
from transforms.warehouse.staging import Window, prepare_lookups, prepare_tables
from transforms.warehouse.weeks import MARGIN_DAYS, groups, write_weeks


class Stage:
    """What the derive is doing now, named in the one line of an ingest that ran out of
    memory (transforms.memory.stopped)."""

    def __init__(self) -> None:
        self.now = "reading the lake's rows for the derive"

    @contextmanager
    def doing(self, what: str) -> Iterator[None]:
        before, self.now = self.now, what
        yield
        self.now = before


def before_windows(everything: list[Model] | None = None) -> list[Model]:
    """The models computed over the whole lake before the windows, which every window reads:
    the staging models of `-- scope: lake`."""
    return [m for m in everything or models() if m.lake_wide and m.layer == "staging"]


def after_windows(everything: list[Model] | None = None) -> list[Model]:
    """The stored models computed over the whole lake after the windows, from the weeks'
    stored rows: the other models of `-- scope: lake`, and the weekly models that read one."""
    everything = everything or models()
    wide = [m for m in everything if m.lake_wide and m.layer != "staging"]
    return [m for m in everything if m in wide or (
        m.weekly and any(w in needed([m], everything) for w in wide))]


def in_windows(everything: list[Model] | None = None) -> list[Model]:
    """The models a window builds, in build order: every staging model (a table macro reads
    one by name), the weekly models not after the windows and every model they read."""
    everything = everything or models()
    late = after_windows(everything)
    weekly = [m for m in everything if (m.weekly or m.layer == "staging") and m not in late]
    return [m for m in needed(weekly, everything) if m not in late]


def scratch_file(scratch: Path, m: Model) -> Path:
    """Where the whole-lake pass keeps the rows of a model of `before_windows`."""
    return scratch / f"{m.name}.parquet"


def compute(con: duckdb.DuckDBPyConnection, lake: Lake, scratch: Path, written: dict[str, int],
            weeks: list[date], files: dict[str, list[DataFile]], columns: dict[str, set[str]],
            stage: Stage, computed: dict[str, set[str]]) -> None:
    """On `con` (a connection of its own: the derive's, transforms.warehouse.derive), compute
    the weekly models for `weeks`, adjacent weeks a group at a time in one pass, into
    scratch/out/<name>/week=<week>/ (and each one's schema beside, also when no week has
    rows). A LINKED table's rows are computed from its staged files in `computed` only: the
    others are linked (transforms.warehouse.linked)."""
    out = scratch / "out"
    everything = models()
    early = {m.name for m in before_windows(everything)}
    chosen = in_windows(everything)

    def stored(m: Model) -> str | None:
        return parquet_sql([str(scratch_file(scratch, m))]) if m.name in early else None

    source = Source(stored, IN_WINDOW, "window")
    prepare_lookups(con, lake)
    # An empty lake still gets every table, with its columns.
    for i, group in enumerate(groups(weeks) or [[]]):
        first = (group[0] if group else date(1970, 1, 5)) - timedelta(days=MARGIN_DAYS)
        last = (group[-1] if group else date(1970, 1, 5)) + timedelta(days=6 + MARGIN_DAYS)
        window = Window(first, last, {
            t: [f.path for f in fs if f.first is None or f.last is None
                or (f.first <= last and f.last >= first)]
            for t, fs in files.items()}, columns)
        prepare_tables(con, lake, written, window)
        names = [f"'{w.isoformat()}'" for w in group] or ["NULL"]
        weeks_text = f"{first + timedelta(days=MARGIN_DAYS)} to " \
            f"{last - timedelta(days=MARGIN_DAYS)}"
        for m in chosen:
            if not m.weekly:
                build(con, source, [m])
                continue
            assert m.stored is not None
            with stage.doing(f"deriving lake/{m.stored} for the weeks of {weeks_text}"):
                if m.name in LINKED:
                    build(con, source, [m])
                    window_view(con, m.name, sorted(
                        set(window.files[m.name]) & computed[m.name]),
                        columns[m.name], first, last)
                    try:
                        write_weeks(con, m.relation, m.name, out, names, i)
                    finally:
                        restore(con, m.name)
                    continue
                # Later models read this one whole (the margin days included).
                build(con, source, [m])
                write_weeks(con, m.relation, m.name, out, names, i)
