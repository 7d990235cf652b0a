"""Sound verdicts on constructed weeks, each figure worked out by hand (a single crash:
test_crash_verdicts.py): repeated trials flip a case by its pass rates, not by its last trial; a
named score that falls on the same cases regresses its pair (the Wilcoxon signed-rank test,
Benjamini–Hochberg over the night's scores); and what changed between the runs (a prompt, not a
git sha that changes every night) is named beside the cases that flipped."""

import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.verdict_weeks import BASELINE, LATEST, home_of, query, run_line
from transforms import warehouse
from transforms.cli import app
from transforms.ingest import ingest

RUNNER = CliRunner()


# --- A week of repeated trials, a prompt change and a named score ---------------------------

NOISY = [f"n{i:02d}" for i in range(20)]
"""Pass 2 of 3 trials every night; which trial fails moves, so the last trial passed on the
last baseline night and fails on the latest one."""
BROKEN = [f"b{i}" for i in range(6)]
"""Pass 3 of 3 every baseline night, 1 of 3 on the latest: the cases that really failed."""
STABLE = [f"s{i:02d}" for i in range(14)]


def _trials_week() -> list[dict[str, Any]]:
    lines = []
    for day in [*BASELINE, LATEST]:
        latest = day == LATEST
        for case in NOISY:
            failing = 2 if latest else 1
            lines += [run_line("trials", case, day, t, "failed" if t == failing else "passed")
                      for t in range(3)]
        for case in BROKEN:
            lines += [run_line("trials", case, day, t,
                               "passed" if not latest or t == 0 else "failed")
                      for t in range(3)]
        for case in STABLE:
            lines += [run_line("trials", case, day, t, "passed") for t in range(3)]
    return lines


FLIPPED = [f"p{i:02d}" for i in range(8)]
"""Of the 40 cases of `prompted`, the 8 that fail under the new prompt."""


def _prompt_week() -> list[dict[str, Any]]:
    lines = []
    for day in [*BASELINE, LATEST]:
        for i in range(40):
            case = f"p{i:02d}"
            status = "failed" if day == LATEST and case in FLIPPED else "passed"
            lines.append(run_line("prompted", case, day, 0, status,
                              prompt="sp-18" if day == LATEST else "sp-17"))
    return lines


# Per case, the latest night's helpfulness minus the baseline's (0.8 every night): ties at
# 0.1 (three), 0.2 (three) and 0.3 (two), one zero. accuracy moves both ways evenly.
HELPFULNESS = [-0.1, -0.1, -0.2, -0.2, -0.2, -0.3, -0.3, -0.4, -0.5, 0.1, 0.0, -0.6]
ACCURACY = [0.1, -0.1, 0.2, -0.2, 0.3, -0.3, 0.0, 0.0, 0.1, -0.1, 0.05, -0.05]


def _scored_week() -> list[dict[str, Any]]:
    lines = []
    for day in [*BASELINE, LATEST]:
        for i, (h, a) in enumerate(zip(HELPFULNESS, ACCURACY, strict=True)):
            latest = day == LATEST
            scores = {"helpfulness": 0.8 + (h if latest else 0.0),
                      "accuracy": 0.5 + (a if latest else 0.0)}
            lines.append(run_line("judged", f"j{i:02d}", day, 0, "passed", scores=scores))
    return lines


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return home_of(tmp_path_factory.mktemp("week"),
                 _trials_week() + _prompt_week() + _scored_week())


def test_repeated_trials_flip_only_the_cases_that_failed(week: Path) -> None:
    flips = query(week, "select test_case_id, direction, baseline_status, latest_status, "
                         "latest_passes, latest_fails from v_test_case_flips "
                         "where agent = 'trials' order by test_case_id")
    # The noisy cases' last trial passed on the last baseline night and fails tonight: by
    # their last runs all 20 would flip; by their rates (2/3 on both sides) none does.
    assert [(f["test_case_id"], f["direction"], f["baseline_status"], f["latest_status"],
             f["latest_passes"], f["latest_fails"]) for f in flips] == [
        (c, "pass_to_fail", "passed", "failed", 1, 2) for c in BROKEN]
    (pair,) = query(week, "select * from v_regressions where agent = 'trials'")
    assert (pair["n_pass_to_fail"], pair["n_fail_to_pass"]) == (6, 0)
    # McNemar on the outcomes: 6 one way, 0 the other, 2 * (1/2)^6.
    assert pair["paired_p_value"] == pytest.approx(2 / 64, rel=1e-9)


