"""The `runlake` command: ingest, sql, views, schema, validate.

Every command runs the same functions as the Dagster assets; errors in the input or the query
are printed as one clear message with a non-zero exit, never as a traceback.
"""

import json
import re
import sys
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import duckdb
import typer
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table
from typer.core import TyperGroup

from transforms import db, settings, warehouse
from transforms.contracts.schemas import TABLES
from transforms.errors import InputError, RunlakeError, WarehouseError
from transforms.importers import IMPORTERS, run_import
from transforms.ingest import IngestReport, ingest
from transforms.lake import Lake
from transforms.read.readers import READABLE_KINDS, discover
from transforms.settings import Settings

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def error_line(e: BaseException) -> tuple[str, int] | None:
    """The one line and exit status a command's error is told with (None: not one of runlake's
    errors, a bug to show whole): 2 for what the user passed, 1 for what went wrong."""
    if isinstance(e, WarehouseError):
        return f"the warehouse views could not be built: {_one_line(str(e))}", 1
    if isinstance(e, RunlakeError):
        return str(e), 2 if isinstance(e, InputError) else 1
    if isinstance(e, FileNotFoundError) and e.filename is None:
        return str(e), 2  # runlake's own: no warehouse yet, and what to run
    if isinstance(e, OSError):  # a path that cannot be read or written
        where = f"{e.filename}: " if e.filename else ""
        return where + (e.strerror or str(e)), 1
    if isinstance(e, duckdb.Error):  # a damaged warehouse or lake file
        return (f"the warehouse or the lake could not be read: {_one_line(str(e))} (run "
                "`runlake doctor` to check the lake and build the warehouse again)"), 1
    return None


