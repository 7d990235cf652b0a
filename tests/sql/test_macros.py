"""The statistics macros against independent Python computations: the normal tail from
math.erfc, the two-proportion z-test by hand, exact McNemar from binomial coefficients."""

import math

import duckdb
import pytest

from transforms import warehouse
from transforms.contracts import models
from transforms.warehouse import lookups


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    c = duckdb.connect()
    lookups.install(c, models.load())  # the lookup tables canonical_model() reads
    for f in warehouse.sql_files():
        if f.parent.name == "macros":
            c.execute(f.read_text())
    return c


@pytest.mark.parametrize("z", [0.0, 0.3, 1.0, 1.959964, 2.575829, 3.5, -4.2, 6.0, 9.0])
def test_normal_tail_matches_erfc(con: duckdb.DuckDBPyConnection, z: float) -> None:
    got = con.execute("SELECT normal_two_sided_p(?)", [z]).fetchone()[0]
    want = math.erfc(abs(z) / math.sqrt(2))
    assert got == pytest.approx(want, rel=2e-7)
    assert 0 <= got <= 1


def _two_proportion(k1: int, n1: int, k2: int, n2: int) -> float:
    p = (k1 + k2) / (n1 + n2)
    z = (k2 / n2 - k1 / n1) / math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    return math.erfc(abs(z) / math.sqrt(2))


@pytest.mark.parametrize("k1,n1,k2,n2", [(9, 10, 2, 5), (63, 71, 3, 12), (700, 1000, 640, 1000),
                                         (5, 50, 9, 48), (30, 40, 30, 40)])
def test_two_proportion_p(con: duckdb.DuckDBPyConnection, k1: int, n1: int, k2: int,
                          n2: int) -> None:
    got = con.execute("SELECT two_proportion_p(?, ?, ?, ?)", [k1, n1, k2, n2]).fetchone()[0]
    assert got == pytest.approx(_two_proportion(k1, n1, k2, n2), rel=2e-7)


def test_two_proportion_edges(con: duckdb.DuckDBPyConnection) -> None:
    rows = con.execute("SELECT two_proportion_p(0, 0, 1, 2), two_proportion_p(5, 5, 3, 3), "
                       "two_proportion_p(0, 4, 0, 9)").fetchone()
    assert rows == (None, 1.0, 1.0)


@pytest.mark.parametrize("b,c", [(0, 0), (3, 0), (6, 1), (10, 10), (12, 3), (40, 20)])
def test_mcnemar_exact(con: duckdb.DuckDBPyConnection, b: int, c: int) -> None:
    n = b + c
    want = 1.0 if n == 0 else min(1.0, 2 * sum(math.comb(n, i)
                                               for i in range(min(b, c) + 1)) / 2 ** n)
    got = con.execute("SELECT mcnemar_exact_p(?, ?)", [b, c]).fetchone()[0]
    assert got == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("z", [-6.0, -2.326348, -1.767767, 0.0, 0.5, 1.959964, 4.0])
def test_normal_cdf_matches_erfc(con: duckdb.DuckDBPyConnection, z: float) -> None:
    got = con.execute("SELECT normal_cdf(?)", [z]).fetchone()[0]
    assert got == pytest.approx(0.5 * math.erfc(-z / math.sqrt(2)), rel=3e-7)


@pytest.mark.parametrize("k,n,p", [(0, 1, 0.875), (0, 2, 0.875), (2, 3, 0.5), (3, 5, 0.5),
                                   (4, 20, 0.6), (37, 120, 0.41), (199, 400, 0.55),
                                   (0, 50, 0.98)])
def test_binomial_cdf_sums_exact_terms(con: duckdb.DuckDBPyConnection, k: int, n: int,
                                       p: float) -> None:
    want = sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))
    got = con.execute("SELECT binomial_cdf(?, ?, ?)", [k, n, p]).fetchone()[0]
    assert got == pytest.approx(want, rel=1e-9, abs=1e-300)


def test_binomial_cdf_edges(con: duckdb.DuckDBPyConnection) -> None:
    # (1/8)^2 by hand: a case that passed 6 of 6 (rate 7/8 smoothed) failing twice.
    assert con.execute("SELECT binomial_cdf(0, 2, 7 / 8)").fetchone()[0] == \
        pytest.approx(1 / 64, rel=1e-12)
    assert con.execute("SELECT binomial_cdf(-1, 3, 0.5), binomial_cdf(3, 3, 0.5), "
                       "binomial_cdf(0, 3, 0.0), binomial_cdf(2, 3, 1.0), "
                       "binomial_cdf(NULL, 3, 0.5)").fetchone() == (0.0, 1.0, 1.0, 0.0, None)