def test_a_single_run_keeps_the_last_run_rule(write_lines: Any, home: Path) -> None:
    """One graded run on the latest day: the case flips when the baseline's last run passed
    and tonight's failed, however it went before."""
    lines = [run_line("single", "x", BASELINE[0], 0, "failed"),
             run_line("single", "x", BASELINE[1], 0, "failed"),
             run_line("single", "x", BASELINE[2], 0, "passed"),
             run_line("single", "x", LATEST, 0, "failed")]
    ingest([write_lines(lines)], home)
    assert query(home, "select test_case_id, direction, baseline_status from "
                        "v_test_case_flips") == [
        {"test_case_id": "x", "direction": "pass_to_fail", "baseline_status": "passed"}]


def _signed_rank_p(diffs: list[float], rise: bool = False) -> float:
    """The one-sided Wilcoxon signed-rank p (normal approximation, tie correction, no
    continuity correction), computed apart from the SQL."""
    d = [round(x, 9) for x in diffs if round(x, 9) != 0]
    n = len(d)
    sizes = sorted(abs(x) for x in d)
    rank = {s: (sizes.index(s) + 1 + len(sizes) - sizes[::-1].index(s)) / 2 for s in sizes}
    w_plus = sum(rank[abs(x)] for x in d if x > 0)
    ties = sum(sizes.count(s) ** 3 - sizes.count(s) for s in set(sizes))
    var = n * (n + 1) * (2 * n + 1) / 24 - ties / 48
    z = (w_plus - n * (n + 1) / 4) / math.sqrt(var)
    if rise:
        z = -z
    return 0.5 * math.erfc(-z / math.sqrt(2))


def test_a_named_score_that_falls_regresses_its_pair(week: Path) -> None:
    rows = {r["score_name"]: r for r in query(
        week, "select * from v_score_regressions where agent = 'judged'")}
    h, a = rows["helpfulness"], rows["accuracy"]
    assert (h["n_cases"], h["n_nonzero"]) == (12, 11)
    assert h["baseline_mean"] == pytest.approx(0.8)
    assert h["mean_delta"] == pytest.approx(sum(HELPFULNESS) / 12)
    # By hand: sizes 0.1 x3 (ranks 1-3, 2 each), 0.2 x3 (5 each), 0.3 x2 (7.5 each), 0.4 (9),
    # 0.5 (10), 0.6 (11); the one positive difference is a 0.1: W+ = 2. Ties add
    # (27 - 3) + (27 - 3) + (8 - 2) = 54; var = 11*12*23/24 - 54/48 = 125.375;
    # z = (2 - 33) / sqrt(125.375) = -2.76857, p = Phi(z).
    assert h["w_plus"] == 2
    want = 0.5 * math.erfc(31 / math.sqrt(125.375) / math.sqrt(2))
    assert h["p_value"] == pytest.approx(want, rel=1e-6)
    assert h["p_value"] == pytest.approx(_signed_rank_p(HELPFULNESS), rel=1e-6)
    # accuracy: W+ = W- by symmetry, z = 0, p = 0.5, with 10 non-zero differences.
    assert (a["n_nonzero"], a["p_value"]) == (10, pytest.approx(0.5))
    # Benjamini–Hochberg over the night's two scored rows: q = min(p1 * 2 / 1, p2 * 2 / 2).
    assert h["q_value"] == pytest.approx(min(want * 2, 0.5), rel=1e-5)
    assert a["q_value"] == pytest.approx(0.5)
    assert (h["verdict"], a["verdict"]) == ("regressed", "no_change")
    (pair,) = query(week, "select * from v_regressions where agent = 'judged'")
    assert pair["reasons"] == ["scores"] and pair["regressed_scores"] == ["helpfulness"]
    assert pair["verdict"] == "regressed"


