"""Everything the nightly report reads from the warehouse, read in one go (read-only).

`read(home, day, baseline_days)` returns a `ReportData` of plain rows: the verdict, the
flipped and flaky test cases with the runs the page shows beside each flip (facts, messages,
tool calls), the daily series behind the charts, the tool share changes and the flags. The
page is then built from these rows alone, after the connection is closed.
"""

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import duckdb

from transforms import warehouse
from transforms.errors import InputError
from transforms.report import nightly
from transforms.report.nightly import Verdict

MAX_FLIPS = 30
"""Flipped test cases shown with their runs; the rest are counted."""

Row = dict[str, Any]

_rows = nightly.rows

RUN_FACTS = ("SELECT run_id, day, status, score, outcome_explanation, outcome_error, "
             "final_response, input_tokens, output_tokens, agent_runtime_ms "
             "FROM runs WHERE run_id = ?")

MESSAGES = ("SELECT message_index, role, name, text, chars, tool_call_id "
            "FROM messages WHERE run_id = ? AND source = 'response' "
            "ORDER BY message_index")

TOOL_CALLS = ("SELECT message_index, tool_name, coalesce(arguments, arguments_raw) "
              "AS arguments, arguments_valid, result_message_index FROM tool_calls "
              "WHERE run_id = ? AND source = 'response' ORDER BY message_index, "
              "call_index")

FLAGS_BY_CODE = ("SELECT code, any_value(severity) AS severity, "
                 "sum(n_findings) FILTER (WHERE day < ?) AS baseline, "
                 "sum(n_findings) FILTER (WHERE day = ?) AS latest "
                 "FROM v_flag_summary WHERE day BETWEEN ? AND ? GROUP BY code "
                 "ORDER BY latest DESC NULLS LAST, code")


@dataclass
class RunDetail:
    """One run beside a flip: its facts, its response messages and their tool calls."""

    facts: Row
    messages: list[Row]
    calls: dict[int, list[Row]]
    """Tool calls by the index of the message that made them."""


@dataclass
class ReportData:
    """What the page is built from."""

    latest: date
    baseline_days: int
    verdict: Verdict
    n_runs_latest: int
    warehouse_name: str
    flips: list[Row]
    """Every flip: pass → fail first, then by agent, model and test case."""
    flaky: list[Row]
    days: list[date]
    """Days with runs from the baseline's start to the latest day."""
    rates: list[Row]
    tokens: list[Row]
    cost: list[Row]
    runtime: list[Row]
    shares: list[Row]
    flags: list[Row]
    runs: dict[str, RunDetail | None] = field(default_factory=dict)
    """The runs of the first MAX_FLIPS flips by run id; None when no longer in the warehouse."""

    @property
    def start(self) -> date:
        return self.verdict.baseline_start

    @property
    def end(self) -> date:
        return self.verdict.baseline_end


def read(home: Path | str, day: date | None, baseline_days: int) -> ReportData:
    """Read the report's rows for `day` (default: the latest day with runs)."""
    if baseline_days < 1:
        raise InputError("--baseline-days must be at least 1")
    con = warehouse.connect(home)
    try:
        latest = day or con.execute("SELECT max(day) FROM runs").fetchone()[0]  # type: ignore[index]
        if latest is None:
            raise InputError("the warehouse has no runs yet: run `runlake ingest PATH` first")
        params = [latest, baseline_days]
        n_latest = con.execute("SELECT count(*) FROM runs WHERE day = ?", [latest]).fetchone()
        n_window = con.execute("SELECT count(*) FROM runs WHERE day BETWEEN ?::DATE - "
                               "?::INTEGER AND ?", [latest, baseline_days, latest]).fetchone()
        # A night on which nothing ran is reported (every pair missing) when its baseline ran.
        if not n_window or not n_window[0]:
            raise InputError(f"no runs on {latest}; days with runs: " + ", ".join(
                str(r[0]) for r in con.execute(
                    "SELECT DISTINCT day FROM runs ORDER BY 1 DESC LIMIT 10").fetchall()))
        verdict = nightly.read(con, latest, baseline_days)
        start = verdict.baseline_start
        window = [start, latest]
        flips = sorted(_rows(con, "SELECT * FROM test_case_flips(?, ?)", params),
                       key=lambda f: (f["direction"] != "pass_to_fail", f["agent"], f["model"],
                                      f["test_case_id"]))
        data = ReportData(
            latest=latest, baseline_days=baseline_days, verdict=verdict,
            n_runs_latest=int((n_latest or (0,))[0]),
            warehouse_name=warehouse.path(home).name,
            flips=flips,
            flaky=_rows(con, "SELECT * FROM case_outcomes(?, ?) WHERE is_flaky "
                             "ORDER BY agent, model, test_case_id", params),
            days=[r[0] for r in con.execute(
                "SELECT DISTINCT day FROM runs WHERE day BETWEEN ? AND ? ORDER BY 1",
                window).fetchall()],
            rates=_rows(con, "SELECT * FROM v_pass_rates WHERE day BETWEEN ? AND ?", window),
            tokens=_rows(con, "SELECT day, agent, model, tokens_per_run_avg AS v "
                              "FROM v_token_usage WHERE day BETWEEN ? AND ?", window),
            cost=_rows(con, "SELECT day, agent, model, cost_usd_per_run AS v "
                            "FROM v_token_usage WHERE day BETWEEN ? AND ?", window),
            runtime=_rows(con, "SELECT day, agent, model, agent_runtime_ms_p95 AS v "
                               "FROM v_runtime WHERE day BETWEEN ? AND ?", window),
            shares=_rows(con, "SELECT * FROM tool_share_changes(?, ?) WHERE share_delta IS "
                              "NOT NULL ORDER BY abs(share_delta) DESC, agent, model, "
                              "tool_name LIMIT 15", params),
            flags=_rows(con, FLAGS_BY_CODE, [latest, latest, start, latest]))
        for f in flips[:MAX_FLIPS]:
            for run_id in (f["latest_run_id"], f["baseline_run_id"]):
                if run_id is not None and run_id not in data.runs:
                    data.runs[run_id] = _run(con, run_id)
    finally:
        con.close()
    return data


def _run(con: duckdb.DuckDBPyConnection, run_id: str) -> RunDetail | None:
    found = _rows(con, RUN_FACTS, [run_id])
    if not found:
        return None
    facts = found[0]
    calls: dict[int, list[Row]] = {}
    for c in _rows(con, TOOL_CALLS, [facts["run_id"]]):
        calls.setdefault(c["message_index"], []).append(c)
    return RunDetail(facts=facts, messages=_rows(con, MESSAGES, [facts["run_id"]]), calls=calls)
