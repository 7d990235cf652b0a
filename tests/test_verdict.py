"""The nightly verdict's statistics on constructed nights, against figures worked out by hand
or by an independent computation in Python: the stratified (CMH) test is not fooled by a change
of case mix, Benjamini–Hochberg corrects for 30 pairs a night, and a crashed run is named by
the report and the CLI whether or not its error rate rose significantly."""

import math
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from tests.conftest import to_line
from transforms import warehouse
from transforms.cli import app
from transforms.ingest import ingest
from transforms.report import nightly, queries, write_report

RUNNER = CliRunner()
LATEST = date(2026, 11, 20)
BASELINE_DAY = LATEST - timedelta(days=1)
CRASH = "TimeoutError: billing API did not answer in 30 s"


def _run(agent: str, case: str, day: date, i: int, status: str,
         error: str | None = None) -> dict[str, Any]:
    outcome: dict[str, Any] = {"status": status}
    if error is not None:
        outcome["error"] = error
    return {"run_id": f"{agent}-{case}-{day}-{i:03d}", "agent": agent, "test_case_id": case,
            "started_at": f"{day}T{i // 60:02d}:{i % 60:02d}:00Z", "outcome": outcome,
            "response": {"final_response": f"{case} answered",
                         "messages": [{"role": "user", "content": f"Please do {case}."},
                                      {"role": "assistant", "content": f"{case} answered"}],
                         "metadata": {"model": "m"}}}


def _runs(agent: str, case: str, day: date, passed: int, failed: int,
          start: int = 0) -> list[dict[str, Any]]:
    return [_run(agent, case, day, start + i, "passed" if i < passed else "failed")
            for i in range(passed + failed)]


# Case mix: the easy case passes 90% and the hard one 10% on both sides, but the baseline ran
# mostly the easy case (36/40 + 1/10 = 37/50 = 74%) and the latest night mostly the hard one
# (9/10 + 4/40 = 13/50 = 26%).
CASE_MIX = (_runs("mix", "easy", BASELINE_DAY, 36, 4) + _runs("mix", "hard", BASELINE_DAY, 1, 9)
            + _runs("mix", "easy", LATEST, 9, 1) + _runs("mix", "hard", LATEST, 4, 36))

# 30 pairs with one case each: 17 of 20 passed in the baseline, (i mod 11) of 10 on the
# latest night, so the night's p-values range from tiny to 1 with ties.
MANY = [line for i in range(30) for line in
        _runs(f"pair{i:02d}", "c", BASELINE_DAY, 17, 3) + _runs(f"pair{i:02d}", "c", LATEST, i % 11,
                                                                   10 - i % 11)]

# One crash in ten runs, none in the baseline's ten: not a significant rise, named all the same.
CRASHY = (_runs("crashy", "k", BASELINE_DAY, 10, 0)
          + _runs("crashy", "k", LATEST, 9, 0)
          + [_run("crashy", "k", LATEST, 99, "error", CRASH + "\n  File \"tools.py\", line 88")])


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("verdict")
    landing = root / "landing"
    landing.mkdir()
    for name, lines in (("mix", CASE_MIX), ("many", MANY), ("crashy", CRASHY)):
        (landing / f"{name}.responses.jsonl").write_bytes(
            b"".join(to_line(x) + b"\n" for x in lines))
    home = root / "home"
    ingest([landing], home)
    return home


def _rows(home: Path, sql: str) -> dict[str, dict[str, Any]]:
    con = warehouse.connect(home)
    try:
        cur = con.execute(sql)
        names = [d[0] for d in cur.description or []]
        return {r[0]: dict(zip(names, r, strict=True)) for r in cur.fetchall()}
    finally:
        con.close()


def _phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2))


def test_a_change_of_case_mix_is_not_a_regression(night: Path) -> None:
    mix = _rows(night, "select agent, * from v_regressions where agent = 'mix'")["mix"]
    # The unstratified two-sided z-test: pooled 50/100, se = sqrt(0.25 * (2/50)) = 0.1,
    # z = (0.26 - 0.74) / 0.1 = -4.8, p = erfc(4.8 / sqrt 2) = 1.59e-6: "significant".
    assert mix["p_value"] == pytest.approx(math.erfc(4.8 / math.sqrt(2)), rel=1e-5)
    assert mix["is_significant"] and mix["latest_pass_rate"] < mix["baseline_pass_rate"]
    # By case: easy a = 9, n1 = 10, n0 = 40, m = 45, N = 50: E = 10 * 45 / 50 = 9;
    # hard a = 4, n1 = 40, n0 = 10, m = 5: E = 40 * 5 / 50 = 4. sum(a - E) = 0, so z = 0 and
    # the one-sided CMH p = Phi(0) = 0.5: nothing got worse on the same cases.
    assert mix["n_strata"] == 2
    assert mix["cmh_p_value"] == pytest.approx(0.5, abs=1e-7)
    assert mix["pass_rate_p_value"] == mix["cmh_p_value"]
    assert not mix["regressed"] and mix["reasons"] == []
    assert mix["verdict"] == "no_change"