def test_few_differences_are_insufficient_evidence(write_lines: Any, home: Path) -> None:
    """Under 10 non-zero differences the normal approximation is too lenient to decide: six
    cases that all fell by 0.1 give p = 0.00715 (all tied, W+ = 0, var = 6*7*13/24 - 210/48 =
    18.375, z = -10.5 / sqrt(18.375) = -2.4495), where the exact test could not go below
    1/64; the verdict is insufficient_evidence, and the pair does not regress on it."""
    lines = [run_line("few", f"f{i}", day, 0, "passed",
                  scores={"tone": 0.9 - (0.1 if day == LATEST else 0)})
             for day in [*BASELINE, LATEST] for i in range(6)]
    ingest([write_lines(lines)], home)
    (row,) = query(home, "select * from v_score_regressions")
    assert row["p_value"] == pytest.approx(_signed_rank_p([-0.1] * 6), rel=1e-6)
    assert row["p_value"] == pytest.approx(0.5 * math.erfc(10.5 / math.sqrt(18.375)
                                                           / math.sqrt(2)), rel=1e-6)
    assert (row["q_value"], row["n_nonzero"]) == (pytest.approx(row["p_value"]), 6)
    assert row["verdict"] == "insufficient_evidence"
    (pair,) = query(home, "select reasons, regressed from v_regressions")
    assert pair == {"reasons": [], "regressed": False}


def test_a_run_scored_twice_counts_once(write_lines: Any, home: Path) -> None:
    """A run with two rows of one score (a judge's evaluation event on each of two spans)
    counts the mean of them, so a case's mean is over its runs: latest runs scored {0, 0} and
    {1} give (0 + 1) / 2, not (0 + 0 + 1) / 3."""
    from datetime import UTC, datetime

    lines = [run_line("twice", "t", BASELINE[-1], 0, "passed", scores={"s": 1.0}),
             run_line("twice", "t", LATEST, 0, "passed"),
             run_line("twice", "t", LATEST, 1, "passed")]
    ns = int(datetime(LATEST.year, LATEST.month, LATEST.day, 1, tzinfo=UTC).timestamp()) * 10**9

    def span(run: int, span_id: str, value: float) -> dict[str, Any]:
        return {"name": "invoke_agent", "context": {"trace_id": f"trace-{run}",
                                                    "span_id": span_id},
                "start_time": ns, "end_time": ns + 10**9, "status": {"status_code": "OK"},
                "attributes": {"run_id": f"twice-t-{LATEST}-{run}"},
                "events": [{"name": "gen_ai.evaluation.result", "timestamp": ns + 10**9,
                            "attributes": {"gen_ai.evaluation.name": "s",
                                           "gen_ai.evaluation.score.value": value}}]}

    spans = [span(0, "a0", 0.0), span(0, "a1", 0.0), span(1, "b0", 1.0)]
    ingest([write_lines(lines), write_lines(spans, name="a.spans.jsonl")], home)
    assert len(query(home, "select * from scores where run_id like 'twice-t-2026-11-20-%'")) \
        == 3
    (row,) = query(home, "select * from v_score_regressions")
    assert (row["n_cases"], row["baseline_mean"], row["latest_mean"]) == (1, 1.0, 0.5)


def test_what_changed_names_the_prompt_not_the_sha(week: Path) -> None:
    rows = query(week, "select field, before, after, n_cases, n_flipped_cases, n_pass_to_fail "
                        "from v_what_changed where agent = 'prompted' order by field")
    # The git sha changes every night, so it varies within each case's baseline: no change.
    assert rows == [{"field": "system_prompt_id", "before": "sp-17", "after": "sp-18",
                     "n_cases": 40, "n_flipped_cases": 8, "n_pass_to_fail": 8}]
    (pair,) = query(week, "select n_pass_to_fail, reasons from v_regressions "
                           "where agent = 'prompted'")
    assert pair == {"n_pass_to_fail": 8, "reasons": ["pass_rate"]}


