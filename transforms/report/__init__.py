"""The nightly report: one self-contained HTML page of what got worse on a day and why.

`write_report(home, day, baseline_days)` reads the warehouse (read-only) and writes
`home/reports/nightly-<day>.html`: significant regressions first, then flipped test cases with
their transcripts, pass rate per agent and model with its Wilson band, token and runtime
trends, tool share changes and flags by code. Charts are inline SVG; the page has no script and
loads nothing from the network.

- `queries`: everything read from the warehouse, in one go;
- `charts`: the charts' geometry (the SVG itself is drawn in the templates);
- `page`: the page rendered from `transforms/templates/report/` by Jinja2 with autoescaping on,
  so every string that came from a trace is written as text;
- `summary`: what the page says, for the CLI and Dagster;
- `nightly`: the verdict; `nightly_ci`: the verdict for CI; `webhook`: the alert.

Figures and text, the rows read and the CI formats come from transforms.verdict, which
`runlake compare` shares.
"""

from transforms.report.page import MAX_MESSAGE_CHARS, render, write_report
from transforms.report.queries import MAX_FLIPS, ReportData
from transforms.report.summary import ReportSummary
from transforms.verdict.formatting import esc

__all__ = ["MAX_FLIPS", "MAX_MESSAGE_CHARS", "ReportData", "ReportSummary", "esc", "render",
           "write_report"]
