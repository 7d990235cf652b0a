"""`runlake history`, `forget`, `doctor` and `publish`: the lake's versions, taking a file's
rows out, the lake's check and repair, and bringing the warehouse up to date."""

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from transforms.cli.app import (
    HomeOpt,
    app,
    fail,
    input_path,
    load_settings,
    out,
    printable,
    resolve_home,
)
from transforms.cli.ingest import print_report


@app.command("history")
def history_cmd(
    home: HomeOpt = None,
    limit: Annotated[int, typer.Option(help="Versions to list, newest first.")] = 20,
) -> None:
    """List the lake's versions: when each ingest committed, which files, and the rows it
    added and removed per table (`runlake sql --as-of VERSION` answers from one)."""
    from datetime import UTC, datetime

    from transforms.lake import Lake, history

    h = resolve_home(home)
    if not Lake(h).is_there():
        fail(f"no lake under {h}: run `runlake ingest PATH` first", 2)
    t = Table(show_edge=False)
    for c in ("version", "committed (UTC)", "action", "files", "rows added", "rows removed"):
        t.add_column(c, overflow="fold")
    for v in history(Lake(h), limit):
        names = [Path(f).name for f in v.get("files", [])]
        files = f"{v.get('n_files', len(names))}: " + ", ".join(names[:3]) + (
            " …" if len(names) > 3 else "")
        per = lambda d: ", ".join(f"{k} {n:,}" for k, n in (d or {}).items() if n)  # noqa: E731
        when = datetime.fromtimestamp(v["timestamp"] / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
        t.add_row(str(v["version"]), when, v.get("action", "ingest"), printable(files),
                  per(v.get("rows_added")) or "–", per(v.get("rows_removed")) or "–")
    out.print(t, highlight=False, markup=False)


@app.command("publish")
def publish_cmd(home: HomeOpt = None) -> None:
    """Bring the warehouse up to the lake's newest version: derive the tables again when the
    SQL, the tool registry or the model tables changed, and build warehouse.duckdb. A writer,
    like ingest: `sql`, `report` and `views` never write, and read a stale or moved warehouse
    through the lake's tables instead."""
    from transforms import warehouse
    from transforms.lake import Lake

    h = resolve_home(home)
    if not Lake(h).is_there():
        fail(f"no lake under {h}: run `runlake ingest PATH` first", 2)
    settings = load_settings()
    target = warehouse.publish(h, settings.retention_hours)
    out.print(printable(f"warehouse: {target} (lake version "
                         f"{Lake(h).tables_at().get('ingest_files', 0)})"),
              highlight=False, markup=False)


@app.command("forget")
def forget_cmd(
    inputs: Annotated[list[str], typer.Argument(
        metavar="PATHS...", help="Input files as they were ingested (they need not exist any "
        "more), or folders or s3:// prefixes: every ingested file under them.")],
    home: HomeOpt = None,
) -> None:
    """Remove every row that these input files added (all tables, their flags, quarantined
    lines and ingest_files rows) in one lake version, and rebuild the views. Ingesting a file
    again brings its rows back."""
    from transforms.forget import forget

    report = forget([input_path(p) for p in inputs], resolve_home(home),
                    load_settings().retention_hours)
    for f in report.files:
        out.print(printable(f"forgot {f}"), highlight=False, markup=False)
    for f in report.earlier:
        out.print(printable(f"forgot {f} (already, by an earlier forget)"), highlight=False,
                  markup=False)
    removed = ", ".join(f"{t} {n:,}" for t, n in report.rows_removed.items()) or "none"
    out.print(f"rows removed: {removed}", highlight=False)
    out.print(f"lake version {report.version} (`runlake history`; the earlier versions answer "
              "`runlake sql --as-of` until vacuum)", highlight=False)


@app.command("doctor")
def doctor_cmd(
    home: HomeOpt = None,
    repair: Annotated[bool, typer.Option(
        "--repair", help="Repair what is damaged and read the affected input files again.")
    ] = False,
) -> None:
    """Check that the lake holds what its logs claim (every data file there and whole, every
    table readable); with --repair, make it consistent and read again the input files whose
    rows were lost. Exit status 1 when damage is found and not repaired."""
    from transforms import warehouse
    from transforms.ingest import ingest
    from transforms.lake import Lake, doctor

    h = resolve_home(home)
    lake = Lake(h)
    if not lake.is_there():
        fail(f"no lake under {h}: run `runlake ingest PATH` first", 2)
    found = doctor.check(lake)
    for d in found:
        out.print(printable(f"damaged: {d.what}"), highlight=False, markup=False)
    if not found:
        if not warehouse.is_current(h):
            warehouse.publish(h)
            out.print("the warehouse views were built again")
        out.print("the lake holds what its logs claim: nothing to repair")
        return
    if not repair:
        out.print("run `runlake doctor --repair` to repair it")
        raise typer.Exit(1)
    from transforms.warehouse.lake_version import commit_version

    done = doctor.repair(lake, commit_version)
    for t in done.moved:
        out.print(printable(f"moved aside (its log could not be read): lake/{t} -> "
                             f"lake/{doctor.DAMAGED}/"), highlight=False, markup=False)
    here, gone = doctor.rereadable(done.forgotten)
    out.print(f"rows of {len(done.forgotten)} input file(s) removed; reading "
              f"{len(here)} of them again")
    for g in gone:
        out.print(printable(f"gone, its rows are no longer in the lake: {g}"),
                  highlight=False, markup=False)
    settings = load_settings()
    report = ingest(here, h, workers=settings.workers, tools=settings.tools,
                    model_aliases=settings.model_aliases, prices=settings.prices,
                    retention_hours=settings.retention_hours,
                    deciding_evaluations=settings.deciding_evaluations) if here else None
    if report is None:
        warehouse.publish(h, settings.retention_hours)
    else:
        print_report(report)
    out.print("repaired")


