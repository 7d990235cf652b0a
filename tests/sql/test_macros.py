"""The statistics macros against independent Python computations: the normal tail from
math.erfc, the two-proportion z-test by hand, exact McNemar from binomial coefficients."""

import math

import duckdb
import pytest

from transforms import warehouse
from transforms.contracts import models


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    c = duckdb.connect()
    models.install(c, models.load())  # the lookup tables canonical_model() reads
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
