"""`runlake compare` and `runlake report` on the command line, on the constructed suite of
tests/test_compare.py: text, JSON and the exit code, predicates refused in one line, and the
verdict in CI's formats (JUnit XML read back with junitparser, Markdown, GitHub annotations,
the HTML page) for `compare` and `report` alike."""

import json
import math
from pathlib import Path
from typing import Any

import junitparser
import pytest
from typer.testing import CliRunner

from tests.test_compare import BASELINE, CANDIDATE, DAY, SUITE, phi, write_suite
from transforms.cli import app
from transforms.compare import JSON_KEYS
from transforms.ingest import ingest

RUNNER = CliRunner()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("compare-cli")
    write_suite(root / "landing", "suite", SUITE)
    home = root / "home"
    ingest([root / "landing"], home)
    return home


def _cli(home: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    return RUNNER.invoke(app, ["compare", "--baseline", BASELINE, "--candidate", CANDIDATE,
                               *args, "--home", str(home)], env=env)


def test_cli_text_json_and_exit_code(home: Path) -> None:
    res = _cli(home)
    assert res.exit_code == 3, res.output
    assert "REGRESSED (pass rate) z: 88% -> 50% passed (35/40 against 20/40); on the same 40 " \
           "test cases drop p = 5.4e-05 q = 0.00016" in res.output
    assert "IMPROVED x: 40% -> 75% passed" in res.output
    assert "ONE SIDE ONLY, not counted, x: x-only-a (baseline, 1 run)" in res.output
    # All runs as one group: A 75/120, B 76/120; the strata of x, y and z together give
    # sum(a - E) = 7 + 1 - 7.5 = 0.5 and sum V = 4.5 + 2.5 + 3.75 = 10.75: drop p =
    # Phi(0.5 / sqrt(10.75)) = Phi(0.152499) = 0.560603. Nothing regressed: exit code 0.
    res = _cli(home, "--format", "json", "--by", "none")
    assert res.exit_code == 0, res.output
    (only,) = json.loads(res.stdout)
    assert list(only) == list(JSON_KEYS) and only["group"] == {}
    assert only["baseline_n_graded"] == only["candidate_n_graded"] == 120
    assert only["cmh_p_value"] == pytest.approx(phi(0.5 / math.sqrt(10.75)), rel=1e-6)
    assert only["cmh_p_value"] == pytest.approx(0.560603, abs=1e-6)
    assert only["verdict"] == "no_change"
    res = _cli(home, "--by", "model")  # each model on one side: nothing to compare
    assert res.exit_code == 0, res.output
    assert "INSUFFICIENT_EVIDENCE" in res.output and "not counted" in res.output


def test_cli_refuses_in_one_line_and_writes_nothing(home: Path, tmp_path: Path) -> None:
    for baseline in (f"COPY (select 1) TO '{tmp_path / 'x.csv'}'",
                     f"model in (select * from read_csv('{tmp_path}/y.csv'))",
                     "model = 'A'; select 1", "model = 'nobody'", "agent = 'x'",
                     "(" * 50 + "model = 'A'" + ")" * 50, "not " * 300 + "model = 'A'"):
        res = RUNNER.invoke(app, ["compare", "--baseline", baseline, "--candidate", CANDIDATE,
                                  "--home", str(home), "--junit", str(tmp_path / "j.xml")])
        assert res.exit_code == 2, (baseline, res.output)
        assert res.output.startswith("error:") and len(res.output.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_cli_junit_read_back_matches_the_verdict(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "compare.xml"
    res = _cli(home, "--junit", str(path))
    assert res.exit_code == 3
    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = {s.name: s for s in xml}
    assert set(suites) == {"x", "y", "z"}
    for name, s in suites.items():
        cases = {c.name: c for c in s}
        rate = cases["pass rate"]
        if name == "z":
            (failure,) = rate.result
            assert isinstance(failure, junitparser.Failure)
            assert failure.message.startswith("REGRESSED (pass rate) z: 88% -> 50% passed")
            assert s.failures == 1
        else:
            assert rate.is_passed and s.failures == 0
        assert cases["error rate"].is_passed
    x_cases = {c.name: c for c in suites["x"]}
    assert x_cases["missing test case x-only-a"].is_skipped
    assert x_cases["missing"].is_skipped
    assert xml.failures == 1 and xml.skipped == 2 and xml.tests == 13  # 4 checks a group + 1


def test_cli_markdown_annotations_and_html(home: Path, tmp_path: Path) -> None:
    md, step, page = tmp_path / "compare.md", tmp_path / "step.md", tmp_path / "compare.html"
    step.write_text("earlier step\n")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(step)}
    res = _cli(home, "--html", str(page), env=env)
    assert res.exit_code == 3
    text = step.read_text()
    assert text.startswith("earlier step\n")  # appended to, by default
    assert "| z | **regressed** | 88% → 50% | 40 | 5.4e-05 | 0.00016 |" in text
    assert "- REGRESSED (pass rate) z: 88% -\\> 50% passed" in text
    assert "| x | improved | 40% → 75% |" in text
    assert "x: x-only-a (baseline, 1)" in text
    errors = [line for line in res.stdout.splitlines() if line.startswith("::error")]
    assert errors == [line for line in res.stdout.splitlines() if "REGRESSED" in line
                      and line.startswith("::")]
    assert len(errors) == 1 and errors[0].startswith(
        "::error title=runlake compare::REGRESSED (pass rate) z: 88%25 -> 50%25")
    assert "::warning title=runlake compare::1 run of test cases on one side only" in res.stdout
    assert _cli(home, "--markdown", str(md)).exit_code == 3
    assert md.read_text().startswith("### runlake compare\n")
    assert "| z | **regressed** |" in md.read_text()
    html = page.read_text()
    # 43 flipped cases (x 16 + 2, y 6 + 4, z 15): the first 30 with their runs.
    assert html.count('<details class="flip') == 30
    assert "… and 13 more." in html
    assert "z-&lt;i&gt;odd&lt;/i&gt;" in html and "<i>odd</i>" not in html
    assert "Please do x-00." not in html  # a case that did not flip


def test_report_writes_junit_and_markdown(home: Path, tmp_path: Path) -> None:
    """The nightly report of the day: A ran the day before only (missing on the day), B on the
    day only (nothing to compare with)."""
    xml_path, md_path = tmp_path / "report.xml", tmp_path / "report.md"
    res = RUNNER.invoke(app, ["report", "--day", str(DAY), "--baseline-days", "1",
                              "--fail-on-regression", "--junit", str(xml_path), "--markdown",
                              str(md_path), "--home", str(home)],
                        env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": ""})
    assert res.exit_code == 3, res.output
    suites = {s.name: s for s in junitparser.JUnitXml.fromfile(str(xml_path))}
    assert set(suites) == {f"{a} / {m}" for a in "xyz" for m in "AB"}
    missing = {c.name: c for c in suites["x / A"]}
    (failure,) = missing["missing"].result
    assert failure.message == "REGRESSION x / A: missing: no run on 2026-11-20 (41 runs in the " \
                              "baseline)"
    assert missing["missing test case x-only-a"].result[0].message.startswith(
        "MISSING x / A: test case x-only-a not run on 2026-11-20")
    assert {c.name: c for c in suites["x / B"]}["pass rate"].is_skipped
    text = md_path.read_text()
    for agent in "xyz":
        assert f"| {agent} | A | missing | " in text
    assert "::error title=runlake report::REGRESSION x / A: missing" in res.stdout
