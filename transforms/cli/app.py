"""What every `runlake` command shares: the Typer app, the options, the console, and the one
place where an error becomes one line and an exit status (never a traceback)."""

import re
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from transforms.errors import InputError, RunlakeError, WarehouseError

if TYPE_CHECKING:
    from transforms.settings import Settings

# Every command imports what it needs when it runs (duckdb, polars, the lake, pydantic's
# settings), so that `runlake --help` and a query start quickly.



def console(**options: Any) -> Console:
    """A console that prints text as it is: what runlake prints is data (trace text, file and
    column names, values), never Rich markup (`[/INST]` in a transcript is no closing tag),
    emoji codes (`:smiley:` stays so) or highlighting; a style is asked for explicitly."""
    return Console(soft_wrap=True, markup=False, emoji=False, highlight=False, **options)


out = console()
err = console(stderr=True)

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
    duckdb = sys.modules.get("duckdb")  # not imported: the error is not DuckDB's
    if duckdb is not None and isinstance(e, duckdb.Error):  # a damaged warehouse or lake
        return (f"the warehouse or the lake could not be read: {_one_line(str(e))} (run "
                "`runlake doctor` to check the lake and build the warehouse again)"), 1
    return None


COMMANDS = ("ingest", "sql", "views", "report", "history", "forget", "doctor", "import",
            "schema", "validate")
"""The order `runlake --help` lists the commands in: the daily ones first."""


class _OneLineErrors(TyperGroup):
    """Every command's errors told in one line, once, here (not per command)."""

    def list_commands(self, ctx: Any) -> list[str]:
        known = super().list_commands(ctx)
        return sorted(known, key=lambda c: COMMANDS.index(c) if c in COMMANDS else len(COMMANDS))

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:  # Ctrl-C: one line (typer would exit 130 saying nothing)
            err.print("interrupted")
            raise typer.Exit(130) from None
        except Exception as e:  # noqa: BLE001 - runlake's, OS and DuckDB errors; others re-raised
            told = error_line(e)
            if told is None:
                raise
            _fail(*told)


app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  cls=_OneLineErrors,
                  help="runlake: a local SQL warehouse of AI-agent test runs.")

HomeOpt = Annotated[str | None, typer.Option("--home", help="Warehouse folder, or an "
                                             "s3://bucket/prefix URL for the lake "
                                             "[default: $RUNLAKE_HOME or ./warehouse]")]


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


def _settings() -> "Settings":
    """The RUNLAKE_* settings; a bad value is a one-line error naming the variable."""
    from transforms import settings

    return settings.load()  # an InputError: told in one line (_OneLineErrors)


def _home(home: str | None) -> Path | str:
    """--home (a local folder, or an s3:// URL kept as written), else RUNLAKE_HOME."""
    if home is None:
        return _settings().home
    from transforms import settings

    try:
        return settings.location(home)
    except ValueError as e:
        raise InputError(f"--home {home!r}: {e}") from None


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



def _one_line(message: str) -> str:
    """A DuckDB error as one line: its lines joined, the caret line under the query left out."""
    return " ".join(p.strip() for p in message.splitlines() if p.strip().strip("^"))


def input_path(text: str) -> Path:
    """A path to ingest, or a file or prefix in a bucket (an S3Path) for an s3:// URL."""
    if "://" not in text:
        return Path(text)
    from transforms.read.remote import s3_path

    try:
        return s3_path(text)  # type: ignore[return-value]
    except ValueError as e:
        raise InputError(f"{text!r}: {e}") from None
