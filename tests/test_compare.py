"""`runlake compare` on constructed suites, against figures worked out by hand: model B beats
model A on the same 40 test cases (the stratified CMH test, Benjamini–Hochberg across the
groups, mde, the verdict), a change of case mix that fools an unstratified comparison and not
the stratified one, the cases run on one side only listed apart and never counted, pass@k, the
predicates refused before anything runs (the command line and CI's formats:
tests/test_compare_cli.py)."""

import math
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from tests import memory_lake
from tests.conftest import to_line
from transforms import warehouse
from transforms.compare import JSON_KEYS, compare
from transforms.errors import InputError
from transforms.verdict.reading import rows

RUNNER = CliRunner()
DAY = date(2026, 11, 20)
BEFORE = DAY - timedelta(days=1)


def _run(agent: str, model: str, case: str, passed: bool, i: int = 0,
         day: date = DAY) -> dict[str, Any]:
    return {"run_id": f"{agent}-{model}-{case}-{i}", "agent": agent, "test_case_id": case,
            "started_at": f"{day}T{i // 60:02d}:{i % 60:02d}:00Z",
            "outcome": {"status": "passed" if passed else "failed"},
            "response": {"final_response": f"{case} answered",
                         "messages": [{"role": "user", "content": f"Please do {case}."},
                                      {"role": "assistant", "content": f"{case} answered"}],
                         "metadata": {"model": model, "total_input_tokens": 100,
                                      "total_output_tokens": 20 if model == "A" else 30,
                                      "agent_runtime_ms": 1000}}}


def _paired(agent: str, both_pass: int, both_fail: int, b_only: int, a_only: int,
            odd: str = "") -> list[dict[str, Any]]:
    """One run per case per model: A (on the day before) and B (on the day), the cases split
    into both passed, both failed, B passed and A failed, A passed and B failed. `odd` names
    the first of the A-passed-B-failed cases instead of its number."""
    out = []
    outcomes = ([(True, True)] * both_pass + [(False, False)] * both_fail
                + [(False, True)] * b_only + [(True, False)] * a_only)
    for n, (a, b) in enumerate(outcomes):
        case = odd if odd and n == both_pass + both_fail + b_only else f"{agent}-{n:02d}"
        out += [_run(agent, "A", case, a, n, BEFORE), _run(agent, "B", case, b, n, DAY)]
    return out


# Three agents, each on the same 40 cases with model A (baseline) and model B (candidate).
# In a stratum (a case) with one run a side, n1 = n0 = 1, N = 2; CMH's E = n1 * m / N and
# V = n1 * n0 * m * (N - m) / (N^2 (N - 1)). Concordant cases (m = 0 or 2) add a - E = 0 and
# V = 0; a case only B passed adds a - E = 1 - 1/2 = +1/2, one only A passed 0 - 1/2 = -1/2,
# each with V = 1 * 1 * 1 * 1 / (4 * 1) = 1/4.
# x: 14 both pass, 8 both fail, 16 only B, 2 only A: A 16/40 = 40%, B 30/40 = 75%;
#    sum(a - E) = 16/2 - 2/2 = 7, sum V = 18/4 = 4.5, z = 7 / sqrt(4.5) = 3.29983;
#    drop p = Phi(3.29983) = 0.999516, rise p = Phi(-3.29983) = 4.8371e-4.
# y: 20 both pass, 10 both fail, 6 only B, 4 only A: A 24/40, B 26/40;
#    sum(a - E) = 3 - 2 = 1, sum V = 10/4 = 2.5, z = 1 / sqrt(2.5) = 0.632456;
#    drop p = 0.736455, rise p = 0.263545.
# z: 20 both pass, 5 both fail, 0 only B, 15 only A: A 35/40, B 20/40;
#    sum(a - E) = -15/2 = -7.5, sum V = 15/4 = 3.75, z = -7.5 / sqrt(3.75) = -3.872983;
#    drop p = Phi(-3.872983) = 5.37556e-5, rise p = 0.999946.
# One more case of x ran with A only: listed apart, never counted.
SUITE = (_paired("x", 14, 8, 16, 2) + _paired("y", 20, 10, 6, 4)
         + _paired("z", 20, 5, 0, 15, odd="z-<i>odd</i>")
         + [_run("x", "A", "x-only-a", True, 99, BEFORE)])
