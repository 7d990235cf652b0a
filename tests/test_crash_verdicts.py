"""A single crash after hundreds of clean runs is no significant error rise (Fisher's exact test,
worked out by hand) and fails only the `--fail-on-crash` gate of the report and of compare."""

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.verdict_weeks import BASELINE, CRASH, LATEST, home_of, query, run_line
from transforms.cli import app

RUNNER = CliRunner()


# --- One crash after 840 clean runs -------------------------------------------------------

def _crash_week() -> list[dict[str, Any]]:
    lines = [run_line("billing", f"c{i:02d}", day, t, "passed")
             for day in BASELINE for i in range(40) for t in range(3)]
    lines += [run_line("billing", f"c{i:02d}", LATEST, t, "passed")
              for i in range(40) for t in range(3) if (i, t) != (17, 2)]
    lines.append(run_line("billing", "c17", LATEST, 2, "error", error=CRASH))
    # A crash of a case the baseline never ran: compared on neither side, crashed all the same.
    lines.append(run_line("newcomer", "brand-new", LATEST, 0, "error", error=CRASH))
    return lines


@pytest.fixture(scope="module")
def crash_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return home_of(tmp_path_factory.mktemp("crash"), _crash_week())


def test_one_crash_after_hundreds_of_clean_runs_is_not_significant(crash_home: Path) -> None:
    (row,) = query(crash_home, "select * from v_regressions where agent = 'billing'")
    assert (row["runs_baseline"], row["baseline_n_errors"]) == (840, 0)
    assert (row["runs_latest"], row["latest_n_errors"]) == (120, 1)
    # Fisher: the one error falls among the 120 latest of the 960 runs with chance 120 / 960
    # (the two-proportion z-test said 0.0041 and called it a regression).
    assert row["error_p_value"] == pytest.approx(120 / 960, rel=1e-9)
    assert not row["is_error_regression"] and not row["regressed"]
    assert row["reasons"] == []


def test_the_crash_is_named_and_only_fail_on_crash_fails_it(crash_home: Path) -> None:
    gate = RUNNER.invoke(app, ["report", "--home", str(crash_home), "--fail-on-regression"])
    assert gate.exit_code == 0, gate.output
    assert f"  CRASHED billing / gpt-4.1: 1 run ({CRASH})" in gate.output.splitlines()
    assert "REGRESSION" not in gate.output
    xml = crash_home.parent / "crash.xml"
    strict = RUNNER.invoke(app, ["report", "--home", str(crash_home), "--fail-on-crash",
                                 "--junit", str(xml)])
    assert strict.exit_code == 3, strict.output
    assert "2 runs crashed on 2026-11-20 (--fail-on-crash)" in strict.output
    # JUnit says why the job is red: a failed `crashed runs` check of each pair that crashed.
    import junitparser

    suites = {s.name: {c.name: c for c in s} for s in junitparser.JUnitXml.fromfile(str(xml))}
    (failure,) = suites["billing / gpt-4.1"]["crashed runs"].result
    assert failure.message == f"CRASHED billing / gpt-4.1: 1 run ({CRASH})"

    page = (crash_home / "reports" / "nightly-2026-11-20.html").read_text()
    crashes = page[page.index("2. Crashed runs"):page.index("3. Test cases that changed")]
    assert "billing-c17-2026-11-20-2" in crashes
    # The billing night against its week; then the newcomer's one run, a crash of a case no
    # baseline ran (on one side only: not counted, and crashed all the same).
    for candidate in ("agent = 'billing'", "agent = 'newcomer'"):
        compare = ["compare", "--home", str(crash_home), "--by", "none", "--baseline",
                   "agent = 'billing' and day < DATE '2026-11-20'",
                   "--candidate", f"{candidate} and day = DATE '2026-11-20'"]
        assert RUNNER.invoke(app, compare).exit_code == 0
        crashed = RUNNER.invoke(app, [*compare, "--fail-on-crash"])
        assert crashed.exit_code == 3, crashed.output
        assert "1 candidate run crashed (--fail-on-crash)" in crashed.output
