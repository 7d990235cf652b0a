"""`runlake ingest`: reading trace files into the lake, and what was read."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.measure import Measurement
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table

from transforms.cli.app import (
    KIND_HELP,
    HomeOpt,
    KindChoice,
    app,
    console,
    counted,
    err,
    fail,
    input_path,
    load_settings,
    out,
    printable,
    resolve_home,
)

if TYPE_CHECKING:
    from transforms.ingest import FileReport, IngestReport

PROGRESS_MIN_BYTES = 32 * 1024 * 1024


@app.command("ingest")
def ingest_cmd(
    inputs: Annotated[list[str], typer.Argument(
        metavar="PATH", help="Files or folders to ingest, or s3://bucket/prefix URLs.")],
    home: HomeOpt = None,
    kind: Annotated[KindChoice | None, typer.Option(
        help="Read every file as this kind, whatever its name (" + KIND_HELP + ").")] = None,
    workers: Annotated[int | None, typer.Option(help="Parser processes.")] = None,
    tools: Annotated[Path | None, typer.Option(
        help="Tool registry (tools.json or tools.yaml) to check tool calls against "
             "[default: $RUNLAKE_TOOLS]")] = None,
    model_aliases: Annotated[Path | None, typer.Option(
        help="Model alias table (YAML) extending the shipped one "
             "[default: $RUNLAKE_MODEL_ALIASES]")] = None,
    prices: Annotated[Path | None, typer.Option(
        help="Price table (YAML) extending the shipped one [default: $RUNLAKE_PRICES]")] = None,
    deciding_evaluations: Annotated[str | None, typer.Option(
        help="Evaluation names (comma-separated) that decide a run made from a trace "
             "[default: $RUNLAKE_DECIDING_EVALUATIONS, else every evaluation]")] = None,
) -> None:
    """Read trace files into the lake and rebuild the warehouse views."""
    from transforms.ingest import ingest
    from transforms.read.discover import discover

    if workers is not None and workers < 1:
        fail(f"--workers {workers} must be at least 1", 2)
    config = load_settings()
    h = resolve_home(home)
    deciding = config.deciding_evaluations if deciding_evaluations is None \
        else deciding_evaluations
    paths = [input_path(p) for p in inputs]
    as_kind = kind.value if kind is not None else None
    total = sum(f.size for f in discover(paths, as_kind)) if err.is_terminal else 0
    if total >= PROGRESS_MIN_BYTES and err.is_terminal:
        with Progress("[progress.description]{task.description}", BarColumn(),
                      DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(),
                      console=err, transient=True) as bar:
            task = bar.add_task("ingesting", total=total)
            report = ingest(paths, h, kind=as_kind, workers=workers or config.workers,
                            progress=lambda n: bar.advance(task, n),
                            tools=tools or config.tools,
                            model_aliases=model_aliases or config.model_aliases,
                            prices=prices or config.prices,
                            retention_hours=config.retention_hours,
                            deciding_evaluations=deciding)
    else:
        report = ingest(paths, h, kind=as_kind, workers=workers or config.workers,
                        tools=tools or config.tools,
                        model_aliases=model_aliases or config.model_aliases,
                        prices=prices or config.prices,
                        retention_hours=config.retention_hours,
                        deciding_evaluations=deciding)
    print_report(report)
    if not report.files:
        fail(f"no input files found in {', '.join(map(str, paths))}", 2)
    readable = [f for f in report.files if f not in report.unreadable]
    if not readable:
        fail("no file of a readable kind: see the kinds above", 2)
    if all(f.accepted == 0 for f in readable) and not any(f.skipped for f in readable):
        fail("no line could be read as a run: see quarantine above", 1)


LISTED_FILES = 12
"""Up to this many files read are listed one per line; beyond, those worth a look (errors,
quarantined lines, unknown kinds) are, and the others are counted by folder (up to this many
folders); unchanged files are counted in one line."""

EVERY_FILE = ('runlake sql "select source_file, kind, lines, lines_accepted, lines_quarantined, '
              'lines_blank from ingest_files order by source_file"')
"""Where every file's counts are, when the summary counts some of them by folder."""


