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

from transforms.cli.help_text import RunlakeGroup, RunlakeTyper, columns_set
from transforms.errors import (
    DiskFull,
    InputError,
    NoWarehouse,
    RunlakeError,
    WarehouseError,
    causes,
    is_disk_full,
)
from transforms.kinds import INPUT_FORMATS, KINDS

if TYPE_CHECKING:
    from transforms.settings import Settings

# Every command imports what it needs when it runs (duckdb, polars, the lake, pydantic's
# settings), so that `runlake --help` and a query start quickly.



PIPED_WIDTH = 100_000
"""The width of output into a pipe or a file when COLUMNS is not set: a table's rows are never
wrapped at 80 columns there (rich's width for what is not a terminal); a table is as wide as
its cells, and text is never wrapped anyway (soft wrap)."""

def console(**options: Any) -> Console:
    """A console that prints text as it is: what runlake prints is data (trace text, file and
    column names, values), never Rich markup (`[/INST]` in a transcript is no closing tag),
    emoji codes (`:smiley:` stays so) or highlighting; a style is asked for explicitly. Into a
    pipe or a file it is PIPED_WIDTH wide, unless COLUMNS says how wide."""
    c = Console(soft_wrap=True, markup=False, emoji=False, highlight=False, **options)
    if "width" not in options and not c.is_terminal and not columns_set():
        c.width = PIPED_WIDTH
    return c


out = console()
err = console(stderr=True)

_QUOTED_PATH = re.compile(r"""["'](/[^"']+)["']""")


def disk_full_path(e: BaseException) -> str | None:
    """For an error that is a full disk (ENOSPC, as any library words it, or its cause), the
    path it was writing when the error names one ("" when it names none); else None. A
    parser process's traceback, carried with its error, names source files, not the file
    being written: it is not searched."""
    if not is_disk_full(e):
        return None
    for x in causes(e):
        if isinstance(x, OSError) and x.filename:
            return str(x.filename)
        quoted = _QUOTED_PATH.search(str(x)) if type(x).__name__ != "_RemoteTraceback" else None
        if quoted:
            return quoted[1]
    return ""


def error_line(e: BaseException, where: str | None = None) -> tuple[str, int] | None:
    """The one line and exit status a command's error is told with (None: not one of runlake's
    errors, a bug to show whole): 2 for what the user passed, 1 for what went wrong. `where`:
    the folder the command writes into, named when a full disk's error names no file."""
    if isinstance(e, DiskFull):  # named with the disk and what is needed
        return str(e), 1
    full = disk_full_path(e)
    if full is not None:
        path = full or where
        return ("the disk is full (ENOSPC: no space left on device)"
                + (f" writing {path}" if path else "")
                + ": free some space and run the command again"), 1
    if isinstance(e, WarehouseError):
        return f"the warehouse views could not be built: {one_line(str(e))}", 1
    if isinstance(e, RunlakeError):
        return str(e), 2 if isinstance(e, InputError) else 1
    if isinstance(e, FileNotFoundError) and e.filename is None:
        return str(e), 2  # runlake's own: no warehouse yet, and what to run
    if isinstance(e, OSError):  # a path that cannot be read or written
        where = f"{e.filename}: " if e.filename else ""
        return where + (e.strerror or str(e)), 1
    duckdb = sys.modules.get("duckdb")  # not imported: the error is not DuckDB's
    if duckdb is not None and isinstance(e, duckdb.Error):  # a damaged warehouse or lake
        return (f"the warehouse or the lake could not be read: {one_line(str(e))} (run "
                "`runlake doctor` to check the lake and build the warehouse again)"), 1
    return None


COMMANDS = ("ingest", "sql", "views", "report", "compare", "history", "forget", "doctor",
            "publish", "serve", "import", "schema", "validate")
"""The order `runlake --help` lists the commands in: the daily ones first."""


