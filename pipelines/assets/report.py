"""The nightly report as a Dagster asset, with the pass_rate_regression check."""

from datetime import date

import dagster as dg

from pipelines.assets.lake import warehouse_views
from pipelines.resources import RunlakeResource
from transforms.report import write_report


@dg.asset(
    deps=[warehouse_views], group_name="warehouse",
    check_specs=[dg.AssetCheckSpec(
        "pass_rate_regression", asset="nightly_report",
        description="No agent and model lost pass rate on the latest day against the 7 days "
                    "before: ERROR when a drop is significant (two-proportion z-test p < 0.01), "
                    "WARN when p < 0.05.")],
)
def nightly_report(context: dg.AssetExecutionContext, runlake: RunlakeResource):  # type: ignore[no-untyped-def]
    """reports/nightly-DAY.html for the run's day (its partition) or else the latest day."""
    s = runlake.settings()
    tags = context.run.tags if context.run else {}
    day = tags.get("dagster/partition")
    summary = write_report(s.home, date.fromisoformat(day) if day else None)
    drops = [r for r in summary.regressions
             if r.p_value is not None and r.p_value < 0.05
             and (r.latest_pass_rate or 0) < (r.baseline_pass_rate or 0)]
    significant = summary.significant
    yield dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(str(summary.path.resolve())),
        "url": dg.MetadataValue.url(summary.path.resolve().as_uri()),
        "summary": dg.MetadataValue.md(summary.markdown()),
        "latest_day": summary.latest_day.isoformat(),
        "significant_regressions": len(significant),
        "pass_to_fail_cases": summary.n_pass_to_fail,
        "flaky_cases": summary.n_flaky,
    })
    worst = drops[0] if drops else None
    yield dg.AssetCheckResult(
        check_name="pass_rate_regression", passed=not drops,
        severity=dg.AssetCheckSeverity.ERROR if significant else dg.AssetCheckSeverity.WARN,
        description=(f"{len(significant)} significant, {len(drops)} with p < 0.05"
                     + (f"; worst {worst.agent} / {worst.model}: "
                        f"{(worst.baseline_pass_rate or 0):.0%} -> "
                        f"{(worst.latest_pass_rate or 0):.0%}, p = {worst.p_value:.2g}"
                        if worst else "")),
        metadata={"latest_day": summary.latest_day.isoformat(),
                  "significant_regressions": len(significant), "drops_p_below_0_05": len(drops),
                  "limit_p_value": 0.01,
                  "worst": f"{worst.agent} / {worst.model}" if worst else "none",
                  "worst_p_value": float(worst.p_value) if worst and worst.p_value else 1.0})
