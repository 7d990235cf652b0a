"""Everything the nightly report reads from the warehouse, read in one go (read-only).

`read(home, day, baseline_days)` returns a `ReportData` of plain rows: the verdict (with the
day's crashed runs), the test cases that changed with their histories, pass^k, the runs the
page shows (facts, messages, tool calls), the daily series behind the charts, the tool share
changes and the flags. Each section is one query, whatever the number of pairs, cases or runs
it shows: the runs are read together by their ids. The page is then built from these rows
alone, after the connection is closed.
"""

from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from transforms import warehouse
from transforms.errors import InputError
from transforms.report import nightly
from transforms.report.nightly import Verdict
from transforms.verdict.reading import RunDetail, rows, run_details

MAX_FLIPS = 30
"""Changed test cases shown with their runs; the rest are listed."""

MAX_CRASHES = 50
"""Crashed runs shown with their transcripts; the rest are listed."""

SURPRISE_LEVEL = 0.05
"""A case's failure on the latest night is surprising when its surprise_p is below this."""

Row = dict[str, Any]

CHANGED = ("SELECT history.*, flips.direction, flips.baseline_run_id, "
           "history.surprise_p < ? AND history.latest_passed < history.latest_graded "
           "AS surprising "
           "FROM case_history(?, ?) AS history LEFT JOIN test_case_flips(?, ?) AS flips "
           "USING (agent, model, test_case_id) "
           "WHERE (history.surprise_p < ? AND history.latest_passed < history.latest_graded) "
           "OR flips.direction IS NOT NULL "
           "ORDER BY flips.direction = 'fail_to_pass', history.surprise_p, history.agent, "
           "history.model, history.test_case_id")

DAILY = ("SELECT rates.*, tokens.tokens_per_run_avg, tokens.cost_usd_per_run, "
         "runtime.agent_runtime_ms_p95 FROM v_pass_rates AS rates "
         "LEFT JOIN v_token_usage AS tokens USING (day, agent, model) "
         "LEFT JOIN v_runtime AS runtime USING (day, agent, model) "
         "WHERE rates.day BETWEEN ? AND ? ORDER BY rates.day")

PASS_HAT_K = ("SELECT agent, model, k, n_cases, pass_at_k, pass_hat_k FROM v_pass_at_k "
              "WHERE day = ? AND k > 1 QUALIFY k = max(k) OVER (PARTITION BY agent, model)")

FLAGS_BY_CODE = ("SELECT code, any_value(severity) AS severity, "
                 "sum(n_findings) FILTER (WHERE day < ?) AS baseline, "
                 "sum(n_findings) FILTER (WHERE day = ?) AS latest "
                 "FROM v_flag_summary WHERE day BETWEEN ? AND ? GROUP BY code "
                 "ORDER BY latest DESC NULLS LAST, code")


@dataclass
class ReportData:
    """What the page is built from."""

    latest: date
    baseline_days: int
    verdict: Verdict
    n_runs_latest: int
    warehouse_name: str
    changed: list[Row]
    """Test cases that changed on the latest day (case_history rows with the flip's direction):
    surprising failures and pass → fail flips by surprise_p, then fail → pass flips."""
    days: list[date]
    """Days with runs from the baseline's start to the latest day."""
    rates: list[Row]
    tokens: list[Row]
    cost: list[Row]
    runtime: list[Row]
    shares: list[Row]
    flags: list[Row]
    pass_hat_k: dict[tuple[str, str], Row] = field(default_factory=dict)
    """pass^k at the largest k of each pair whose cases ran more than once on the latest day."""
    future_runs: list[Row] = field(default_factory=list)
    """Days after today (UTC) that runs are dated on, with their run counts (a wrong clock):
    never the default latest day."""
    runs: dict[str, RunDetail | None] = field(default_factory=dict)
    """The runs the page shows (changed cases, crashed runs) by run id; None when no longer
    in the warehouse."""

    @property
    def start(self) -> date:
        return self.verdict.baseline_start

    @property
    def end(self) -> date:
        return self.verdict.baseline_end

    @property
    def n_pass_to_fail(self) -> int:
        return sum(c["direction"] == "pass_to_fail" for c in self.changed)

    @property
    def n_surprising(self) -> int:
        return sum(bool(c["surprising"]) for c in self.changed)