def _bh(p: list[float]) -> list[float]:
    """Benjamini–Hochberg, written independently of the SQL: sort, scale by m / rank, take the
    running minimum from the largest p down, cap at 1, and put back in the original order."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    q = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p[i] * m / rank)
        q[i] = running
    return q


def test_benjamini_hochberg_over_30_pairs(night: Path) -> None:
    rows = _rows(night, "select agent, * from v_regressions where agent like 'pair%'")
    assert len(rows) == 30
    # One pair by hand: 17/20 -> 3/10 on one case: a = 3, n1 = 10, n0 = 20, m = 20, N = 30;
    # E = 10 * 20 / 30 = 6.6667, V = 10 * 20 * 20 * 10 / (900 * 29) = 1.532567,
    # z = -3.6667 / 1.237969 = -2.961841, p = Phi(z) = 0.0015290.
    assert rows["pair03"]["cmh_p_value"] == pytest.approx(0.0015290, rel=1e-4)
    for r in rows.values():
        n_pass = int(r["agent"][4:]) % 11
        m = 17 + n_pass
        z = (n_pass - 10 * m / 30) / math.sqrt(10 * 20 * m * (30 - m) / (900 * 29))
        assert r["pass_rate_p_value"] == pytest.approx(_phi(z), rel=1e-6)
        assert r["rise_p_value"] == pytest.approx(_phi(-z), rel=1e-6)
    # The q-values are BH over every pair of the night with a p-value: these 30, the case-mix
    # pair and the crashy one (which passed everything on both sides: p = 1).
    night_rows = _rows(night, "select agent, pass_rate_p_value, q_value, rise_p_value, "
                              "rise_q_value from v_regressions where pass_rate_p_value "
                              "is not null")
    assert len(night_rows) == 32
    agents = sorted(night_rows)
    for column, adjusted in (("pass_rate_p_value", "q_value"),
                             ("rise_p_value", "rise_q_value")):
        want = _bh([float(night_rows[a][column]) for a in agents])
        got = [float(night_rows[a][adjusted]) for a in agents]
        assert got == pytest.approx(want, rel=1e-9)
    # The correction matters: a pair whose own p is below 0.01 but whose q is not is no
    # regression. 4/10 (m = 21): V = 10 * 20 * 21 * 9 / (900 * 29) = 1.448276, z = -3 /
    # 1.203443 = -2.492847, p = 0.006336; the pairs with 0-4 passes (three of each) take ranks
    # 1-15 of 32, so the 4-pass pairs (ranks 13-15) get q = 0.006336 * 32 / 15 = 0.013517.
    assert rows["pair04"]["pass_rate_p_value"] == pytest.approx(0.006336, rel=1e-3)
    assert rows["pair04"]["q_value"] == pytest.approx(0.006336174 * 32 / 15, rel=1e-5)
    borderline = [r for r in rows.values()
                  if r["pass_rate_p_value"] < 0.01 <= r["q_value"]]
    assert borderline, "some pair is significant alone and not after the correction"
    assert all(not r["regressed"] for r in borderline)
    assert all(r["regressed"] == (r["q_value"] < 0.01) for r in rows.values())


def test_mde_says_when_a_night_cannot_tell(night: Path) -> None:
    rows = _rows(night, "select agent, * from v_regressions where agent like 'pair%'")
    r = rows["pair10"]  # 17/20 -> 10/10: p = 18/22
    want = (2.3263478740408408 + 0.8416212335729143) * math.sqrt(
        18 / 22 * 4 / 22 * (1 / 20 + 1 / 10))
    assert r["mde"] == pytest.approx(want, rel=1e-9)
    assert r["mde"] < 0.5 and r["verdict"] == "no_change"


def test_a_crash_below_significance_is_named(night: Path) -> None:
    crashy = _rows(night, "select agent, * from v_regressions where agent = 'crashy'")["crashy"]
    # 0/10 -> 1/10 errors, Fisher's exact test: the one error falls among the 10 latest runs
    # of the 20 with chance 10 / 20 = 0.5: no error regression.
    assert crashy["error_p_value"] == pytest.approx(10 / 20, rel=1e-9)
    assert not crashy["regressed"]
    res = RUNNER.invoke(app, ["report", "--home", str(night)])
    assert res.exit_code == 0, res.output
    assert f"  CRASHED crashy / m: 1 run ({CRASH})" in res.output.splitlines()
    page = (night / "reports" / f"nightly-{LATEST}.html").read_text()
    crashes = page[page.index("2. Crashed runs"):page.index("3. Test cases that changed")]
    run_id = f"crashy-k-{LATEST}-099"
    assert run_id in crashes and f"<code>{CRASH}</code>" in crashes
    assert 'tools.py", line 88' not in crashes.split("<details")[0]  # first line in the table
    assert "1 run crashed (crashy / m: 1)." in page


def test_each_report_section_is_one_query(night: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report reads a fixed number of queries, however many runs it shows."""
    seen: list[str] = []
    real = warehouse.connect

    class Counting:
        def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
            self._con = con

        def execute(self, sql: str, params: Any = None) -> Any:
            seen.append(sql)
            return self._con.execute(sql, params or [])

        def __getattr__(self, name: str) -> Any:
            return getattr(self._con, name)

    monkeypatch.setattr(warehouse, "connect", lambda home: Counting(real(home)))
    # The verdict is cached per lake version: start without it, whatever ran before.
    monkeypatch.setattr(nightly, "_VERDICTS", {})
    data = queries.read(night, None, 7)
    shown = [r for r in data.runs.values() if r is not None]
    assert len(shown) >= 20  # the changed cases' runs and the crash, with their transcripts
    assert len(seen) <= 16, seen
    write_report(night)


