"""The `runlake` command: ingest, sql, views, history, doctor, publish, report, import, schema,
validate.

Every command runs the same functions as the Dagster assets; errors in the input or the query
are printed as one clear message with a non-zero exit, never as a traceback (cli.app). One module
per group of commands: ingest, query (sql, views), report, upkeep (history, doctor), formats
(import, schema, validate).
"""

import sys

import transforms.cli.serve  # noqa: F401 (runlake serve)
from transforms.cli import formats, ingest, query, report, upkeep  # noqa: F401 (their commands)
from transforms.cli.app import KindChoice, OutputFormat, app, err

__all__ = ["KindChoice", "OutputFormat", "app", "main"]


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)

