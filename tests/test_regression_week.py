"""The nightly answer on a constructed week (tests/fixtures/regression_week.py): on the latest
day one agent crashes, one does not run, one misses 40% of its test cases, one drops its pass
rate and one is steady. v_regressions, v_missing_test_cases, the report's first screen, the
CLI's exit code, the webhook and the Dagster check must each say exactly that."""

from datetime import date
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from typer.testing import CliRunner

from tests.fixtures import regression_week
from tests.pipelines.jobs import run_day
from transforms import warehouse
from transforms.cli import app
from transforms.ingest import ingest
from transforms.verdict.ci_outputs import EXIT_REGRESSED

RUNNER = CliRunner()
LATEST = regression_week.LATEST.isoformat()


@pytest.fixture(scope="module")
def week_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("week")
    ingest([regression_week.write(root / "landing")], root / "home")
    return root / "home"


def _query(home: Path, sql: str) -> list[tuple[Any, ...]]:
    con = warehouse.connect(home)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_v_regressions_names_each_kind_and_nothing_else(week_home: Path) -> None:
    rows = {r[0]: r[1:] for r in _query(week_home, """
        select agent, runs_baseline, runs_latest, error_rate_baseline, error_rate_latest,
               error_p_value, is_error_regression, is_missing, is_regression, regressed,
               reasons, p_value
        from v_regressions""")}
    assert set(rows) == {"crasher", "absent", "partial", "dropper", "steady"}
    crasher = rows["crasher"]
    assert crasher[:4] == (35, 5, 0.0, 1.0)
    # Fisher: all 5 errors among the 5 latest of 40 runs, 1 / C(40, 5) = 1 / 658008.
    assert crasher[4] == pytest.approx(1 / 658008, rel=1e-9)
    assert crasher[5:10] == (True, False, False, True, ["error_rate"])
    assert crasher[10] is None  # nothing graded on the latest day: no pass-rate test
    absent = rows["absent"]
    assert absent[:4] == (28, 0, 0.0, None)
    assert absent[4] is None  # a side with no runs: no test
    assert absent[5:10] == (False, True, False, True, ["missing"])
    partial = rows["partial"]
    assert partial[:5] == (70, 6, 0.0, 0.0, 1.0)
    assert partial[5:10] == (False, False, False, False, [])
    dropper = rows["dropper"]
    assert dropper[5:10] == (False, False, True, True, ["pass_rate"])
    assert dropper[10] == pytest.approx(3.068061942e-15, rel=1e-5)
    steady = rows["steady"]
    assert steady[:4] == (70, 10, pytest.approx(1 / 70), 0.0)
    assert steady[4] == pytest.approx(1.0)  # 1 error in 70, none in 10: P(X >= 0) = 1
    assert steady[10] == pytest.approx(0.9886723374, rel=1e-6)
    assert steady[5:10] == (False, False, False, False, [])


def test_v_missing_test_cases_lists_the_regular_cases_that_did_not_run(week_home: Path) -> None:
    rows = _query(week_home, "select agent, model, test_case_id, baseline_runs, "
                             "last_seen_day::varchar from v_missing_test_cases "
                             "order by agent, test_case_id")
    assert rows == (
        [("absent", "gpt-4o", f"a{i:02d}", 7, "2026-11-19") for i in range(1, 5)]
        + [("partial", "claude-sonnet-4-5", f"p{i:02d}", 7, "2026-11-19") for i in range(7, 11)])


def test_cases_that_come_and_go_are_not_missing(write_lines: Any, home: Path) -> None:
    """A case run on 3 of the pair's 7 baseline days is irregular; on 4 of 7 it is regular."""
    def run(case: str, day: int) -> dict[str, Any]:
        return {"run_id": f"{case}-{day}", "agent": "a", "test_case_id": case,
                "started_at": f"2026-11-{day}T01:00:00Z", "outcome": {"status": "passed"},
                "response": {"final_response": "ok", "metadata": {"model": "m"}}}
    lines = [run("every", d) for d in range(13, 21)]
    lines += [run("thrice", d) for d in (13, 15, 17)] + [run("four", d) for d in (13, 15, 17, 19)]
    ingest([write_lines(lines)], home)
    assert _query(home, "select test_case_id, baseline_runs from v_missing_test_cases") == [
        ("four", 4)]