def test_a_crash_under_the_strict_contract_stays_a_crash(
        write_lines: Any, run_ingest: Any, query: Any) -> None:
    """A run that crashed (or was skipped) under the rich+strict contract never answered: it
    keeps its status and is named as a crash, not turned into a contract violation."""
    strict = {"response_mode": "rich", "strictness": "strict"}
    lines = [{"run_id": rid, "agent": "a", "test_case_id": "k", "response_contract": strict,
              "started_at": "2026-11-20T10:00:00Z",
              "outcome": {"status": status, "error": CRASH} if status == "error" else
              {"status": status}, "response": {"messages": []}}
             for rid, status in (("crashed", "error"), ("skipped", "skipped"),
                                 ("silent", "passed"))]
    run_ingest(write_lines(lines))
    assert dict(query("select run_id, status from runs")) == {
        "crashed": "error", "skipped": "skipped", "silent": "contract_violation"}
    assert query("select run_id from v_crashed_runs") == [("crashed",)]
    assert query("select run_id from v_contract_violations") == [("silent",)]


def test_a_run_dated_in_the_future_is_never_the_night_reported(tmp_path: Path) -> None:
    """One run with a wrong clock (9998-12-31) in a home with a real regression: the report,
    its exit code and the views' default window stay on the latest real night, and a warning
    names the future-dated runs."""
    samples = Path(__file__).resolve().parents[1] / "data_samples"
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "clock.responses.jsonl").write_bytes(to_line({
        "run_id": "from-the-future", "agent": "support-bot", "test_case_id": "k",
        "started_at": "9998-12-31T10:00:00Z", "outcome": {"status": "passed"},
        "response": {"final_response": "ok"}}))
    home = tmp_path / "home"
    ingest([samples, landing], home)
    res = RUNNER.invoke(app, ["report", "--home", str(home), "--fail-on-regression"])
    assert res.exit_code == 3, res.output
    assert res.stdout.startswith("2026-11-20: "), res.stdout[:200]
    assert "1 run is dated after today (UTC), so never the night reported by default: " \
           "9998-12-31 (1 run)" in res.output
    con = warehouse.connect(home)
    try:
        assert con.execute("SELECT latest_day::VARCHAR FROM comparison_window(NULL, NULL)"
                           ).fetchall() == [("2026-11-20",)]
        assert con.execute("SELECT count(*) FROM v_regressions WHERE latest_day = "
                           "DATE '2026-11-20'").fetchone()[0] > 0  # type: ignore[index]
    finally:
        con.close()
