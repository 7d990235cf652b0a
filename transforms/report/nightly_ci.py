"""The nightly verdict for CI (transforms.verdict.ci_outputs writes it): a JUnit testsuite per
agent × model pair with its checks (pass rate, error rate, missing, and each missing test case),
the Markdown summary and the GitHub annotations of `runlake report --junit/--markdown`."""

from transforms.report.nightly import Verdict
from transforms.report.summary import ReportSummary
from transforms.verdict.ci_outputs import FAILURE, PASSED, SKIPPED, Check, Suite
from transforms.verdict.formatting import pct


def suites(v: Verdict, fail_on_crash: bool = False) -> list[Suite]:
    """One suite per pair of the verdict: a regression is a failure whose message is the CLI's
    line; insufficient evidence is a skipped pass-rate check; a missing test case a failure
    (it fails `--fail-on-regression` too). With `fail_on_crash` (`--fail-on-crash`), a pair
    with a crashed run on the day has a failed `crashed runs` check, so that the job's red is
    explained however the crashes compare with the baseline."""
    missing = v.missing_by_pair()
    crashed = dict(zip(v.crashed_by_pair(), v.crashed_lines(), strict=True))
    out = []
    for p in v.pairs:
        name = f"{p.agent} / {p.model}"
        line = p.line()
        rate = Check("pass rate")
        if "pass_rate" in p.reasons:
            rate = Check("pass rate", FAILURE, f"REGRESSION {line}")
        elif p.verdict == "insufficient_evidence":
            rate = Check("pass rate", SKIPPED, f"NOT ENOUGH EVIDENCE {p.evidence_line()}")
        else:
            rate.message = f"{p.verdict}: pass rate {pct(p.row['baseline_pass_rate'])} -> " \
                           f"{pct(p.row['latest_pass_rate'])}"
        checks = [rate,
                  Check("error rate", FAILURE, f"REGRESSION {line}") if "error_rate" in p.reasons
                  else Check("error rate", PASSED),
                  Check("missing", FAILURE, f"REGRESSION {line}") if "missing" in p.reasons
                  else Check("missing", PASSED),
                  Check("scores", FAILURE, f"REGRESSION {line}") if "scores" in p.reasons
                  else Check("scores", PASSED)]
        if p.regressed and p.changes_line() is not None:
            for check in checks:
                if check.outcome == FAILURE:
                    check.detail = f"{check.message}\n{p.changes_line()}"
        if fail_on_crash:
            line_ = crashed.get((p.agent, p.model))
            checks.append(Check("crashed runs", FAILURE, f"CRASHED {line_}") if line_
                          else Check("crashed runs", PASSED))
        for c in missing.get((p.agent, p.model), []):
            checks.append(Check(f"missing test case {c['test_case_id']}", FAILURE,
                                f"MISSING {name}: test case {c['test_case_id']} not run on "
                                f"{v.latest_day} (ran {c['baseline_runs']} times in the "
                                f"baseline, last on {c['last_seen_day']})"))
        out.append(Suite(name, checks, {"verdict": p.verdict,
                                        "latest_day": str(v.latest_day)}))
    return out


def markdown(summary: ReportSummary) -> str:
    return "### runlake report\n\n" + summary.markdown()


def annotations(v: Verdict) -> tuple[list[str], list[str]]:
    """(errors, warnings): each regression and each pair's missing test cases, then the
    pairs without enough evidence, the drops worth a warning and the crashed runs."""
    errors = [f"REGRESSION {r.line()}" + (f"; {r.changes_line()}" if r.changes else "")
              for r in v.regressed]
    for (agent, model), cases in v.missing_by_pair().items():
        errors.append(f"MISSING {agent} / {model}: {len(cases)} test case"
                      f"{'' if len(cases) == 1 else 's'} not run ("
                      + ", ".join(c["test_case_id"] for c in cases[:10])
                      + (f" and {len(cases) - 10} more" if len(cases) > 10 else "") + ")")
    warnings = [f"NOT ENOUGH EVIDENCE {p.evidence_line()}" for p in v.insufficient]
    warnings += [f"pass rate fell (q = {p.row['q_value']:.2g}, not below the significance "
                 f"level) {p.agent} / {p.model}" for p in v.suggestive_drops()]
    crashed = {(r.agent, r.model) for r in v.by_reason("error_rate")}
    warnings += [f"CRASHED {line}" for (pair, line) in zip(v.crashed_by_pair(),
                                                          v.crashed_lines(), strict=True)
                 if pair not in crashed]
    return errors, warnings

