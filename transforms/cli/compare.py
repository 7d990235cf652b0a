"""`runlake compare`: two sets of runs compared case by case, and the verdict for CI."""

import json
import sys
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from transforms.cli.app import HomeOpt, app, err, fail, one_line, out, printable, resolve_home


class By(StrEnum):
    agent = "agent"
    model = "model"
    agent_model = "agent,model"
    none = "none"


class CompareFormat(StrEnum):
    text = "text"
    json = "json"


@app.command("compare")
def compare_cmd(
    baseline: Annotated[str, typer.Option(help="SQL predicate over runs choosing the baseline, "
                                          "e.g. \"model = 'gpt-4o'\".")],
    candidate: Annotated[str, typer.Option(help="SQL predicate over runs choosing the "
                                           "candidate, e.g. \"batch_id = 'pr-812'\".")],
    by: Annotated[By, typer.Option(help="Compare per agent, model, both, or all runs as one "
                                   "group.")] = By.agent,
    fmt: Annotated[CompareFormat, typer.Option("--format", help="text, or json: one object "
                                               "per group.")] = CompareFormat.text,
    junit: Annotated[Path | None, typer.Option(help="Write JUnit XML here (a testsuite per "
                                               "group).")] = None,
    markdown: Annotated[Path | None, typer.Option(help="Write a Markdown summary here "
                                                  "[default: append to $GITHUB_STEP_SUMMARY "
                                                  "when set].")] = None,
    html: Annotated[Path | None, typer.Option(help="Write an HTML comparison page here.")
                    ] = None,
    fail_on_crash: Annotated[bool, typer.Option(
        "--fail-on-crash", help="Exit with code 3 when any candidate run crashed (status "
        "error), significant or not.")] = False,
    home: HomeOpt = None,
) -> None:
    """Compare a candidate's runs with a baseline's on the same test cases (CMH test,
    Benjamini–Hochberg q-values, mde and a verdict per group). Exits with code 3 when any
    group regressed."""
    import duckdb

    from transforms import db, warehouse
    from transforms.compare import compare, comparison_ci
    from transforms.lake.store import locate
    from transforms.verdict import ci_outputs
    from transforms.verdict.ci_outputs import EXIT_REGRESSED

    h = resolve_home(home)
    store = locate(h).lake()
    lake: Path | str = store.url() if store.remote else store.path()
    with db.private_temp() as temp:
        con = warehouse.connect(h, temp)
        try:
            # The same sandbox as `runlake sql`: the lake's files readable, nothing written.
            db.sandbox(con, [lake], temp)
            result = compare(con, baseline, candidate, by.value, details=html is not None)
        except duckdb.Error as e:
            fail(f"compare failed: {one_line(str(e))}")
        finally:
            con.close()
    say = lambda text: out.print(printable(text), highlight=False, markup=False)  # noqa: E731
    if fmt == CompareFormat.json:
        sys.stdout.write(json.dumps([g.json() for g in result.groups], indent=2,
                                    default=str) + "\n")
        sys.stdout.flush()
    else:
        say(f"baseline {baseline} ({result.n_baseline_runs} runs) against candidate "
            f"{candidate} ({result.n_candidate_runs} runs)"
            + (f", by {', '.join(result.by)}" if result.by else ""))
        for g in result.groups:
            say(f"  {g.line()}")
            if g.regressed and g.changes_line() is not None:
                say(f"    {g.changes_line()}")
        for label, rs in result.one_sided_by_group().items():
            shown = ", ".join(f"{r['test_case_id'] or '(no test case)'} ({r['side']}, "
                              f"{r['n_runs']} run{'' if r['n_runs'] == 1 else 's'})"
                              for r in rs[:10])
            say(f"  ONE SIDE ONLY, not counted, {label}: {shown}"
                + (f" and {len(rs) - 10} more" if len(rs) > 10 else ""))
        say(f"  {result.headline()}")
    if junit is not None:
        ci_outputs.write_junit(junit, comparison_ci.suites(result), "runlake compare")
        err.print(f"junit: {printable(str(junit))}", highlight=False, markup=False)
    for written in ci_outputs.write_markdown(comparison_ci.markdown(result), markdown):
        err.print(f"markdown: {printable(str(written))}", highlight=False, markup=False)
    ci_outputs.annotate(*comparison_ci.annotations(result), title="runlake compare")
    if html is not None:
        from transforms.compare.page import write_compare

        write_compare(result, html, datetime.now(UTC))
        err.print(f"html: {printable(str(html.resolve()))}", highlight=False, markup=False)
    if result.any_regressed:
        raise typer.Exit(EXIT_REGRESSED)
    crashed = result.n_candidate_errors
    if fail_on_crash and crashed:
        err.print(f"failing: {crashed} candidate run{'' if crashed == 1 else 's'} crashed "
                  "(--fail-on-crash)", highlight=False, markup=False)
        raise typer.Exit(EXIT_REGRESSED)