@pytest.mark.parametrize("a,n,k", [(0, 2, 2), (1, 3, 2), (2, 3, 2), (2, 5, 2), (3, 5, 3),
                                   (3, 5, 4), (4, 4, 4), (7, 10, 5), (5, 5, 0)])
def test_choose_ratio_is_a_ratio_of_binomials(con: duckdb.DuckDBPyConnection, a: int, n: int,
                                              k: int) -> None:
    want = math.comb(a, k) / math.comb(n, k)
    got = con.execute("SELECT choose_ratio(?, ?, ?)", [a, n, k]).fetchone()[0]
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_min_detectable_drop_by_hand(con: duckdb.DuckDBPyConnection) -> None:
    # 54 of 71 in the baseline, 12 graded: p = 55/73; (2.326348 + 0.841621) *
    # sqrt(55/73 * 18/73 * (1/71 + 1/12)) = 3.167969 * sqrt(0.185775 * 0.097418)
    # = 3.167969 * 0.134530 = 0.426182.
    got = con.execute("SELECT min_detectable_drop(54, 71, 12)").fetchone()[0]
    assert got == pytest.approx(0.426182, abs=1e-6)
    assert con.execute("SELECT min_detectable_drop(0, 0, 5), min_detectable_drop(3, 4, 0)"
                       ).fetchone() == (None, None)


def test_cmh_terms_by_hand(con: duckdb.DuckDBPyConnection) -> None:
    # n1 = 1 latest run, n0 = 2 baseline runs, m = 2 passes, N = 3:
    # E = 1 * 2 / 3; V = 1 * 2 * 2 * 1 / (9 * 2) = 2/9.
    e, v = con.execute("SELECT cmh_expected(1, 2, 2), cmh_variance(1, 2, 2)").fetchone()
    assert (e, v) == (pytest.approx(2 / 3), pytest.approx(2 / 9))
    # 10 latest, 40 baseline, 30 passes, N = 50: E = 6; V = 10 * 40 * 30 * 20 / (2500 * 49).
    e, v = con.execute("SELECT cmh_expected(10, 40, 30), cmh_variance(10, 40, 30)").fetchone()
    assert (e, v) == (pytest.approx(6.0), pytest.approx(240000 / 122500))
    assert con.execute("SELECT cmh_expected(0, 4, 2), cmh_variance(3, 0, 2)").fetchone() == \
        (None, None)


def test_finding_scope_by_hand(con: duckdb.DuckDBPyConnection) -> None:
    # A keyed observation counts once in its run, else in its trace; no key, or neither a run
    # nor a trace: a finding of its own (null).
    assert con.execute(
        "SELECT finding_scope('run-1', 'tr-1', 'k'), finding_scope(NULL, 'tr-1', 'k'), "
        "finding_scope('run-1', NULL, 'k'), finding_scope('run-1', 'tr-1', NULL), "
        "finding_scope(NULL, NULL, 'k'), finding_scope(NULL, NULL, NULL)").fetchone() == \
        ("run-1", "trace:tr-1", "run-1", None, None, None)


def test_finding_scope_counts_repeats_once(con: duckdb.DuckDBPyConnection) -> None:
    # Seven observations of code X: key a in run-1 three times (its transcript and two LLM
    # calls' prompts) -> 1; key a in run-2 -> 1 more (another run); key b in trace tr-9 with
    # no run, twice -> 1; two unkeyed observations in run-1 -> 2 (each its own). 1+1+1+2 = 5.
    got = con.execute("""
        WITH obs(run_id, trace_id, finding_key) AS (VALUES
            ('run-1', 'tr-1', 'a'), ('run-1', 'tr-1', 'a'), ('run-1', NULL, 'a'),
            ('run-2', 'tr-2', 'a'), (NULL, 'tr-9', 'b'), (NULL, 'tr-9', 'b'),
            ('run-1', 'tr-1', NULL), ('run-1', 'tr-1', NULL)),
        scoped AS (SELECT finding_key, finding_scope(run_id, trace_id, finding_key) AS scope
                   FROM obs)
        SELECT count(*) FILTER (WHERE scope IS NULL)
               + count(DISTINCT (scope, finding_key)) FILTER (WHERE scope IS NOT NULL)
        FROM scoped""").fetchone()[0]
    assert got == 5


