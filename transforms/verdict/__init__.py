"""What the nightly report (transforms.report) and `runlake compare` (transforms.compare)
share to say a verdict:

- `verdict_row`: one group's verdict row (`VerdictRow`), the reasons a group regresses for
  and their words, the order of what changed, and the significance and warning levels (read
  from sql/macros on first use);
- `reading`: a query's rows as dicts (`rows`), and the runs shown beside a verdict
  (`RunDetail`, `run_details`);
- `formatting`: figures and text (percentages, p-values, money, score means, error lines,
  Markdown cells, HTML text);
- `ci_outputs`: the formats CI reads (JUnit XML, the Markdown summary, GitHub annotations) and
  the exit code of a verdict that fails a gate.

It imports neither the report nor compare.
"""