class _OneLineErrors(TyperGroup):
    """Every command's errors told in one line, once, here (not per command)."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (RunlakeError, OSError, duckdb.Error) as e:
            told = error_line(e)
            if told is None:
                raise
            _fail(*told)


app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  cls=_OneLineErrors,
                  help="runlake: a local SQL warehouse of AI-agent test runs.")

HomeOpt = Annotated[Path | None, typer.Option("--home", help="Warehouse folder "
                                              "[default: $RUNLAKE_HOME or ./warehouse]")]
PROGRESS_MIN_BYTES = 32 * 1024 * 1024

class KindChoice(StrEnum):
    """--kind: the kinds a file can be read as (readers.KINDS; typer lists and checks them)."""

    responses = "responses"
    spans = "spans"
    otlp = "otlp"
    durable = "durable"


class OutputFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"


def _settings() -> Settings:
    """The RUNLAKE_* settings; a bad value is a one-line error naming the variable."""
    return settings.load()  # an InputError: told in one line (_OneLineErrors)


def _home(home: Path | None) -> Path:
    return home if home is not None else _settings().home


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _printable(text: str) -> str:
    """Text from traces or file names as a terminal shows it safely, on its one line: control
    characters (newlines and tabs, escape sequences, bidi overrides) as \\n, \\t, \\xNN,
    \\uNNNN."""
    return _CONTROL.sub(lambda m: m[0].encode("unicode_escape").decode(), text)


def _fail(message: str, code: int = 1) -> None:
    err.print(f"[bold red]error:[/] {escape(_printable(message))}", highlight=False,
              markup=True)
    raise typer.Exit(code)


@app.command("ingest")
def ingest_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders to ingest.")],
    home: HomeOpt = None,
    kind: Annotated[KindChoice | None, typer.Option(
        help="Read every file as this kind, whatever its name.")] = None,
    workers: Annotated[int | None, typer.Option(help="Parser processes.")] = None,
    tools: Annotated[Path | None, typer.Option(
        help="Tool registry (tools.json or tools.yaml) to check tool calls against "
             "[default: $RUNLAKE_TOOLS]")] = None,
    model_aliases: Annotated[Path | None, typer.Option(
        help="Model alias table (YAML) extending the shipped one "
             "[default: $RUNLAKE_MODEL_ALIASES]")] = None,
    prices: Annotated[Path | None, typer.Option(
        help="Price table (YAML) extending the shipped one [default: $RUNLAKE_PRICES]")] = None,
) -> None:
    """Read trace files into the lake and rebuild the warehouse views."""
    if workers is not None and workers < 1:
        _fail(f"--workers {workers} must be at least 1", 2)
    config = _settings()
    h = _home(home)
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
                            retention_hours=config.retention_hours)
    else:
        report = ingest(paths, h, kind=as_kind, workers=workers or config.workers,
                        tools=tools or config.tools,
                        model_aliases=model_aliases or config.model_aliases,
                        prices=prices or config.prices,
                        retention_hours=config.retention_hours)
    _print_report(report)
    if not report.files:
        _fail(f"no input files found in {', '.join(map(str, paths))}", 2)
    readable = [f for f in report.files if f not in report.unreadable]
    if not readable:
        _fail("no file of a readable kind: see the kinds above", 2)
    if all(f.accepted == 0 for f in readable) and not any(f.skipped for f in readable):
        _fail("no line could be read as a run: see quarantine above", 1)


LISTED_FILES = 12
"""Up to this many files are listed one per line; beyond, only those worth a look (errors,
quarantined lines, unknown kinds), and unchanged files are counted in one line."""


def _print_report(r: IngestReport) -> None:
    done = [f for f in r.files if not f.skipped]
    n_skipped = len(r.files) - len(done)
    if len(r.files) <= LISTED_FILES:
        shown = r.files
    else:  # a re-run over a big landing folder: what was read this time, not what was not
        shown = done if len(done) <= LISTED_FILES else [
            f for f in done if f.error or f.quarantined or f.kind not in READABLE_KINDS]
    if shown:
        t = Table(show_edge=False)
        for c in ("file", "kind", "lines", "accepted", "quarantined", "blank", "note"):
            t.add_column(c, overflow="fold", justify="right" if c in (
                "lines", "accepted", "quarantined", "blank") else "left")
        for f in shown:
            note = "unchanged, skipped" if f.skipped else ("see below" if f.error else "")
            t.add_row(_printable(f.source_file), f.kind or "unknown",
                      *("-" if f.skipped else f"{x:,}"
                        for x in (f.lines, f.accepted, f.quarantined, f.blank)), note)
        out.print(t, highlight=False, markup=False)
    if n_skipped and len(r.files) > LISTED_FILES:
        out.print(f"{n_skipped:,} file{'' if n_skipped == 1 else 's'} unchanged, skipped",
                  highlight=False)
    for f in r.files:
        if f.error:
            out.print(_printable(f"{f.source_file}: {f.error}"), highlight=False, markup=False)
    _print_skipped(r.skipped_paths)
    out.print(f"{len(r.files):,} files ({n_skipped:,} unchanged): "
              f"{sum(f.lines for f in done):,} lines, {sum(f.accepted for f in done):,} "
              f"accepted, {sum(f.quarantined for f in done):,} quarantined, "
              f"{sum(f.blank for f in done):,} blank", highlight=False)
    if r.rows:
        out.print("rows: " + ", ".join(f"{k} {v:,}" for k, v in r.rows.items()))
    if r.flags_by_code:
        out.print("flags: " + ", ".join(f"{k} {v:,}" for k, v in r.flags_by_code.items()))
    if r.maintenance:
        out.print("lake upkeep: " + ", ".join(f"{k} {v:,}" for k, v in r.maintenance.items()))
    if r.quarantine_by_code:
        out.print("quarantined lines: " + ", ".join(f"{k} {v:,}"
                                                   for k, v in r.quarantine_by_code.items()))
    if r.unpriced_models:
        out.print(_printable(
            "models without a price (cost unknown; add them with RUNLAKE_PRICES): "
            + ", ".join(f"{m} ({n:,})" for m, n in r.unpriced_models.items())),
            highlight=False, markup=False)
    if r.model_tables_changed:
        out.print("model alias or price table changed: views computed again", highlight=False)
    if r.days:
        out.print(f"days written: {', '.join(d.isoformat() for d in r.days)}")
    out.print(f"warehouse: {_printable(str(warehouse.path(r.home)))}  (try: runlake sql "
              "\"select status, count(*) from runs group by 1\")", highlight=False, markup=False)


def _print_skipped(skipped: list[tuple[str, str]]) -> None:
    for path, reason in skipped:
        out.print(_printable(f"skipped {path}: {reason}"), highlight=False, markup=False)


@app.command("sql")
def sql_cmd(
    query: Annotated[str, typer.Argument(help="A SQL query over the warehouse views.")],
    home: HomeOpt = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="How to print the result.")
                   ] = OutputFormat.table,
    output: Annotated[Path | None, typer.Option(help="Write the result to this file.")] = None,
    limit: Annotated[int, typer.Option(help="Rows to print as a table.")] = 200,
    as_of: Annotated[str | None, typer.Option(
        "--as-of", help="Answer from an earlier lake version: a version number from "
        "`runlake history`, or a UTC timestamp like 2026-11-20T08:00:00Z.")] = None,
) -> None:
    """Run a read-only SQL query against the warehouse."""
    if fmt == "parquet" and output is None:
        _fail("--format parquet needs --output FILE", 2)
    if limit < 0:
        _fail(f"--limit {limit} must be 0 or more", 2)
    h = _home(home)
    lake = Lake(h).root
    if as_of is None:
        con = warehouse.connect(h)
    else:
        con = warehouse.at(h, int(as_of) if as_of.isdigit() else as_of)
    try:
        # DuckDB's sandbox: the query reads the lake's files and nothing else, writes nothing.
        db.sandbox(con, [lake])
        kinds = _statement_kinds(con, query)
        if len(kinds) != 1 or kinds[0] not in ("SELECT", "EXPLAIN", "PRAGMA"):
            _fail("runlake sql runs one query (SELECT, WITH, DESCRIBE, SHOW, EXPLAIN), not "
                  f"{', '.join(kinds) or 'nothing'}: export results with --format and --output", 2)
        rel = con.sql(query)
        if rel is None:
            _fail("the statement returned no rows (the warehouse is read-only: use SELECT)", 2)
        frame = rel.pl()
    except duckdb.Error as e:
        _fail(f"query failed: {_one_line(str(e))}")
    finally:
        con.close()
    if fmt == "table":
        t = Table(show_edge=False)
        for name in frame.columns:
            t.add_column(name, overflow="fold", max_width=60)
        for row in frame.head(limit).iter_rows():
            t.add_row(*("NULL" if v is None else _printable(str(v)) for v in row))
        # Into a pipe or file: the table at its own width, not squeezed into 80 columns.
        shown = out if out.is_terminal else Console(soft_wrap=True, width=max(
            out.width, Measurement.get(out, out.options.update_width(100_000), t).maximum))
        shown.print(t, highlight=False, markup=False)
        if frame.height > limit:
            out.print(f"... {frame.height - limit:,} more rows (use --limit or --output)")
        out.print(f"{frame.height:,} rows")
        return
    import polars as pl  # here, not at the top: every other command starts faster

    target = output if output is not None else sys.stdout
    if fmt in ("csv", "json"):
        # Raw bytes (quarantine.raw) as hex: CSV and JSON hold text only.
        frame = frame.with_columns(pl.col(c).bin.encode("hex") for c, t in frame.schema.items()
                                   if t == pl.Binary)
    if fmt == "csv":
        # Lists and structs (v_contract_violations.codes, ingest_files.days) as JSON text.
        frame = frame.with_columns(
            pl.col(c).map_elements(lambda v: json.dumps(v.to_list() if isinstance(v, pl.Series)
                                                        else v, default=str),
                                   return_dtype=pl.String, skip_nulls=True)
            for c, t in frame.schema.items() if t.is_nested())
    if fmt == "csv":
        frame.write_csv(target)
    elif fmt == "json":
        frame.write_json(target)
    else:
        frame.write_parquet(target)
    if output is not None:
        err.print(f"wrote {frame.height:,} rows to {output}")


def _statement_kinds(con: duckdb.DuckDBPyConnection, query: str) -> list[str]:
    """The type of each statement of `query` as DuckDB's parser reads it; an EXPLAIN is
    EXPLAIN only when what it explains is a SELECT (EXPLAIN ANALYZE runs it), else the type
    of that statement."""
    kinds = []
    for statement in con.extract_statements(query):
        kind = statement.type.name
        if kind == "EXPLAIN":
            inner = _explained(con, statement.query)
            kind = "EXPLAIN" if inner == {"SELECT"} else \
                f"EXPLAIN of {', '.join(sorted(inner)) or 'an unreadable statement'}"
        kinds.append(kind)
    return kinds


def _explained(con: duckdb.DuckDBPyConnection, text: str) -> set[str]:
    """The types of the statement an EXPLAIN explains, read by DuckDB's own tokenizer and
    parser. `EXPLAIN [ANALYZE] stmt` and `EXPLAIN (options) stmt` are the forms: every
    reading of the text that parses is taken, so the one DuckDB runs is among them."""
    found = duckdb.tokenize(text)
    ends = [offset for offset, _ in found[1:]] + [len(text)]
    read = [(offset, text[offset:end].strip().upper()) for (offset, kind), end
            in zip(found, ends, strict=True) if kind != duckdb.token_type.comment]
    tokens, words = [t for t, _ in read], [w for _, w in read]
    starts = tokens[1:2]
    if len(words) > 2 and words[1] in ("ANALYZE", "ANALYSE"):
        starts.append(tokens[2])
    if len(words) > 1 and words[1] == "(":
        depth = 0
        for i in range(1, len(words)):
            depth += (words[i] == "(") - (words[i] == ")")
            if depth == 0:
                starts += tokens[i + 1:i + 2]
                break
    kinds: set[str] = set()
    for start in starts:
        try:
            statements = con.extract_statements(text[start:])
        except duckdb.Error:
            continue
        kinds.update(s.type.name for s in statements)
        if len(statements) > 1:
            kinds.add("MULTI")
    return kinds


def _one_line(message: str) -> str:
    """A DuckDB error as one line: its lines joined, the caret line under the query left out."""
    return " ".join(p.strip() for p in message.splitlines() if p.strip().strip("^"))


@app.command("views")
def views_cmd(home: HomeOpt = None) -> None:
    """List the warehouse's tables and views with their grain and columns."""
    con = warehouse.connect(_home(home))
    try:
        rows = con.execute(
            "SELECT table_name, string_agg(column_name, ', ' ORDER BY ordinal_position) "
            "FROM information_schema.columns WHERE table_schema = 'main' "
            "GROUP BY 1 ORDER BY 1").fetchall()
    finally:
        con.close()
    docs = warehouse.view_docs()
    t = Table(show_edge=False)
    for c in ("name", "grain", "columns"):
        t.add_column(c, overflow="fold")
    for name, cols in rows:
        grain = docs.get(name, {}).get("grain") or (TABLES[name].grain if name in TABLES else "")
        t.add_row(name, grain, cols)
    out.print(t, highlight=False, markup=False)