def test_report_first_screen_says_what_regressed(week_home: Path) -> None:
    res = RUNNER.invoke(app, ["report", "--home", str(week_home)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert [line for line in lines if line.startswith("  REGRESSION")] == [
        "  REGRESSION crasher / gpt-4o: crashed: error rate 0% -> 100% of runs (5 of 5; "
        "p = 1.5e-06)",
        "  REGRESSION absent / gpt-4o: missing: no run on 2026-11-20 (28 runs in the baseline)",
        # CMH by case: d01, d02 passed (V = 0); d03-d10 each a = 0, E = 7/8, V = 7/64:
        # z = -7 / sqrt(0.875) = -7.483315, p = 3.62e-14; q = p * 3 pairs / rank 1.
        "  REGRESSION dropper / gpt-4.1: pass rate 100% -> 20% (on the same 10 test cases "
        "p = 3.6e-14, q = 1.1e-13)",
    ]
    assert [line for line in lines if line.startswith("  MISSING")] == [
        "  MISSING absent / gpt-4o: 4 test cases not run (a01, a02, a03, a04)",
        "  MISSING partial / claude-sonnet-4-5: 4 test cases not run (p07, p08, p09, p10)",
    ]
    page = (week_home / "reports" / f"nightly-{LATEST}.html").read_text()
    header = page[page.index("<header>"):page.index("</header>")]
    assert ('3 agent and model pairs regressed: 1 crashed (crasher / gpt-4o); 1 missing '
            '(absent / gpt-4o); 1 pass rate (dropper / gpt-4.1); 8 test cases missing '
            '(absent / gpt-4o: 4, partial / claude-sonnet-4-5: 4).') in header
    assert 'class="headline bad"' in header and "No regression" not in page
    first = page[page.index("1. What regressed"):page.index("Every agent and model")]
    cards = [first.index(f"{name} · ") for name in ("crasher", "absent", "dropper")]
    assert cards == sorted(cards) and first.count('<div class="card bad">') == 3
    assert "steady ·" not in first and "partial · claude-sonnet-4-5</b>: 4 missing" in first
    for case in ("a01", "a04", "p07", "p10"):
        assert f"<code>{case}</code>" in first
    # Each flip: the latest failing run beside the last passing run, with the
    # grader's explanation and the figures of each.
    flip = page[page.index("<b>d03</b>"):]
    flip = flip[:flip.index("</details>")]
    assert flip.index("latest · failed") < flip.index("last passing run · passed")
    assert "grader: d03 asked for a refund; none was issued" in flip
    assert flip.count("<dt>tokens</dt><dd>1,000</dd>") == 2
    assert "I could not finish d03." in flip and "Done: d03 handled." in flip


def test_fail_on_regression_exits_3_and_the_webhook_gets_the_summary(
        week_home: Path, webhook: list[dict[str, Any]]) -> None:
    received = webhook
    res = RUNNER.invoke(app, ["report", "--home", str(week_home), "--fail-on-regression"])
    assert res.exit_code == EXIT_REGRESSED == 3, res.output
    assert "webhook: summary sent" in res.output
    assert len(received) == 1 and received[0]["type"] == "application/json"
    body = received[0]["body"]
    assert body["latest_day"] == LATEST and body["text"].startswith(f"runlake {LATEST}: 3 agent")
    assert [(r["agent"], r["reasons"]) for r in body["regressed"]] == [
        ("crasher", ["error_rate"]), ("absent", ["missing"]), ("dropper", ["pass_rate"])]
    assert len(body["missing_test_cases"]) == 8
    assert body["missing_test_cases"][0] == {"agent": "absent", "model": "gpt-4o",
                                             "test_case_id": "a01", "baseline_runs": 7,
                                             "last_seen_day": "2026-11-19"}


def test_an_unreachable_webhook_is_a_warning_and_a_clear_night_exits_0(
        week_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNLAKE_WEBHOOK_URL", "http://127.0.0.1:9/nothing-listens")
    res = RUNNER.invoke(app, ["report", "--home", str(week_home), "--fail-on-regression"])
    assert res.exit_code == 3 and "warning: the webhook could not be reached" in res.output
    # 2026-11-19 against its own 6-day baseline: nothing regressed; no webhook call is made.
    res = RUNNER.invoke(app, ["report", "--home", str(week_home), "--day", "2026-11-19",
                              "--baseline-days", "6", "--fail-on-regression"])
    assert res.exit_code == 0, res.output
    assert "no regression" in res.output and "webhook" not in res.output


@pytest.fixture(scope="module")
def week_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The baseline ingested, then the latest day materialized by the ingest_day job."""
    root = tmp_path_factory.mktemp("week_run")
    landing = regression_week.write(root / "landing")
    home = root / "home"
    ingest([landing / d.isoformat() for d in regression_week.BASELINE], home)
    return run_day(home, landing, LATEST)


def test_dagster_check_fails_at_error_naming_each_kind(week_run: Any) -> None:
    result = week_run
    check = {e.check_name: e for e in result.get_asset_check_evaluations()}["no_regression"]
    assert not check.passed and check.severity == dg.AssetCheckSeverity.ERROR
    meta = {k: v.value for k, v in check.metadata.items()}
    assert meta["failed_on"] == "1 crashed, 1 missing, 1 pass rate, 8 missing test cases"
    assert (meta["n_crashed"], meta["n_missing"], meta["n_pass_rate"],
            meta["n_missing_test_cases"]) == (1, 1, 1, 8)
    assert meta["crashed"].startswith("crasher / gpt-4o: crashed")
    assert meta["missing"].startswith("absent / gpt-4o: missing")
    assert meta["pass_rate"].startswith("dropper / gpt-4.1: pass rate 100% -> 20%")
    assert date.fromisoformat(meta["latest_day"]) == regression_week.LATEST


def test_a_regression_fails_the_run(week_run: Any) -> None:
    """no_regression is blocking: the report is written and recorded, the lake and warehouse
    steps succeed, and the run fails on the report's step, so the runs list shows it failed."""
    result = week_run
    assert not result.success
    failures = [e for e in result.all_events if e.is_step_failure]
    assert [(e.step_key, e.step_failure_data.error.cls_name) for e in failures] == [
        ("nightly_report", "DagsterAssetCheckFailedError")]
    assert "nightly_report: no_regression" in failures[0].step_failure_data.error.message
    succeeded = {e.step_key for e in result.all_events if e.is_step_success}
    assert succeeded == {"lake_tables", "warehouse_views"}
    materialized = {m.materialization.asset_key.to_user_string()
                    for m in result.get_asset_materialization_events()}
    assert {"runs", "warehouse_views", "nightly_report"} <= materialized
    # The regressed pairs are on the day's runs materialization too, and its failed runs.
    runs = next(m.materialization.metadata for m in result.get_asset_materialization_events()
                if m.materialization.asset_key.to_user_string() == "runs")
    assert runs["regressed_pairs"].value == 3
    assert runs["pass_rate/dropper/gpt-4.1"].value == pytest.approx(0.2)
    assert runs["pass_rate/steady/gemini-2.5-flash"].value == pytest.approx(0.9)
    assert "pass_rate/crasher/gpt-4o" not in runs  # nothing graded: no pass rate
    assert runs["pass_rate_by_agent_model"].value.startswith(
        "Pass rate over graded runs against 2026-11-13 to 2026-11-19")
    table = _cells(runs["pass_rate_by_agent_model"].value)
    assert {r[1]: r[0] for r in table} == {
        "absent / gpt-4o": "**REGRESSED** (missing)",
        "crasher / gpt-4o": "**REGRESSED** (crashed)",
        "dropper / gpt-4.1": "**REGRESSED** (pass rate)",
        "partial / claude-sonnet-4-5": "no change", "steady / gemini-2.5-flash": "no change"}
    assert [r[0].startswith("**") for r in table] == [True] * 3 + [False] * 2  # regressed first
    assert next(r for r in table if r[1] == "dropper / gpt-4.1")[2:5] == ["10", "20%", "100%"]
    # Failed and errored runs, worst first: the crashes, then the graded failures.
    # crasher: 5 errors; dropper: 8 failed; steady: s10 failed.
    worst = runs["worst_runs"].value
    assert worst.startswith("14 failed or errored runs, worst first (") and len(worst) < 1000
    statuses = [r[3] for r in _cells(worst)]
    assert 5 < len(statuses) <= 10 and statuses[:5] == ["error"] * 5
    assert set(statuses[5:]) == {"failed"}


def _cells(markdown: str) -> list[list[str]]:
    """The body rows of the markdown table in `markdown`, as lists of cell texts."""
    rows = [ln for ln in markdown.splitlines() if ln.startswith("| ")]
    return [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in rows[1:]]
