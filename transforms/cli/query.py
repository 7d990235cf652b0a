"""`runlake sql` and `runlake views`: questions over the warehouse, read-only."""

import errno
import io
import json
import math
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    import duckdb

from transforms.cli.app import (
    HomeOpt,
    OutputFormat,
    app,
    console,
    counted,
    disk_full_path,
    err,
    fail,
    one_line,
    out,
    printable,
    resolve_home,
)


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
        fail("--format parquet needs --output FILE", 2)
    if limit < 0:
        fail(f"--limit {limit} must be 0 or more", 2)
    import duckdb

    from transforms import db, warehouse
    from transforms.lake.store import locate
    from transforms.warehouse.query import check_read_only

    h = resolve_home(home)
    store = locate(h).lake()
    # The lake folder, or for an s3:// home its prefix of the bucket (no local file at all).
    lake: Path | str = store.url() if store.remote else store.path()
    with db.private_temp() as temp:
        if as_of is None:
            con = warehouse.connect(h, temp)
        else:
            con = warehouse.at(h, int(as_of) if as_of.isdigit() else as_of, temp)
        try:
            # DuckDB's sandbox: the query reads the lake's files and nothing else, writes
            # nothing.
            db.sandbox(con, [lake], temp)
            check_read_only(con, query)
            rel = con.sql(query)
            if rel is None:
                fail("the statement returned no rows (the warehouse is read-only: use SELECT)",
                      2)
            if fmt == "table":
                columns, rows = rel.columns, _interruptible(con, rel.fetchall)
            else:
                frame = _interruptible(con, rel.pl)
        except duckdb.Error as e:
            fail(f"query failed: {one_line(str(e))}")
        finally:
            con.close()
    if fmt == "table":
        t = Table(show_edge=False)
        # Names and values as Text: printed as they are, never read as markup or emoji codes.
        for name in columns:
            t.add_column(Text(printable(name)), overflow="fold", max_width=60)
        money = [_is_money(name) for name in columns]
        for row in rows[:limit]:
            t.add_row(*(Text(cell(v, m)) for v, m in zip(row, money, strict=True)))
        # Into a pipe or file: the table at its own width, not squeezed into 80 columns.
        shown = out if out.is_terminal else console(width=max(
            out.width, Measurement.get(out, out.options.update_width(100_000), t).maximum))
        with _written_to(None):
            shown.print(t)
            if len(rows) > limit:
                out.print(f"... {counted(len(rows) - limit, 'more row')} (use --limit or --output)")
            out.print(counted(len(rows), "row"))
            out.file.flush()
        return
    import polars as pl

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
    # Written here, whole, by Python: polars' own writers say nothing, or something else each
    # time, when the disk is full.
    with _written_to(output):
        if fmt == "parquet":
            data = io.BytesIO()
            frame.write_parquet(data)
            assert output is not None  # checked above: parquet needs --output
            output.write_bytes(data.getvalue())
        else:
            text = frame.write_csv() if fmt == "csv" else frame.write_json()
            if output is None:
                sys.stdout.write(text)
                sys.stdout.flush()
            else:
                output.write_text(text, encoding="utf-8")
    if output is not None:
        err.print(f"wrote {counted(frame.height, 'row')} to {output}")




@contextmanager
def _written_to(output: Path | None) -> Iterator[None]:
    """A full disk met while writing the result (`output`, or the standard output) as an
    OSError naming it."""
    try:
        yield
    except Exception as e:
        if disk_full_path(e) is None:
            raise
        raise OSError(errno.ENOSPC, "No space left on device",
                      str(output) if output is not None else "the standard output") from e


T = TypeVar("T")


def _interruptible(con: "duckdb.DuckDBPyConnection", work: Callable[[], T]) -> T:
    """`work` (running a query on `con`) in a thread of its own: DuckDB checks for no signal
    while it runs, so on Ctrl-C this thread interrupts the query on the connection, waits for
    it to stop and raises KeyboardInterrupt."""
    done: list[T] = []
    failed: list[BaseException] = []
    finished = threading.Event()  # not Thread.join: a Ctrl-C inside it can leave it unsure

    def run() -> None:
        try:
            done.append(work())
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            failed.append(e)
        finally:
            finished.set()

    threading.Thread(target=run, name="runlake-query", daemon=True).start()
    try:
        while not finished.wait(0.05):
            pass
    except KeyboardInterrupt:
        while not finished.is_set():  # the connection is closed once the query has stopped
            try:
                con.interrupt()
                finished.wait(0.05)
            except KeyboardInterrupt:
                continue
        raise
    if failed:
        raise failed[0]
    return done[0]


class Dialect(StrEnum):
    spark = "spark"
    trino = "trino"


_MONEY = re.compile(r"(^|_)(usd|cost|price)(_|$)", re.IGNORECASE)


def _is_money(column: str) -> bool:
    """A column of dollars, by its name (cost_usd, cost_usd_total, price_input_usd)."""
    return bool(_MONEY.search(column))


def cell(value: object, money: bool = False) -> str:
    """A value as the table shows it: floats to 4 significant digits below 1 and 2 decimals
    above, never in exponent notation (0.0000567, not 5.67e-05; the full value is in
    --format csv or json), with a $ in a column of dollars (`money`); NULL for a null; a list
    as [a, b] and a struct as {'k': v}, each value inside shown the same way (a date as
    2026-11-14, not datetime.date(2026, 11, 14))."""
    if value is None:
        return "NULL"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(cell(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{cell(repr(str(k)))}: {cell(v)}" for k, v in value.items()) \
            + "}"
    if isinstance(value, float | Decimal) and math.isfinite(value):
        text = _figure(float(value))
        return ("-$" + text[1:] if text.startswith("-") else "$" + text) if money else text
    return printable(str(value))


def _figure(value: float) -> str:
    """A number in plain digits: 2 decimals from 1 up (12.35, 3), 4 significant digits below
    (0.6596, 0.0000567); exponent notation only below 1e-15."""
    if value == 0 or abs(value) >= 1:
        return f"{value:.2f}".rstrip("0").rstrip(".")
    if abs(value) < 1e-15:
        return f"{value:.4g}"
    decimals = 3 - math.floor(math.log10(abs(value)))  # 4 significant digits
    return f"{value:.{decimals}f}".rstrip("0").rstrip(".")


_SCHEMA = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?")


@app.command("views")
def views_cmd(
    home: HomeOpt = None,
    dialect: Annotated[Dialect | None, typer.Option(
        help="Print the warehouse as SQL for this engine instead: views and tables to create "
        "over the lake's Delta tables (docs/spark-trino.md).")] = None,
    schema: Annotated[str | None, typer.Option(
        help="The schema to create them in (default: runlake on Spark, delta.runlake on "
        "Trino).")] = None,
) -> None:
    """List the warehouse's tables and views with their grain and columns, or print them as
    Spark or Trino SQL (--dialect)."""
    if dialect is not None:
        from transforms.warehouse.scripts import script

        if schema is not None and not _SCHEMA.fullmatch(schema):
            fail(f"--schema {schema!r}: a name like runlake or catalog.runlake "
                  "(letters, digits, _)", 2)
        sys.stdout.write(script(resolve_home(home), dialect.value, schema))
        return
    from transforms import warehouse
    from transforms.contracts.schemas import TABLES

    con = warehouse.connect(resolve_home(home))
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
        t.add_row(Text(name), Text(grain), Text(cols))
    out.print(t)
