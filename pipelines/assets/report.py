"""The nightly report as a Dagster asset, with the no_regression check.

`no_regression` is a blocking check: when it fails at ERROR the report is still written and
recorded, and then the step fails, so the run shows as failed in the runs list (a WARN, a
pass-rate drop below the warning level only, leaves the run green). The asset and its check
are partitioned by landing day, like the lake tables: the UI plots their figures against the
day reported on."""

import dagster as dg

from pipelines.assets.lake import PARTITIONS, day_check_spec, partition_day, warehouse_views
from pipelines.resources import RunlakeResource
from transforms.report import write_report
from transforms.report.webhook import NotifyError, notify
from transforms.verdict.verdict_row import (
    REASON_WORDS,
    REASONS,
    significance_level,
    warning_level,
)


@dg.asset(
    deps=[warehouse_views], group_name="warehouse", partitions_def=PARTITIONS,
    check_specs=[day_check_spec(
        "no_regression", "nightly_report",
        description="Nothing got worse on the latest day against the 7 days before: ERROR when "
                    "an agent and model crashed (error rate rose, one-sided Fisher exact test "
                    f"p < {significance_level():g}), went missing (baseline runs, none on the "
                    "day), lost pass rate (on the same test cases, Benjamini-Hochberg q < "
                    f"{significance_level():g} over the night's pairs) or a named score "
                    "(Wilcoxon signed-rank, q < the same level over the night's scores), or a "
                    "regular test case did not run; WARN when a pass-rate drop has q < "
                    f"{warning_level():g} only or "
                    "a run crashed without a significant rise. ERROR fails the run.",
        blocking=True)],
)
def nightly_report(context: dg.AssetExecutionContext, runlake: RunlakeResource):  # type: ignore[no-untyped-def]
    """reports/nightly-DAY.html for the run's day (its partition): the report's figures and its
    check are recorded on that day's partition."""
    s = runlake.settings()
    summary = write_report(s.home, partition_day(context.partition_key))
    v = summary.verdict
    by_reason = {reason: v.by_reason(reason) for reason in REASONS}
    yield dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(str(summary.path.resolve())),
        "url": dg.MetadataValue.url(summary.path.resolve().as_uri()),
        "summary": dg.MetadataValue.md(summary.markdown()),
        "latest_day": summary.latest_day.isoformat(),
        "regressed_pairs": len(v.regressed),
        "significant_regressions": len(by_reason["pass_rate"]),
        "missing_test_cases": len(v.missing_cases),
        "pass_to_fail_cases": summary.n_pass_to_fail,
        "surprising_failures": summary.n_surprising,
        "crashed_runs": len(v.crashed_runs),
        "insufficient_evidence_pairs": len(v.insufficient),
    })
    if s.webhook_url and not v.all_clear:
        try:
            notify(v.payload(str(summary.path.resolve())), s.webhook_url)
        except NotifyError as e:
            context.log.warning(str(e))
    # Pass-rate drops that are suggestive but not significant, and crashes below significance:
    # a warning, never an error.
    drops = v.suggestive_drops()
    crashes = v.crashed_lines()
    kinds = [f"{len(hit)} {REASON_WORDS[reason]}" for reason, hit in by_reason.items() if hit]
    if v.missing_cases:
        kinds.append(f"{len(v.missing_cases)} missing test cases")
    yield dg.AssetCheckResult(
        check_name="no_regression", passed=v.all_clear and not drops and not crashes,
        severity=dg.AssetCheckSeverity.ERROR if not v.all_clear else
        dg.AssetCheckSeverity.WARN,
        description=(v.headline() if not v.all_clear else
                     f"nothing regressed; {len(drops)} pass-rate drops with q < "
                     f"{warning_level():g}; {len(v.crashed_runs)} crashed "
                     f"run{'' if len(v.crashed_runs) == 1 else 's'}"),
        metadata={
            "latest_day": summary.latest_day.isoformat(),
            "failed_on": ", ".join(kinds) or "nothing",
            "crashed": "\n".join(p.line() for p in by_reason["error_rate"]) or "none",
            "crashed_runs": "\n".join(crashes) or "none",
            "missing": "\n".join(p.line() for p in by_reason["missing"]) or "none",
            "pass_rate": "\n".join(p.line() for p in by_reason["pass_rate"]) or "none",
            "scores": "\n".join(p.line() for p in by_reason["scores"]) or "none",
            "what_changed": "\n".join(f"{p.agent} / {p.model}: {p.changes_line()}"
                                       for p in v.regressed if p.changes) or "none",
            "missing_test_cases": "\n".join(
                f"{c['agent']} / {c['model']}: {c['test_case_id']} (last {c['last_seen_day']})"
                for c in v.missing_cases[:50]) or "none",
            "n_crashed": len(by_reason["error_rate"]),
            "n_missing": len(by_reason["missing"]),
            "n_pass_rate": len(by_reason["pass_rate"]),
            "n_scores": len(by_reason["scores"]),
            "n_missing_test_cases": len(v.missing_cases),
            "suggestive_drops": len(drops),
            # Levels as text: constants, not figures to plot.
            "warning_level": f"{warning_level():g}",
            "significance_level": f"{significance_level():g}",
        })
