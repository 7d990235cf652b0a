"""The `runlake` executable: `transforms.cli.main`, imported only here, and the one place where
Ctrl-C becomes one line and exit status 130, never a traceback, at any moment: while the
command line still imports its libraries, or while a command runs (typer ends a command that
Ctrl-C interrupted by exiting; the interrupt it ended on is read from that exit's causes).
Code that must do something on Ctrl-C (`runlake sql` interrupts DuckDB's query) does it and
lets the interrupt go on to here."""

import sys

EXIT_INTERRUPTED = 130
"""128 and the number of SIGINT, as shells report a process Ctrl-C ended."""


def main() -> None:
    try:
        from transforms.cli import main as run

        run()
    except KeyboardInterrupt:
        interrupted()
    except SystemExit as e:
        if _ended_by_interrupt(e):
            interrupted()
        raise


def interrupted() -> None:
    """Say so in one line and exit with EXIT_INTERRUPTED."""
    sys.stderr.write("interrupted\n")
    sys.stderr.flush()
    raise SystemExit(EXIT_INTERRUPTED) from None


def _ended_by_interrupt(e: BaseException) -> bool:
    """Whether an exit was raised while Ctrl-C's KeyboardInterrupt was handled (or caused it)."""
    from transforms.errors import causes  # imported by the command line already

    return any(isinstance(x, KeyboardInterrupt) for x in causes(e))