def read(home: Path | str, day: date | None, baseline_days: int) -> ReportData:
    """Read the report's rows for `day` (default: the latest day with runs)."""
    if baseline_days < 1:
        raise InputError("--baseline-days must be at least 1")
    con = warehouse.connect(home)
    try:
        # The latest real night: a day after today (UTC) is a wrong clock, never the default.
        today = datetime.now(UTC).date()
        future = rows(con, "SELECT day, count(*) AS n_runs FROM runs WHERE day > ? "
                            "GROUP BY day ORDER BY day", [today])
        latest = day or con.execute("SELECT max(day) FROM runs WHERE day <= ?",
                                    [today]).fetchone()[0]  # type: ignore[index]
        if latest is None:
            raise InputError("the warehouse has no runs yet: run `runlake ingest PATH` first")
        params = [latest, baseline_days]
        counts = con.execute(
            "SELECT count(*) FILTER (WHERE day = ?), count(*) FROM runs WHERE day BETWEEN "
            "?::DATE - ?::INTEGER AND ?", [latest, latest, baseline_days, latest]).fetchone()
        n_latest, n_window = counts if counts else (0, 0)
        # A night on which nothing ran is reported (every pair missing) when its baseline ran.
        if not n_window:
            raise InputError(f"no runs on {latest}; days with runs: " + ", ".join(
                str(r[0]) for r in con.execute(
                    "SELECT DISTINCT day FROM runs ORDER BY 1 DESC LIMIT 10").fetchall()))
        verdict = nightly.read(con, latest, baseline_days)
        start = verdict.baseline_start
        window = [start, latest]
        daily = rows(con, DAILY, window)
        data = ReportData(
            latest=latest, baseline_days=baseline_days, verdict=verdict,
            n_runs_latest=int(n_latest),
            warehouse_name=warehouse.path(home).name,
            changed=rows(con, CHANGED, [SURPRISE_LEVEL, *params, *params, SURPRISE_LEVEL]),
            days=sorted({r["day"] for r in daily}),
            rates=daily,
            tokens=[{**r, "v": r["tokens_per_run_avg"]} for r in daily],
            cost=[{**r, "v": r["cost_usd_per_run"]} for r in daily],
            runtime=[{**r, "v": r["agent_runtime_ms_p95"]} for r in daily],
            shares=rows(con, "SELECT * FROM tool_share_changes(?, ?) WHERE share_delta IS "
                              "NOT NULL ORDER BY abs(share_delta) DESC, agent, model, "
                              "tool_name LIMIT 15", params),
            flags=rows(con, FLAGS_BY_CODE, [latest, latest, start, latest]),
            pass_hat_k={(r["agent"], r["model"]): r
                        for r in rows(con, PASS_HAT_K, [latest])},
            future_runs=future)
        wanted: list[str | None] = []
        for c in data.changed[:MAX_FLIPS]:
            wanted += [c["latest_run_id"], shown_beside(c)]
        wanted += [r["run_id"] for r in verdict.crashed_runs[:MAX_CRASHES]]
        data.runs = run_details(con, [r for r in dict.fromkeys(wanted) if r is not None])
    finally:
        con.close()
    return data


def shown_beside(case: Row) -> str | None:
    """The run shown beside a changed case's latest run: the last passing run of the window
    for a failure, the baseline's last run for a fail → pass flip."""
    if case["direction"] == "fail_to_pass":
        return case["baseline_run_id"]
    if case["last_passed_run_id"] == case["latest_run_id"]:
        return case["baseline_run_id"]
    return case["last_passed_run_id"]