def print_report(r: "IngestReport") -> None:
    from transforms import warehouse
    from transforms.read.readers import READABLE_KINDS

    done = [f for f in r.files if not f.skipped]
    n_skipped = len(r.files) - len(done)
    grouped: list[FileReport] = []
    if len(r.files) <= LISTED_FILES:
        shown = r.files
    elif len(done) <= LISTED_FILES:  # a re-run over a big landing folder: what was read
        shown = done
    else:
        shown = [f for f in done if f.error or f.quarantined or f.kind not in READABLE_KINDS]
        grouped = [f for f in done if f not in shown]
    if shown or grouped:
        print_files(shown, grouped)
    if grouped:
        out.print(f"each file's counts: {EVERY_FILE}", highlight=False, markup=False)
    if n_skipped and len(r.files) > LISTED_FILES:
        out.print(f"{n_skipped:,} file{'' if n_skipped == 1 else 's'} unchanged, skipped",
                  highlight=False)
    for f in r.files:
        if f.same_as:
            out.print(printable(f"{f.source_file}: the same bytes as {f.same_as}, whose rows "
                                 "are in the lake: skipped"), highlight=False, markup=False)
        if f.error:
            out.print(printable(f"{f.source_file}: {f.error}"), highlight=False, markup=False)
    print_skipped(r.skipped_paths)
    out.print(f"{counted(len(r.files), 'file')} ({n_skipped:,} unchanged): "
              f"{counted(sum(f.lines for f in done), 'line')}, {sum(f.accepted for f in done):,} "
              f"accepted, {sum(f.quarantined for f in done):,} quarantined, "
              f"{sum(f.blank for f in done):,} blank", highlight=False)
    held = _held(r)
    if r.rows:
        rows = held[0] if held else r.rows
        from_traces = held[3] if held else 0

        def read(t: str, n: int) -> str:
            if not held or rows.get(t, 0) == n:
                return ""
            made = f", {from_traces:,} made from traces" if t == "runs" and from_traces else ""
            return f" ({n:,} read{made})"

        out.print("rows in the tables: " + ", ".join(
            f"{t} {rows.get(t, 0):,}" + read(t, n) for t, n in r.rows.items())
            + (_HELD_NOTE if held and any(held[0].get(t, 0) != n for t, n in r.rows.items())
               else ""), highlight=False)
    if held and held[2][0]:
        spans, copies = held[2]
        out.print(f"{counted(spans, 'span')} delivered more than once: "
                  f"{copies:,} {'copy' if copies == 1 else 'copies'} left out (the copy read "
                  "last is kept; spans.deliveries counts them)", highlight=False)
    by_code = held[1] if held else r.flags_by_code
    if by_code:
        out.print("flags: " + ", ".join(f"{k} {v:,}" for k, v in by_code.items()))
    if r.maintenance:
        out.print("lake upkeep: " + ", ".join(f"{k} {v:,}" for k, v in r.maintenance.items()))
    if r.quarantine_by_code:
        out.print("quarantined lines: " + ", ".join(f"{k} {v:,}"
                                                   for k, v in r.quarantine_by_code.items()))
    if r.unpriced_models:
        out.print(printable(
            "models without a price (cost unknown; add them with RUNLAKE_PRICES): "
            + ", ".join(f"{m} ({n:,})" for m, n in r.unpriced_models.items())),
            highlight=False, markup=False)
    if r.model_tables_changed:
        out.print("model alias or price table changed: views computed again", highlight=False)
    if r.days:
        out.print(f"days written: {', '.join(d.isoformat() for d in r.days)}")
    out.print(f"warehouse: {printable(str(warehouse.path(r.home)))}  (try: runlake sql "
              "\"select status, count(*) from runs group by 1\")", highlight=False, markup=False)


_HELD_NOTE = (" [a repeated run_id keeps one line's rows, a span delivered more than once one "
              "copy, a trace no response line names is a run; each finding is counted once; "
              "the checks across runs add their findings]")
"""Why the rows the tables hold from the files read differ from the rows read."""


def _held(r: "IngestReport"
          ) -> tuple[dict[str, int], dict[str, int], tuple[int, int], int] | None:
    """What the tables hold from the files this ingest read (rows per table, findings per
    code, the spans of them delivered more than once with the copies left out, and the runs
    made from their traces), counted in the warehouse after the commit; None when nothing was
    read."""
    from transforms import warehouse

    sources = [f.source_file for f in r.files if not f.skipped and not f.error]
    if not sources or not r.rows:
        return None
    con = warehouse.connect(r.home)
    try:
        counts = dict(con.execute(" UNION ALL ".join(
            f"SELECT '{t}', count(*) FROM {t} WHERE source_file IN (SELECT unnest($files))"
            for t in r.rows), {"files": sources}).fetchall())
        codes = dict(con.execute(
            "SELECT code, count(*) FROM flags WHERE source_file IN (SELECT unnest($files)) "
            "GROUP BY 1 ORDER BY 2 DESC, 1", {"files": sources}).fetchall())
        repeated = con.execute(
            "SELECT count(*), coalesce(sum(deliveries - 1), 0) FROM spans "
            "WHERE deliveries > 1 AND source_file IN (SELECT unnest($files))",
            {"files": sources}).fetchone()
        traced = con.execute(
            "SELECT count(*) FROM runs WHERE record_shape = 'trace' "
            "AND source_file IN (SELECT unnest($files))", {"files": sources}).fetchone()
    finally:
        con.close()
    assert repeated is not None and traced is not None
    return counts, codes, (int(repeated[0]), int(repeated[1])), int(traced[0])