@app.command("history")
def history_cmd(
    home: HomeOpt = None,
    limit: Annotated[int, typer.Option(help="Versions to list, newest first.")] = 20,
) -> None:
    """List the lake's versions: when each ingest committed, which files, and the rows it
    added and removed per table (`runlake sql --as-of VERSION` answers from one)."""
    from datetime import UTC, datetime

    from transforms.lake import Lake, history

    h = _home(home)
    if not (h / "lake").is_dir():
        _fail(f"no lake under {h}: run `runlake ingest PATH` first", 2)
    t = Table(show_edge=False)
    for c in ("version", "committed (UTC)", "files", "rows added", "rows removed"):
        t.add_column(c, overflow="fold")
    for v in history(Lake(h), limit):
        names = [Path(f).name for f in v.get("files", [])]
        files = f"{v.get('n_files', len(names))}: " + ", ".join(names[:3]) + (
            " …" if len(names) > 3 else "")
        per = lambda d: ", ".join(f"{k} {n:,}" for k, n in (d or {}).items() if n)  # noqa: E731
        when = datetime.fromtimestamp(v["timestamp"] / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
        t.add_row(str(v["version"]), when, _printable(files),
                  per(v.get("rows_added")) or "–", per(v.get("rows_removed")) or "–")
    out.print(t, highlight=False, markup=False)


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
    from transforms.lake import Lake, doctor

    h = _home(home)
    lake = Lake(h)
    if not lake.root.is_dir():
        _fail(f"no lake under {h}: run `runlake ingest PATH` first", 2)
    found = doctor.check(lake)
    for d in found:
        out.print(_printable(f"damaged: {d.what}"), highlight=False, markup=False)
    if not found:
        if not warehouse.is_current(h):
            warehouse.publish(h)
            out.print("the warehouse views were built again")
        out.print("the lake holds what its logs claim: nothing to repair")
        return
    if not repair:
        out.print("run `runlake doctor --repair` to repair it")
        raise typer.Exit(1)
    done = doctor.repair(lake)
    for t in done.moved:
        out.print(_printable(f"moved aside (its log could not be read): lake/{t} -> "
                             f"lake/{doctor.DAMAGED}/"), highlight=False, markup=False)
    here, gone = doctor.rereadable(done.forgotten)
    out.print(f"rows of {len(done.forgotten)} input file(s) removed; reading "
              f"{len(here)} of them again")
    for g in gone:
        out.print(_printable(f"gone, its rows are no longer in the lake: {g}"),
                  highlight=False, markup=False)
    settings = _settings()
    report = ingest(here, h, workers=settings.workers, tools=settings.tools,
                    model_aliases=settings.model_aliases, prices=settings.prices,
                    retention_hours=settings.retention_hours) if here else None
    if report is None:
        warehouse.publish(h, settings.retention_hours)
    else:
        _print_report(report)
    out.print("repaired")


@app.command("report")
def report_cmd(
    day: Annotated[str | None, typer.Option(help="The night to report, YYYY-MM-DD "
                                            "[default: the latest day with runs]")] = None,
    baseline_days: Annotated[int, typer.Option(help="Days before --day to compare "
                                               "with.")] = 7,
    fail_on_regression: Annotated[bool, typer.Option(
        "--fail-on-regression", help="Exit with code 3 when an agent and model crashed, went "
        "missing or lost pass rate, or a regular test case is missing (for CI gates).")] = False,
    home: HomeOpt = None,
) -> None:
    """Write the nightly HTML report (reports/nightly-DAY.html) and print what regressed.
    With RUNLAKE_WEBHOOK_URL set, a JSON summary is posted there when anything regressed."""
    from transforms.report import write_report
    from transforms.report.nightly import EXIT_REGRESSED, NotifyError, notify

    if not 1 <= baseline_days <= 366:
        _fail(f"--baseline-days {baseline_days} must be between 1 and 366", 2)
    when: date | None = None
    if day is not None:
        try:
            when = date.fromisoformat(day)
        except ValueError:
            _fail(f"--day {day!r} is not a date like 2026-11-20", 2)
    config = _settings()
    summary = write_report(_home(home), when, baseline_days)
    v = summary.verdict
    say = lambda text: out.print(_printable(text), highlight=False, markup=False)  # noqa: E731
    say(f"{v.latest_day}: {summary.n_runs_latest} runs against {v.baseline_start} to "
        f"{v.baseline_end}")
    for r in v.regressed:
        say(f"  REGRESSION {r.line()}")
    for (agent, model), cases in v.missing_by_pair().items():
        names = ", ".join(c["test_case_id"] for c in cases[:10])
        more = f" and {len(cases) - 10} more" if len(cases) > 10 else ""
        say(f"  MISSING {agent} / {model}: {len(cases)} test case"
            f"{'' if len(cases) == 1 else 's'} not run ({names}{more})")
    if v.all_clear:
        say("  no regression: nothing crashed, went missing or lost pass rate")
    say(f"  {summary.n_pass_to_fail} test cases pass -> fail, {summary.n_flaky} flaky "
        "(reported apart)")
    say(f"report: {summary.path.resolve()}")
    if config.webhook_url and not v.all_clear:
        try:
            notify(v, config.webhook_url, str(summary.path.resolve()))
            say("webhook: summary sent")
        except NotifyError as e:
            err.print(f"warning: {_printable(str(e))}", highlight=False, markup=False)
    if fail_on_regression and not v.all_clear:
        raise typer.Exit(EXIT_REGRESSED)


_FORMATS = [*IMPORTERS]


@app.command("import", epilog="Formats:\n" + "\n".join(
    f"{i.name}: {i.describe}" for i in IMPORTERS.values()))
def import_cmd(
    fmt: Annotated[str, typer.Argument(
        help=f"{', '.join(_FORMATS[:-1])} or {_FORMATS[-1]}")],
    sources: Annotated[list[Path], typer.Argument(
        help="Result files to convert (for inspect also .eval logs, and folders of logs).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Landing folder to write "
                                          "<name>.responses|spans|otlp.jsonl files into.")],
    agent: Annotated[str | None, typer.Option(help="Agent name, when the source has "
                                              "none.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name, when the source has "
                                              "none.")] = None,
) -> None:
    """Convert other tools' result files into response (or span) JSONL for `runlake ingest`."""
    try:
        results = run_import(fmt, sources, out_dir, agent, model)
    except InputError as e:
        _fail(str(e), 2)
    for r in results:
        unit = "span" if r.output.name.endswith((".spans.jsonl", ".otlp.jsonl")) else "run"
        what = f"{r.runs:,} {unit}{'' if r.runs == 1 else 's'}"
        if unit == "run":
            what += f" ({r.passed:,} of {r.graded:,} graded passed)" if r.graded else \
                " (ungraded)"
        out.print(_printable(f"{r.source.name}: {what} -> {r.output}"), highlight=False,
                  markup=False)
        for note in r.notes:
            out.print(_printable(f"  note: {note}"), highlight=False, markup=False)
    out.print(_printable(f"wrote {len(results):,} file{'' if len(results) == 1 else 's'} to "
                         f"{out_dir}; next: runlake ingest {out_dir}"), highlight=False,
              markup=False)


@app.command("schema")
def schema_cmd(
    fmt: Annotated[str | None, typer.Argument(
        help="One of: response, turn, envelope, span, spans-bulk")] = None,
) -> None:
    """Print the JSON Schema of an input contract (all of them without an argument)."""
    from transforms.contracts import SCHEMAS

    if fmt is not None and fmt not in SCHEMAS:
        _fail(f"unknown format {fmt!r}; known: {', '.join(SCHEMAS)}", 2)
    chosen = {fmt: SCHEMAS[fmt]} if fmt else SCHEMAS
    docs = {name: model.model_json_schema() for name, model in chosen.items()}
    out.print_json(json.dumps(docs[fmt] if fmt else docs))


@app.command("validate")
def validate_cmd(
    path: Annotated[Path, typer.Argument(
        help="A response, span, OTLP or durable state file (or a folder of them).")],
    max_errors: Annotated[int, typer.Option(help="Stop after this many bad lines.")] = 20,
    kind: Annotated[KindChoice | None, typer.Option(
        help="Read the file as this kind, whatever its name.")] = None,
) -> None:
    """Explain, field by field, which lines of an input file break the contracts."""
    from transforms.read import validate

    skipped: list[tuple[str, str]] = []
    files = discover([path], kind.value if kind is not None else None, skipped)
    _print_skipped(skipped)
    if not files:
        _fail(f"{path}: no input files", 2)
    unknown = [f.source_file for f in files if f.kind is None]
    if unknown:
        _fail(f"{unknown[0]}: its kind cannot be told from its name (*.responses.jsonl, "
              "*.spans.jsonl, *.otlp.jsonl, *.durable.json[l], or a folder named for the "
              "kind); pass --kind", 2)
    bad = 0
    for f in files:
        for found in validate.check(f):
            bad += 1
            if found.line is None:
                out.print(_printable(f"{found.source_file}: {found.problems[0]}"),
                          style="bold", highlight=False, markup=False)
                continue
            out.print(f"{_printable(found.source_file)}:{found.line}", style="bold",
                      highlight=False, markup=False)
            for p in found.problems:
                out.print(f"  {_printable(p)}", highlight=False, markup=False)
            if bad >= max_errors:
                raise typer.Exit(1)
    out.print(f"{bad} line(s) break the contracts" if bad else "every line fits the contracts")
    raise typer.Exit(1 if bad else 0)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
