"""How `runlake --help` and each command's `--help` look, through typer's own customisation
(the class of the app's group and of each command, typer's `cls`) rather than by patching
typer or click: importing the command line changes nothing in either library.

- A flag shows no type: `--fail-on-regression`, not `--fail-on-regression <bool>`.
- An argument is written in the usage line as click writes it: `QUERY`, `PATH...`, `[TYPE]`
  (typer writes `{query}` and `{PATHS...}...`).
- Help into a pipe or a file is PIPED_HELP_WIDTH wide (rich would use its default), unless
  COLUMNS or TERMINAL_WIDTH says a width or a standard stream is a terminal.
"""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

PIPED_HELP_WIDTH = 120
"""The width of --help when no standard stream is a terminal and neither COLUMNS nor
TERMINAL_WIDTH is set (a terminal on any stream, as with `runlake --help | less`, gives its
own width)."""


def columns_set() -> bool:
    """Whether COLUMNS says how wide output is."""
    return os.environ.get("COLUMNS", "").strip().isdigit()


class FlagOption(TyperOption):
    """An option whose help shows no type when it is a flag (a flag takes no value)."""

    def display_type_rich(self, ctx: Any) -> str | None:
        if self.is_flag and not self.count:
            return None
        return super().display_type_rich(ctx)


class UsageArgument(TyperArgument):
    """An argument written in the usage line as click writes it."""

    def _usage_display_name(self) -> str:
        name = (self.metavar or self.name or "").upper()
        if self.nargs != 1 and not name.endswith("..."):
            name += "..."
        return name if self.required else f"[{name}]"


def runlake_params(params: list[Any]) -> list[Any]:
    """The command's own parameters, as the help above writes them (typer makes every option
    and argument of its own classes; these are those classes with the help's rules)."""
    for p in params:
        if type(p) is TyperOption:
            p.__class__ = FlagOption
        elif type(p) is TyperArgument:
            p.__class__ = UsageArgument
    return params


@contextmanager
def help_width() -> Iterator[None]:
    """While help is written: PIPED_HELP_WIDTH wide when nothing says a width; as before
    afterwards."""
    from typer import rich_utils

    if columns_set() or os.environ.get("TERMINAL_WIDTH") \
            or any(os.isatty(fd) for fd in (0, 1, 2)):
        yield
        return
    before = rich_utils.MAX_WIDTH
    rich_utils.MAX_WIDTH = PIPED_HELP_WIDTH
    try:
        yield
    finally:
        rich_utils.MAX_WIDTH = before


class RunlakeHelp:
    """The help rules above, for a command or a group (before typer's class in its bases)."""

    def get_params(self, ctx: Any) -> list[Any]:
        return runlake_params(super().get_params(ctx))  # type: ignore[misc]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        with help_width():
            super().format_help(ctx, formatter)  # type: ignore[misc]


class RunlakeCommand(RunlakeHelp, TyperCommand):
    """A `runlake` command: its help by the rules above."""


class RunlakeGroup(RunlakeHelp, TyperGroup):
    """The `runlake` group: its help by the rules above."""


class RunlakeTyper(typer.Typer):
    """A Typer app whose commands are RunlakeCommands unless a command names its own class."""

    def command(self, name: str | None = None, *, cls: type[TyperCommand] | None = None,
                **kwargs: Any) -> Any:
        return super().command(name, cls=cls or RunlakeCommand, **kwargs)
