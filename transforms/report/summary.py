"""What the report says, for callers that print or publish it (CLI, Dagster metadata)."""

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from transforms.report.nightly import Verdict
from transforms.verdict.formatting import md, p_value, pct
from transforms.verdict.verdict_row import REASON_WORDS


@dataclass
class ReportSummary:
    """What the page says, for callers that print or publish it (CLI, Dagster metadata)."""

    path: Path
    verdict: Verdict
    n_runs_latest: int
    n_flips: int = 0
    n_pass_to_fail: int = 0
    n_surprising: int = 0
    """Test cases whose failure on the day is surprising given their history
    (surprise_p < 0.05)."""
    future_runs: list[tuple[date, int]] = field(default_factory=list)
    """Days after today (UTC) that runs are dated on, and how many (a wrong clock)."""
    note: str | None = None
    """Where the page went instead of the home's reports folder, and why (a read-only home)."""

    def future_line(self) -> str | None:
        """The runs dated after today (UTC), named by day, in one line (None: none)."""
        if not self.future_runs:
            return None
        n = sum(k for _, k in self.future_runs)
        days = ", ".join(f"{d} ({k} run{'' if k == 1 else 's'})" for d, k in self.future_runs[:5])
        more = f" and {len(self.future_runs) - 5} more days" if len(self.future_runs) > 5 else ""
        return (f"{n} run{' is' if n == 1 else 's are'} dated after today (UTC), so never the "
                f"night reported by default: {days}{more} (check the clock of what ran them)")

    def cases_line(self) -> str:
        """How many test cases changed, in one plain line."""
        return (f"{self.n_pass_to_fail} test case{'' if self.n_pass_to_fail == 1 else 's'} "
                f"pass -> fail, {self.n_surprising} failure"
                f"{'' if self.n_surprising == 1 else 's'} surprising given the case's history "
                "(p < 0.05)")

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
        lines = [f"**{v.latest_day}** against {v.baseline_span()}, "
                 f"{self.n_runs_latest} runs: {md(v.headline(), 2000)} "
                 f"{md(v.crash_sentence(), 2000)} {md(self.cases_line(), 2000)}."]
        if v.regressed:
            lines += ["", "| agent | model | why | runs | error rate | pass rate | q-value |",
                      "|---|---|---|---:|---:|---:|---:|"]
            for r in v.regressed:
                row = r.row
                lines.append(
                    f"| {md(r.agent)} | {md(r.model)} | "
                    f"{', '.join(REASON_WORDS[x] for x in r.reasons)} | "
                    f"{row['runs_baseline']} → {row['runs_latest']} | "
                    f"{pct(row['error_rate_baseline'])} → {pct(row['error_rate_latest'])} | "
                    f"{pct(row['baseline_pass_rate'])} → {pct(row['latest_pass_rate'])} | "
                    f"{p_value(row['q_value'])} |")
            lines += [""] + [f"- {md(r.line(), 2000)}"
                             + (f"; {md(r.changes_line() or '', 2000)}" if r.changes else "")
                             for r in v.regressed]
        if v.crashed_runs:
            lines += ["", "Crashed runs: " + "; ".join(md(x) for x in v.crashed_lines())]
        if v.insufficient:
            lines += ["", "Not enough evidence: " + "; ".join(
                md(p.evidence_line(), 2000) for p in v.insufficient)]
        if v.missing_cases:
            lines += ["", "Missing test cases: " + "; ".join(
                f"{md(a)} / {md(m)}: " + ", ".join(md(c["test_case_id"]) for c in cs[:20])
                + (f" and {len(cs) - 20} more" if len(cs) > 20 else "")
                for (a, m), cs in v.missing_by_pair().items())]
        return "\n".join(lines)
