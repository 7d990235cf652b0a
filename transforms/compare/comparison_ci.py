"""A comparison for CI (transforms.verdict.ci_outputs writes it): a JUnit testsuite per group
with its checks (pass rate, error rate, missing, and each test case the candidate did not run),
the Markdown summary and the GitHub annotations of `runlake compare --junit/--markdown`."""

from transforms.compare import Comparison
from transforms.verdict.ci_outputs import FAILURE, PASSED, SKIPPED, Check, Suite
from transforms.verdict.formatting import md, p_short, pct, usd


def suites(c: Comparison) -> list[Suite]:
    """A regression is a failure whose message is the CLI's line; insufficient evidence a
    skipped pass-rate check; a test case run by the baseline only is a skipped check of its
    own (listed apart, never counted)."""
    out = []
    for g in c.groups:
        line = g.line()
        if "pass_rate" in g.reasons:
            rate = Check("pass rate", FAILURE, line)
        elif g.verdict == "insufficient_evidence":
            rate = Check("pass rate", SKIPPED, line)
        else:
            rate = Check("pass rate", PASSED, line)
        missing = c.missing_cases(g)
        checks = [rate,
                  Check("error rate", FAILURE, line) if "error_rate" in g.reasons
                  else Check("error rate", PASSED),
                  Check("missing", FAILURE, line) if "missing" in g.reasons
                  else Check("missing", SKIPPED if missing else PASSED,
                             f"{len(missing)} test case{'' if len(missing) == 1 else 's'} "
                             "run by the baseline only, not counted" if missing else ""),
                  Check("scores", FAILURE, line) if "scores" in g.reasons
                  else Check("scores", PASSED)]
        if g.regressed and g.changes_line() is not None:
            for check in checks:
                if check.outcome == FAILURE:
                    check.detail = f"{check.message}\n{g.changes_line()}"
        for m in missing:
            checks.append(Check(f"missing test case {m['test_case_id']}", SKIPPED,
                                f"{g.label}: test case {m['test_case_id']} ran "
                                f"{m['n_runs']} times in the baseline and not in the "
                                "candidate; not counted"))
        out.append(Suite(g.label, checks, {"verdict": g.verdict}))
    return out


def markdown(c: Comparison) -> str:
    lines = ["### runlake compare", "",
             f"baseline {_code(c.baseline)} against candidate {_code(c.candidate)}"
             f"{' by ' + ', '.join(c.by) if c.by else ''}: {md(c.headline(), 500)}.", "",
             "| group | verdict | pass rate | same cases | drop p | q | rise q | mde | flips "
             "(pass → fail / fail → pass) | cost per run |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for g in c.groups:
        r = g.row
        verdict = f"**{g.verdict}**" if g.regressed else g.verdict
        lines.append(
            f"| {md(g.label)} | {verdict} | {pct(r['baseline_pass_rate'])} → "
            f"{pct(r['candidate_pass_rate'])} | {r['n_strata']} | "
            f"{p_short(r['pass_rate_p_value'])} | {p_short(r['q_value'])} | "
            f"{p_short(r['rise_q_value'])} | "
            f"{pct(r['mde'])} | {r['n_pass_to_fail']} / {r['n_fail_to_pass']} | "
            f"{usd(r['baseline_cost_usd_per_run'])} → {usd(r['candidate_cost_usd_per_run'])} |")
    if c.regressed:
        lines += [""] + [f"- {md(g.line(), 2000)}"
                         + (f"; {md(g.changes_line() or '', 2000)}" if g.changes else "")
                         for g in c.regressed]
    if c.one_sided:
        lines += ["", "On one side only (not counted): " + "; ".join(
            f"{md(label)}: " + ", ".join(
                f"{md(r['test_case_id'] or '(no test case)')} ({r['side']}, {r['n_runs']})"
                for r in rs[:20]) + (f" and {len(rs) - 20} more" if len(rs) > 20 else "")
            for label, rs in c.one_sided_by_group().items())]
    return "\n".join(lines)


def annotations(c: Comparison) -> tuple[list[str], list[str]]:
    errors = [g.line() + (f"; {g.changes_line()}" if g.changes else "") for g in c.regressed]
    warnings = [g.line() for g in c.groups if g.verdict == "insufficient_evidence"]
    n = sum(r["n_runs"] for r in c.one_sided)
    if n:
        warnings.append(f"{n} run{'' if n == 1 else 's'} of test cases on one side only (or "
                        "without a test case) were not counted")
    return errors, warnings


def _code(text: str) -> str:
    """A predicate as a Markdown code span on one line (a backtick inside would end it)."""
    return "`" + " ".join(text.replace("`", "'").split())[:300] + "`"