def test_the_report_and_compare_say_what_changed_and_which_scores_fell(week: Path) -> None:
    res = RUNNER.invoke(app, ["report", "--home", str(week)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("  REGRESSION prompted / gpt-4.1"))
    assert lines[at + 1] == ("    what changed: system_prompt_id sp-17 -> sp-18 in 8 of 8 "
                             "failing cases, 40 cases")
    judged = next(x for x in lines if x.startswith("  REGRESSION judged / gpt-4.1"))
    assert "scores fell: helpfulness 0.8 -> 0.567 on 12 cases (Wilcoxon p = 0.0028" in judged
    assert "git_sha" not in res.output
    # The headline counts the cases that really failed: 6 of trials, 8 of prompted.
    assert any(x.startswith("  14 test cases pass -> fail") for x in lines), lines
    page = (week / "reports" / "nightly-2026-11-20.html").read_text()
    assert "14 test cases pass → fail" in page
    card = page[page.index("prompted · gpt-4.1</h3>"):]
    card = card[:card.index("</div>")]
    assert "<code>system_prompt_id</code>" in card and "sp-17 → sp-18" in card
    assert "8 of 8 failing cases" in card and "git_sha" not in card
    scores_card = page[page.index("judged · gpt-4.1</h3>"):]
    assert "helpfulness" in scores_card[:scores_card.index("</div>")]

    out = RUNNER.invoke(app, ["compare", "--home", str(week), "--format", "json",
                              "--baseline", "day < DATE '2026-11-20'",
                              "--candidate", "day = DATE '2026-11-20'"])
    assert out.exit_code == 3, out.output
    groups = {g["group"]["agent"]: g for g in json.loads(out.stdout)}
    assert groups["prompted"]["what_changed"] == [
        {"field": "system_prompt_id", "before": "sp-17", "after": "sp-18", "n_cases": 40,
         "n_flipped_cases": 8, "n_pass_to_fail": 8}]
    scores = {s["name"]: s for s in groups["judged"]["scores"]}
    assert scores["helpfulness"]["verdict"] == "regressed"
    assert scores["helpfulness"]["candidate_mean"] == pytest.approx(0.8 + sum(HELPFULNESS) / 12)
    assert groups["judged"]["reasons"] == ["scores"]
    assert groups["trials"]["what_changed"] == []


def test_matches_scipy_where_installed() -> None:
    """Dev-only: the macros against scipy, when it is installed."""
    stats = pytest.importorskip("scipy.stats")
    import duckdb

    from transforms.contracts import models
    from transforms.warehouse import lookups

    con = duckdb.connect()
    lookups.install(con, models.load())
    for f in warehouse.sql_files():
        if f.parent.name == "macros":
            con.execute(f.read_text())
    for a, n0, b, n1 in [(0, 840, 1, 120), (3, 50, 8, 20), (5, 30, 0, 10), (12, 400, 9, 60)]:
        want = stats.fisher_exact([[b, n1 - b], [a, n0 - a]], alternative="greater")[1]
        got = con.execute("select fisher_exact_greater(?, ?, ?, ?)", [a, n0, b, n1]).fetchone()
        assert got is not None and got[0] == pytest.approx(want, rel=1e-9)
    want = stats.wilcoxon(HELPFULNESS, alternative="less", zero_method="wilcox",
                          correction=False, method="approx").pvalue
    assert _signed_rank_p(HELPFULNESS) == pytest.approx(want, rel=1e-6)


def test_ci_formats_and_the_webhook_carry_scores_and_changes(week: Path, tmp_path: Path) -> None:
    import junitparser

    from transforms.report import nightly

    xml, md = tmp_path / "nightly.xml", tmp_path / "nightly.md"
    res = RUNNER.invoke(app, ["report", "--home", str(week), "--junit", str(xml),
                              "--markdown", str(md)])
    assert res.exit_code == 0, res.output
    suites = {s.name: {c.name: c for c in s} for s in junitparser.JUnitXml.fromfile(str(xml))}
    (failure,) = suites["judged / gpt-4.1"]["scores"].result
    assert failure.message.startswith("REGRESSION judged / gpt-4.1: scores fell: helpfulness")
    (failure,) = suites["prompted / gpt-4.1"]["pass rate"].result
    assert "what changed: system_prompt_id sp-17 -> sp-18 in 8 of 8" in failure.text
    assert suites["prompted / gpt-4.1"]["scores"].is_passed
    text = md.read_text()
    # Markdown with its markup characters escaped.
    assert "score drop" in text
    assert "what changed: system\\_prompt\\_id sp-17 -\\> sp-18 in 8 of 8" in text
    con = warehouse.connect(week)
    try:
        payload = nightly.read(con, LATEST, 7).payload()
    finally:
        con.close()
    regressed = {p["agent"]: p for p in payload["regressed"]}
    assert regressed["judged"]["reasons"] == ["scores"]
    assert [s["name"] for s in regressed["judged"]["scores"]] == ["helpfulness"]
    assert regressed["prompted"]["what_changed"][0]["field"] == "system_prompt_id"