def print_files(shown: list["FileReport"], grouped: list["FileReport"] | None = None
                 ) -> None:
    """The files read, one row each (`shown`), then `grouped` counted by folder, one row per
    folder (up to LISTED_FILES, then one row for the rest): a table when it fits the terminal,
    else each row's name on its own line and its counts under it (never a path folded into
    pieces)."""
    numbers = ("lines", "accepted", "quarantined", "blank")
    t = Table(show_edge=False)
    t.add_column("file", no_wrap=True)
    t.add_column("kind", no_wrap=True)
    for c in numbers:
        t.add_column(c, justify="right", no_wrap=True)
    t.add_column("note", no_wrap=True)
    rows = []
    for f in shown:
        note = (printable(f"renamed from {f.renamed_from}") if f.renamed_from else
                "see below" if f.error else "")
        counts = ["-" if f.skipped else f"{x:,}"
                  for x in (f.lines, f.accepted, f.quarantined, f.blank)]
        said = ("unchanged, skipped" if f.skipped else
                f"{counted(f.lines, 'line')}, {f.accepted:,} accepted, {f.quarantined:,} "
                f"quarantined, {f.blank:,} blank")
        rows.append((_shown_path(f.source_file), f"{f.kind or 'unknown'}: {said}"
                     + (f"; {note}" if note else "")))
        t.add_row(rows[-1][0], f.kind or "unknown", *counts, note)
    for name, files in _by_folder(grouped or []):
        kinds = ", ".join(sorted({f.kind or "unknown" for f in files}))
        sums = [sum(getattr(f, x) for f in files)
                for x in ("lines", "accepted", "quarantined", "blank")]
        said = (f"{counted(sums[0], 'line')}, {sums[1]:,} accepted, {sums[2]:,} quarantined, "
                f"{sums[3]:,} blank")
        other = any(_shown_path(f.source_file).startswith(name) for f in shown)
        label = f"{name} ({counted(len(files), 'other file' if other else 'file')})"
        rows.append((label, f"{kinds}: {said}"))
        t.add_row(label, kinds, *(f"{x:,}" for x in sums), "")
    wide = Measurement.get(out, out.options.update_width(100_000), t).maximum
    if wide <= out.width or not out.is_terminal and out.width >= wide:
        out.print(t, highlight=False, markup=False)
        return
    if not out.is_terminal:  # into a pipe or file: the table at its own width
        console(width=wide).print(t, highlight=False, markup=False)
        return
    for path, said in rows:
        out.print(path, highlight=False, markup=False)
        out.print(f"  {said}", highlight=False, markup=False)


def _by_folder(files: list["FileReport"]) -> list[tuple[str, list["FileReport"]]]:
    """Files grouped by the folder they are in (`data_samples/2026-11-20/`), in name order,
    at most LISTED_FILES folders: the rest are one group, `N more folders`."""
    folders: dict[str, list[FileReport]] = {}
    for f in sorted(files, key=lambda f: f.source_file):
        path = _shown_path(f.source_file)
        folder = path.rsplit("/", 1)[0] + "/" if "/" in path else "./"
        folders.setdefault(folder, []).append(f)
    groups = list(folders.items())
    if len(groups) <= LISTED_FILES:
        return groups
    rest = groups[LISTED_FILES - 1:]
    return [*groups[:LISTED_FILES - 1],
            (f"{counted(len(rest), 'more folder')}", [f for _, fs in rest for f in fs])]


def _shown_path(source_file: str) -> str:
    """A file as the summary names it: relative to the current folder when it is under it."""
    if "://" not in source_file:
        try:
            return printable(str(Path(source_file).relative_to(Path.cwd())))
        except ValueError:
            pass
    return printable(source_file)


def print_skipped(skipped: list[tuple[str, str]]) -> None:
    for path, reason in skipped:
        out.print(printable(f"skipped {path}: {reason}"), highlight=False, markup=False)