@pytest.mark.parametrize("day,price_from,price_to,want", [
    ("2025-03-01", None, None, True),  # a single price: every day
    ("2025-03-01", "2025-03-01", None, True),  # from its first day on
    ("2025-02-28", "2025-03-01", None, False),  # not the day before
    ("2025-03-31", "2025-03-01", "2025-04-01", True),
    ("2025-04-01", "2025-03-01", "2025-04-01", False),  # the next period's first day is not
    ("2025-01-01", None, "2025-04-01", True),
    ("9000-06-30", "2025-03-01", None, True),
    ("0002-01-01", None, "2025-04-01", True),
])
def test_price_in_force_by_hand(con: duckdb.DuckDBPyConnection, day: str, price_from: str | None,
                                price_to: str | None, want: bool) -> None:
    got = con.execute("SELECT price_in_force(?::DATE, ?::DATE, ?::DATE)",
                      [day, price_from, price_to]).fetchone()[0]
    assert got is want


@pytest.mark.parametrize("n,r", [(0, 0), (5, 0), (5, 5), (10, 3), (960, 120), (4000, 1777)])
def test_log_choose_is_the_log_of_comb(con: duckdb.DuckDBPyConnection, n: int, r: int) -> None:
    got = con.execute("SELECT log_choose(?, ?)", [n, r]).fetchone()[0]
    assert got == pytest.approx(math.log(math.comb(n, r)), rel=1e-9, abs=1e-9)


def _fisher_greater(a: int, n0: int, b: int, n1: int) -> float:
    """P(X >= b), X hypergeometric: n1 draws from n0 + n1 runs holding a + b events."""
    n, k = n0 + n1, a + b
    return sum(math.comb(k, i) * math.comb(n - k, n1 - i)
               for i in range(b, min(k, n1) + 1)) / math.comb(n, n1)


@pytest.mark.parametrize("a,n0,b,n1", [(0, 840, 1, 120), (0, 35, 5, 5), (0, 1, 1, 2),
                                       (3, 50, 8, 20), (5, 30, 0, 10), (12, 400, 9, 60),
                                       (70, 70, 10, 10), (2, 9, 3, 4)])
def test_fisher_exact_greater_sums_hypergeometric_terms(
        con: duckdb.DuckDBPyConnection, a: int, n0: int, b: int, n1: int) -> None:
    got = con.execute("SELECT fisher_exact_greater(?, ?, ?, ?)", [a, n0, b, n1]).fetchone()[0]
    assert got == pytest.approx(_fisher_greater(a, n0, b, n1), rel=1e-9)


def test_fisher_exact_greater_by_hand(con: duckdb.DuckDBPyConnection) -> None:
    got = con.execute("SELECT fisher_exact_greater(0, 840, 1, 120), "
                      "fisher_exact_greater(0, 35, 5, 5), fisher_exact_greater(4, 10, 0, 5), "
                      "fisher_exact_greater(0, 0, 1, 5), fisher_exact_greater(1, 5, 0, 0)"
                      ).fetchone()
    # One crash after 840 clean runs: it falls among the 120 latest of 960, 120 / 960; five of
    # five after none in 35: 1 / C(40, 5); no event on the latest side: 1; an empty side: null.
    assert got[:3] == (pytest.approx(0.125, rel=1e-9), pytest.approx(1 / 658008, rel=1e-9),
                       1.0)
    assert got[3:] == (None, None)


def test_signed_rank_p_by_hand(con: duckdb.DuckDBPyConnection) -> None:
    # Differences 1, -2, 2, 3, 0, -3, 3: the zero dropped, n = 6; sizes 1 (rank 1), 2 twice
    # (2.5), 3 three times (5): W+ = 1 + 2.5 + 5 + 5 = 13.5; ties (8 - 2) + (27 - 3) = 30;
    # var = 6*7*13/24 - 30/48 = 22.125; z = (13.5 - 10.5) / sqrt(22.125).
    z = 3 / math.sqrt(22.125)
    drop, rise = con.execute("SELECT signed_rank_p(13.5, 6, 30), signed_rank_p(21 - 13.5, 6, 30)"
                             ).fetchone()
    assert drop == pytest.approx(0.5 * math.erfc(-z / math.sqrt(2)), rel=3e-7)
    assert rise == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)), rel=3e-7)
    assert con.execute("SELECT signed_rank_p(0, 0, 0), signed_rank_p(NULL, 3, 0)").fetchone() \
        == (None, None)


def test_run_tokens_counts_a_known_side(con: duckdb.DuckDBPyConnection) -> None:
    got = con.execute("SELECT run_tokens(1200, 300), run_tokens(1200, NULL), "
                      "run_tokens(NULL, 300), run_tokens(NULL, NULL)").fetchone()
    assert got == (1500, 1200, 300, None)
