"""The `runlake` command: ingest, sql, views, history, doctor, publish, report, compare, import,
schema, validate.

Every command runs the same functions as the Dagster assets; errors in the input or the query
are printed as one clear message with a non-zero exit, never as a traceback (cli.app). One module
per group of commands: ingest, query (sql, views), report, compare, upkeep (history, doctor),
formats (import, schema, validate).
"""

import sys

from transforms.cli import compare, formats, ingest, query, report, upkeep  # noqa: F401 (commands)
from transforms.cli.app import KindChoice, OutputFormat, app, err

__all__ = ["KindChoice", "OutputFormat", "app", "main"]


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)

