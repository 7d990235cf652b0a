"""`runlake report`: the nightly page, what regressed, and the CI exit code."""

from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from transforms.cli.app import (
    HomeOpt,
    app,
    counted,
    err,
    fail,
    load_settings,
    out,
    printable,
    resolve_home,
)


@app.command("report")
def report_cmd(
    day: Annotated[str | None, typer.Option(help="The night to report, YYYY-MM-DD "
                                            "[default: the latest day with runs]")] = None,
    baseline_days: Annotated[int, typer.Option(help="Days before --day to compare "
                                               "with.")] = 7,
    fail_on_regression: Annotated[bool, typer.Option(
        "--fail-on-regression", help="Exit with code 3 when an agent and model crashed "
        "significantly, went missing, lost pass rate or a score, or a regular test case is "
        "missing (for CI gates).")] = False,
    fail_on_crash: Annotated[bool, typer.Option(
        "--fail-on-crash", help="Exit with code 3 when any run of the day crashed (status "
        "error), significant or not: the stricter gate for teams that want no crash at "
        "all.")] = False,
    junit: Annotated[Path | None, typer.Option(help="Write JUnit XML here (a testsuite per "
                                               "agent and model).")] = None,
    markdown: Annotated[Path | None, typer.Option(help="Write a Markdown summary here "
                                                  "[default: append to $GITHUB_STEP_SUMMARY "
                                                  "when set].")] = None,
    page: Annotated[Path | None, typer.Option(
        "--out", help="Write the page here (by default reports/nightly-DAY.html in the home, "
        "or runlake's cache folder where the home cannot be written).")] = None,
    home: HomeOpt = None,
) -> None:
    """Write the nightly HTML report (reports/nightly-DAY.html) and print what regressed.
    With RUNLAKE_WEBHOOK_URL set, a JSON summary is posted there when anything regressed;
    --junit and --markdown write the verdict for CI (and with GITHUB_ACTIONS=true, each
    regression is an ::error:: annotation)."""
    from transforms.report import nightly_ci, write_report
    from transforms.report.webhook import NotifyError, notify
    from transforms.verdict import ci_outputs
    from transforms.verdict.ci_outputs import EXIT_REGRESSED

    if not 1 <= baseline_days <= 366:
        fail(f"--baseline-days {baseline_days} must be between 1 and 366", 2)
    when: date | None = None
    if day is not None:
        try:
            when = date.fromisoformat(day)
        except ValueError:
            fail(f"--day {day!r} is not a date like 2026-11-20", 2)
    config = load_settings()
    summary = write_report(resolve_home(home), when, baseline_days, out=page)
    v = summary.verdict
    say = lambda text: out.print(printable(text), highlight=False, markup=False)  # noqa: E731
    say(f"{v.latest_day}: {counted(summary.n_runs_latest, 'run')} against {v.baseline_span()}")
    for r in v.regressed:
        say(f"  REGRESSION {r.line()}")
        if r.changes_line() is not None:
            say(f"    {r.changes_line()}")
    for line in v.crashed_lines():
        say(f"  CRASHED {line}")
    for (agent, model), cases in v.missing_by_pair().items():
        names = ", ".join(c["test_case_id"] for c in cases[:10])
        more = f" and {len(cases) - 10} more" if len(cases) > 10 else ""
        say(f"  MISSING {agent} / {model}: {len(cases)} test case"
            f"{'' if len(cases) == 1 else 's'} not run ({names}{more})")
    for p in v.insufficient:
        say(f"  NOT ENOUGH EVIDENCE {p.evidence_line()}")
    if v.all_clear:
        say("  no regression: no pair crashed significantly, went missing, lost pass rate or "
            "a score")
    say(f"  {summary.cases_line()}")
    if summary.future_line() is not None:
        err.print(f"warning: {printable(summary.future_line() or '')}", highlight=False,
                  markup=False)
    if summary.note is not None:
        err.print(f"warning: {printable(summary.note)}", highlight=False, markup=False)
    say(f"report: {summary.path.resolve()}")
    if config.webhook_url and not v.all_clear:
        try:
            notify(v.payload(str(summary.path.resolve())), config.webhook_url)
            say("webhook: summary sent")
        except NotifyError as e:
            err.print(f"warning: {printable(str(e))}", highlight=False, markup=False)
    if junit is not None:
        ci_outputs.write_junit(junit, nightly_ci.suites(v, fail_on_crash),
                       f"runlake report {v.latest_day}")
        err.print(f"junit: {printable(str(junit))}", highlight=False, markup=False)
    for written in ci_outputs.write_markdown(nightly_ci.markdown(summary), markdown):
        err.print(f"markdown: {printable(str(written))}", highlight=False, markup=False)
    ci_outputs.annotate(*nightly_ci.annotations(v), title="runlake report")
    if fail_on_regression and not v.all_clear:
        raise typer.Exit(EXIT_REGRESSED)
    if fail_on_crash and v.crashed_runs:
        n = len(v.crashed_runs)
        err.print(f"failing: {n} run{'' if n == 1 else 's'} crashed on {v.latest_day} "
                  "(--fail-on-crash)", highlight=False, markup=False)
        raise typer.Exit(EXIT_REGRESSED)

