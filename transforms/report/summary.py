"""What the report says, for callers that print or publish it (CLI, Dagster metadata)."""

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from transforms.report import nightly
from transforms.report.fmt import md, p_value, pct
from transforms.report.nightly import Verdict


@dataclass
class ReportSummary:
    """What the page says, for callers that print or publish it (CLI, Dagster metadata)."""

    path: Path
    verdict: Verdict
    n_runs_latest: int
    n_flips: int = 0
    n_pass_to_fail: int = 0
    n_flaky: int = 0

    @property
    def latest_day(self) -> date:
        return self.verdict.latest_day

    @property
    def baseline_start(self) -> date:
        return self.verdict.baseline_start

    @property
    def baseline_end(self) -> date:
        return self.verdict.baseline_end

    def markdown(self) -> str:
        v = self.verdict
        lines = [f"**{v.latest_day}** against {v.baseline_start} to {v.baseline_end}, "
                 f"{self.n_runs_latest} runs: {md(v.headline(), 2000)} "
                 f"{self.n_pass_to_fail} test cases pass → fail ({self.n_flaky} flaky cases "
                 "apart)."]
        if v.regressed:
            lines += ["", "| agent | model | why | runs | error rate | pass rate | p-value |",
                      "|---|---|---|---:|---:|---:|---:|"]
            for r in v.regressed:
                row = r.row
                lines.append(
                    f"| {md(r.agent)} | {md(r.model)} | "
                    f"{', '.join(nightly.REASON_WORDS[x] for x in r.reasons)} | "
                    f"{row['runs_baseline']} → {row['runs_latest']} | "
                    f"{pct(row['error_rate_baseline'])} → {pct(row['error_rate_latest'])} | "
                    f"{pct(row['baseline_pass_rate'])} → {pct(row['latest_pass_rate'])} | "
                    f"{p_value(row['p_value'])} |")
        if v.missing_cases:
            lines += ["", "Missing test cases: " + "; ".join(
                f"{md(a)} / {md(m)}: " + ", ".join(md(c["test_case_id"]) for c in cs[:20])
                + (f" and {len(cs) - 20} more" if len(cs) > 20 else "")
                for (a, m), cs in v.missing_by_pair().items())]
        return "\n".join(lines)