class _OneLineErrors(RunlakeGroup):
    """Every command's errors told in one line, once, here (not per command)."""

    def list_commands(self, ctx: Any) -> list[str]:
        known = super().list_commands(ctx)
        return sorted(known, key=lambda c: COMMANDS.index(c) if c in COMMANDS else len(COMMANDS))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command, its line in `runlake --help` the first paragraph of its docstring as
        one flowing text (typer keeps the docstring's line breaks there, which wrapped lines
        then cut into a ragged mess)."""
        import inspect

        command = super().get_command(ctx, cmd_name)
        if command is not None and command.short_help is None and command.help:
            first = inspect.cleandoc(command.help).split("\n\n")[0]
            command.short_help = " ".join(first.split())
        return command

    def invoke(self, ctx: Any) -> Any:
        args = [*getattr(ctx, "_protected_args", []), *ctx.args]  # before click consumes them
        try:
            return super().invoke(ctx)
        except Exception as e:  # noqa: BLE001 - runlake's, OS and DuckDB errors; others re-raised
            told = error_line(e, _written(args))
            if told is None:
                raise
            if isinstance(e, NoWarehouse) and _home_defaulted(args):
                told = (_no_warehouse_by_default(e), told[1])
            fail(*told)


def _home_defaulted(args: list[str]) -> bool:
    """Neither --home nor RUNLAKE_HOME chose the home: it is ./warehouse."""
    import os

    return "RUNLAKE_HOME" not in os.environ and not any(
        a == "--home" or a.startswith("--home=") for a in args)


def _no_warehouse_by_default(e: NoWarehouse) -> str:
    """No warehouse in the default home: said so, with how to name the one meant, so that
    nobody builds a second warehouse in ./warehouse by mistake."""
    return (f"no warehouse at {e.target}: neither --home nor RUNLAKE_HOME is set, so the home "
            "is ./warehouse; set RUNLAKE_HOME or pass --home to use your warehouse, or run "
            "`runlake ingest PATH` to make one here")


def _written(args: list[str]) -> str | None:
    """The file or folder a command line writes into: --output, --out or --home as given, else
    RUNLAKE_HOME (None when even that cannot be read)."""
    for option in ("--output", "--out", "--home"):
        for i, arg in enumerate(args):
            if arg == option and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith(f"{option}="):
                return arg.split("=", 1)[1]
    try:
        return str(load_settings().home)
    except Exception:  # noqa: BLE001 - a bad setting has its own error; nothing to name here
        return None


app = RunlakeTyper(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  cls=_OneLineErrors,
                  help="runlake: a local SQL warehouse of AI-agent test runs.")

HomeOpt = Annotated[str | None, typer.Option("--home", help="Warehouse folder, or an "
                                             "s3://bucket/prefix URL for the lake "
                                             "[default: $RUNLAKE_HOME or ./warehouse]")]


KindChoice = StrEnum("KindChoice", {name: name for name in KINDS})  # type: ignore[misc]
"""--kind: the kinds a file can be read as (transforms.kinds; typer lists and checks them)."""
KIND_HELP = "; ".join(f"{name}: {fmt.help}" for name, fmt in INPUT_FORMATS.items())
"""What each kind --kind accepts is, for the options' help."""


class OutputFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"


def load_settings() -> "Settings":
    """The RUNLAKE_* settings; a bad value is a one-line error naming the variable."""
    from transforms import settings

    return settings.load()  # an InputError: told in one line (_OneLineErrors)


def resolve_home(home: str | None) -> Path | str:
    """--home (a local folder, or an s3:// URL kept as written), else RUNLAKE_HOME."""
    if home is None:
        return load_settings().home
    from transforms import settings

    try:
        return settings.location(home)
    except ValueError as e:
        raise InputError(f"--home {home!r}: {e}") from None


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """Text from traces or file names as a terminal shows it safely, on its one line: control
    characters (newlines and tabs, escape sequences, bidi overrides) as \\n, \\t, \\xNN,
    \\uNNNN."""
    return _CONTROL.sub(lambda m: m[0].encode("unicode_escape").decode(), text)


def fail(message: str, code: int = 1) -> None:
    err.print(f"[bold red]error:[/] {escape(printable(message))}", highlight=False,
              markup=True)
    raise typer.Exit(code)



def counted(n: int, noun: str) -> str:
    """A count with its noun, plural unless the count is one, and thousands separated."""
    return f"{n:,} {noun if n == 1 else noun + 's'}"


def one_line(message: str) -> str:
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