BASELINE, CANDIDATE = "model = 'A'", "model = 'B'"


def phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2))


def write_suite(folder: Path, name: str, lines: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.responses.jsonl"
    path.write_bytes(b"".join(to_line(x) + b"\n" for x in lines))
    return path


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    con = memory_lake.connect([write_suite(tmp_path_factory.mktemp("suite"), "suite", SUITE)])
    yield con
    con.close()


def test_b_beats_a_on_the_same_40_cases(suite: duckdb.DuckDBPyConnection) -> None:
    result = compare(suite, BASELINE, CANDIDATE, "agent")
    g = {r.label: r.row for r in result.groups}
    assert set(g) == {"x", "y", "z"}
    x, y, z = g["x"], g["y"], g["z"]
    assert (x["baseline_n_graded"], x["candidate_n_graded"]) == (40, 40)  # x-only-a left out
    assert (x["baseline_pass_rate"], x["candidate_pass_rate"]) == (0.4, 0.75)
    assert x["n_strata"] == y["n_strata"] == z["n_strata"] == 40
    assert (x["n_fail_to_pass"], x["n_pass_to_fail"]) == (16, 2)
    # CMH, as in the comment on SUITE.
    assert x["cmh_p_value"] == pytest.approx(phi(7 / math.sqrt(4.5)), rel=1e-6)
    assert x["cmh_p_value"] == pytest.approx(0.999516, abs=1e-6)
    assert x["rise_p_value"] == pytest.approx(4.8371e-4, rel=1e-4)
    assert y["rise_p_value"] == pytest.approx(phi(-1 / math.sqrt(2.5)), rel=1e-6)
    assert y["rise_p_value"] == pytest.approx(0.263545, abs=1e-6)
    assert z["cmh_p_value"] == pytest.approx(phi(-7.5 / math.sqrt(3.75)), rel=1e-5)
    assert z["cmh_p_value"] == pytest.approx(5.37556e-5, rel=1e-4)
    # Benjamini–Hochberg over the 3 groups. Drops: z 5.37556e-5 (rank 1), y 0.736455 (2),
    # x 0.999516 (3): q_x = 0.999516 * 3/3 = 0.999516; q_y = min(0.736455 * 3/2 = 1.10468,
    # q_x) = 0.999516; q_z = min(5.37556e-5 * 3/1 = 1.61267e-4, q_y) = 1.61267e-4.
    assert z["q_value"] == pytest.approx(1.61267e-4, rel=1e-4)
    assert x["q_value"] == pytest.approx(0.999516, abs=1e-6)
    assert y["q_value"] == pytest.approx(0.999516, abs=1e-6)
    # Rises: x 4.8371e-4 (1), y 0.263545 (2), z 0.999946 (3): q_z = 0.999946;
    # q_y = min(0.263545 * 3/2 = 0.395317, q_z) = 0.395317; q_x = min(4.8371e-4 * 3 =
    # 1.45114e-3, q_y) = 1.45114e-3 < 0.01: B's rise on x is real.
    assert x["rise_q_value"] == pytest.approx(1.45114e-3, rel=1e-4)
    assert y["rise_q_value"] == pytest.approx(0.395317, rel=1e-5)
    # mde = (z_0.99 + z_0.80) * sqrt(p (1 - p) (1/40 + 1/40)), p = (A's passes + 1) / 42:
    # x: p = 17/42, p (1 - p) = 0.240930, * 0.05 = 0.0120465, sqrt = 0.109757, * 3.167969
    # = 0.347705 (y: p = 25/42, the same product); z: p = 36/42, p (1 - p) = 0.122449,
    # sqrt(0.00612245) = 0.0782461, * 3.167969 = 0.247881.
    assert x["mde"] == pytest.approx(0.347705, rel=1e-5)
    assert y["mde"] == pytest.approx(0.347705, rel=1e-5)
    assert z["mde"] == pytest.approx(0.247881, rel=1e-5)
    assert (x["verdict"], y["verdict"], z["verdict"]) == ("improved", "no_change", "regressed")
    assert z["reasons"] == ["pass_rate"] and result.any_regressed
    # Tokens: 120 per run with A, 130 with B.
    assert (x["baseline_tokens_per_run"], x["candidate_tokens_per_run"]) == (120, 130)
    assert result.one_sided == [{"agent": "x", "model": None, "test_case_id": "x-only-a",
                                 "side": "baseline", "n_runs": 1, "n_graded": 1,
                                 "n_passed": 1}]
    # The JSON object of a group: exactly the keys the command documents (no pass_at_k:
    # no case repeats).
    assert list(result.groups[0].json()) == list(JSON_KEYS)
    assert {g.label: g.json()["group"] for g in result.groups}["x"] == {"agent": "x"}


def test_the_same_statistics_as_v_regressions(samples_lake: Any) -> None:
    """On the samples, the last night against the week before by agent and model: the
    stratified test and its strata are v_regressions' own (a case on one side only adds
    nothing to CMH), and where no case is on one side, every figure is the same."""
    con = warehouse.connect(samples_lake.home)
    try:
        result = compare(con, "day between DATE '2026-11-13' and DATE '2026-11-19'",
                         "day = DATE '2026-11-20'", "agent,model")
        nightly = {(r["agent"], r["model"]): r for r in rows(
            con, "SELECT * FROM regressions(DATE '2026-11-20', 7)")}
    finally:
        con.close()
    one_sided = {(r["agent"], r["model"]) for r in result.one_sided}
    assert len(result.groups) == len(nightly) >= 6
    same = 0
    for g in result.groups:
        n = nightly[(g.row["agent"], g.row["model"])]
        assert g.row["n_strata"] == n["n_strata"]
        assert g.row["cmh_p_value"] == pytest.approx(n["cmh_p_value"], rel=1e-12) \
            if n["cmh_p_value"] is not None else g.row["cmh_p_value"] is None
        if (g.row["agent"], g.row["model"]) not in one_sided:
            same += 1
            for k in ("baseline_n_graded", "baseline_pass_rate", "mde", "error_p_value",
                      "n_pass_to_fail", "n_fail_to_pass", "paired_p_value"):
                assert g.row[k] == n[k], k
            assert g.row["candidate_n_graded"] == n["latest_n_graded"]
    assert same >= 1
    travel = next(g for g in result.groups if g.label == "travel-agent / gpt-4o")
    assert travel.verdict == "regressed"
    assert travel.row["cmh_p_value"] == pytest.approx(0.00026, abs=1e-5)


def test_pass_at_k_where_cases_repeat(tmp_path: Path) -> None:
    # Case k1: A 2 of 3 runs passed, B 3 of 3. pass@k = 1 - C(n - c, k) / C(n, k), pass^k =
    # C(c, k) / C(n, k): A pass@2 = 1 - C(1, 2)/C(3, 2) = 1 - 0 = 1, pass^2 = C(2, 2)/C(3, 2)
    # = 1/3, pass^3 = C(2, 3)/C(3, 3) = 0; B pass^2 = pass^3 = 1.
    lines = ([_run("k", "A", "k1", i < 2, i, BEFORE) for i in range(3)]
             + [_run("k", "B", "k1", True, i) for i in range(3)])
    con = memory_lake.connect([write_suite(tmp_path, "k", lines)])
    try:
        (group,) = compare(con, BASELINE, CANDIDATE, "agent").groups
    finally:
        con.close()
    by_k = {r["k"]: r for r in group.pass_at_k}
    assert sorted(by_k) == [1, 2, 3]
    assert by_k[2]["baseline_pass_at_k"] == pytest.approx(1.0)
    assert by_k[2]["baseline_pass_hat_k"] == pytest.approx(1 / 3)
    assert by_k[3]["baseline_pass_hat_k"] == pytest.approx(0.0)
    assert by_k[3]["candidate_pass_hat_k"] == pytest.approx(1.0)
    assert by_k[1]["baseline_pass_at_k"] == pytest.approx(2 / 3)
    assert group.json()["pass_at_k"][1]["k"] == 2
    assert "pass@3 100% -> 100%, pass^3 0% -> 100%" in group.line()


def test_json_pass_at_k_lists_only_the_k_both_sides_have(tmp_path: Path) -> None:
    """The baseline ran case k1 5 times, the candidate 2 times: the macro has rows for k = 1..5,
    the candidate's empty beyond 2; the JSON lists k = 1 and 2 only, every value a number. When
    the candidate runs each case once, nothing repeats on both sides: no pass_at_k."""
    lines = ([_run("k", "A", "k1", i < 3, i, BEFORE) for i in range(5)]
             + [_run("k", "B", "k1", i == 0, i) for i in range(2)])
    con = memory_lake.connect([write_suite(tmp_path / "both", "k", lines)])
    try:
        (group,) = compare(con, BASELINE, CANDIDATE, "agent").groups
    finally:
        con.close()
    assert [r["k"] for r in group.pass_at_k] == [1, 2, 3, 4, 5]
    listed = group.json()["pass_at_k"]
    assert [r["k"] for r in listed] == [1, 2]
    assert all(v is not None for r in listed for v in r.values())
    # B: 1 of 2 passed: pass@2 = 1, pass^2 = 0; A: 3 of 5: pass^2 = C(3, 2) / C(5, 2) = 0.3.
    assert listed[1]["candidate_pass_at_k"] == pytest.approx(1.0)
    assert listed[1]["baseline_pass_hat_k"] == pytest.approx(0.3)
    assert "pass@2 90% -> 100%, pass^2 30% -> 0%" in group.line()  # A pass@2 = 1 - 1/10
    once = ([_run("k", "A", "k1", True, i, BEFORE) for i in range(5)]
            + [_run("k", "B", "k1", True, 0)])
    con = memory_lake.connect([write_suite(tmp_path / "once", "k", once)])
    try:
        (group,) = compare(con, BASELINE, CANDIDATE, "agent").groups
    finally:
        con.close()
    assert "pass_at_k" not in group.json()
    assert list(group.json()) == list(JSON_KEYS)


# The case-mix trap, twice.
# only-easy: A ran 20 easy cases (all passed but e00, e01) and 20 hard ones (2 passed); B ran
# the easy cases only (all passed but e02, e03). Over everything each side ran, A 20/40 = 50%
# and B 18/20 = 90%: pooled 38/60, se = sqrt(38/60 * 22/60 * (1/40 + 1/20)) = 0.131972,
# z = 0.4 / 0.131972 = 3.0310, two-sided p = 0.00244: "B is better". Counted on the same 20
# easy cases: 18/20 each, e00 and e01 only B passed (+1/2 each), e02 and e03 only A (-1/2
# each): sum(a - E) = 0, CMH z = 0, p = 0.5 both ways. The 20 hard cases are listed apart.
ONLY_EASY = ([_run("only-easy", "A", f"e{i:02d}", i >= 2, i, BEFORE) for i in range(20)]
             + [_run("only-easy", "A", f"h{i:02d}", i < 2, 20 + i, BEFORE) for i in range(20)]
             + [_run("only-easy", "B", f"e{i:02d}", i not in (2, 3), i) for i in range(20)])
# mostly-easy: A ran 10 easy cases once (9 passed) and 10 hard cases 4 times (1 pass of 4
# each); B ran the easy cases 4 times (9 cases always passed, e09 never) and the hard cases
# once (h00 passed). Unstratified: A 19/50 = 38%, B 37/50 = 74%; pooled 56/100, se =
# sqrt(0.56 * 0.44 * (2/50)) = 0.099277, z = 0.36 / 0.099277 = 3.6262, two-sided p = 2.9e-4.
# By case: easy cases have m = 0 or N (V = 0, a - E = 0); h00: n1 = 1, n0 = 4, m = 2, N = 5:
# E = 2/5, a - E = +0.6, V = 1*4*2*3 / (25*4) = 0.24; h01..h09: m = 1: E = 1/5, a - E = -0.2,
# V = 1*4*1*4 / (25*4) = 0.16 (nine: -1.8 and 1.44). z = -1.2 / sqrt(1.68) = -0.925820:
# drop p = Phi(-0.925820) = 0.177270, rise p = 0.822730. Nothing better on the same cases.
MOSTLY_EASY = ([_run("mostly-easy", "A", f"e{i:02d}", i < 9, i, BEFORE) for i in range(10)]
               + [_run("mostly-easy", "A", f"h{i:02d}", r == 0, 10 + 4 * i + r, BEFORE)
                  for i in range(10) for r in range(4)]
               + [_run("mostly-easy", "B", f"e{i:02d}", i < 9, 4 * i + r)
                  for i in range(10) for r in range(4)]
               + [_run("mostly-easy", "B", f"h{i:02d}", i == 0, 40 + i) for i in range(10)])


def test_a_change_of_case_mix_does_not_fool_the_stratified_test(tmp_path: Path) -> None:
    con = memory_lake.connect([write_suite(tmp_path, "mix", ONLY_EASY + MOSTLY_EASY)])
    try:
        # The unstratified comparison, over everything each predicate chose, favours B.
        naive = con.execute(
            "SELECT agent, two_proportion_p(count(*) FILTER (WHERE model = 'A' AND status = "
            "'passed'), count(*) FILTER (WHERE model = 'A'), count(*) FILTER (WHERE model = "
            "'B' AND status = 'passed'), count(*) FILTER (WHERE model = 'B')) FROM runs "
            "GROUP BY agent").fetchall()
        result = compare(con, BASELINE, CANDIDATE, "agent")
    finally:
        con.close()
    assert dict(naive)["only-easy"] == pytest.approx(math.erfc(3.0310 / math.sqrt(2)), rel=1e-3)
    g = {r.label: r.row for r in result.groups}
    only, mostly = g["only-easy"], g["mostly-easy"]
    assert (only["baseline_n_graded"], only["candidate_n_graded"]) == (20, 20)
    assert only["cmh_p_value"] == pytest.approx(0.5, abs=1e-7)
    assert only["rise_p_value"] == pytest.approx(0.5, abs=1e-7)
    assert only["verdict"] == "no_change"
    assert sorted(r["test_case_id"] for r in result.one_sided) == [f"h{i:02d}" for i in range(20)]
    assert {r["side"] for r in result.one_sided} == {"baseline"}
    # mostly-easy: the counted runs' unstratified test calls it significant, for B.
    assert mostly["p_value"] == pytest.approx(math.erfc(3.6262 / math.sqrt(2)), rel=1e-3)
    assert mostly["is_significant"] and mostly["candidate_pass_rate"] == 0.74
    assert mostly["n_strata"] == 20
    assert mostly["cmh_p_value"] == pytest.approx(0.177270, abs=1e-6)
    assert mostly["rise_p_value"] == pytest.approx(0.822730, abs=1e-6)
    assert mostly["verdict"] == "no_change"


@pytest.mark.parametrize("predicate", [
    "COPY (select 1) TO '{out}'",
    "run_id in (select run_id from read_csv('{secret}'))",
    "read_csv('{secret}') is not null",
    "exists (select * from read_text('{secret}'))",
    "ATTACH '{out}' AS other",
    "model = 'A'; COPY (select 1) TO '{out}'",
    "model = 'A';",
    "model = (select max(model) from runs)",
    "query_table('runs') is not null",
    "getvariable('x') = 1",
    "model = ?",
    "nosuchcolumn = 1",
    "other.model = 'A'",
    "model",
    "",
    "(" * 50 + "model = 'A'" + ")" * 50,
    "not " * 300 + "model = 'A'",
    "(" * 2000 + "1" + ")" * 2000,
])
def test_refused_predicates(suite: duckdb.DuckDBPyConnection, tmp_path: Path,
                            predicate: str) -> None:
    text = predicate.format(out=tmp_path / "x.csv", secret=tmp_path / "secret.csv")
    (tmp_path / "secret.csv").write_text("password\nhunter2\n")
    for baseline, candidate in ((text, CANDIDATE), (BASELINE, text)):
        with pytest.raises(InputError) as e:
            compare(suite, baseline, candidate, "agent")
        assert "\n" not in str(e.value) and "hunter2" not in str(e.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secret.csv"]
