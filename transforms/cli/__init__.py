"""The `runlake` command: ingest, sql, views, history, doctor, publish, report, compare, serve,
import, schema, validate.

Every command runs the same functions as the Dagster assets; errors in the input or the query
are printed as one clear message with a non-zero exit, never as a traceback (cli.app). One module
per group of commands: ingest, query (sql, views), report, compare, upkeep (history, doctor),
formats (import, schema, validate), serve (the OTLP receiver); app holds what they share, and
help_text how their --help looks. Ctrl-C is told in one line by transforms.command, the
executable.
"""

from transforms.cli import (  # noqa: F401 (their commands)
    compare,
    formats,
    ingest,
    query,
    report,
    serve,
    upkeep,
)
from transforms.cli.app import KindChoice, OutputFormat, app

__all__ = ["KindChoice", "OutputFormat", "app", "main"]


def main() -> None:
    """Run the command line."""
    app()

