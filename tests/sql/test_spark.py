"""The warehouse on Spark: `runlake views --dialect spark` run in a local pyspark session over
the samples' lake gives the same rows as DuckDB.

The Delta jars cannot be fetched here, so each lake table is registered in Spark from its
current Delta file list (the files delta-rs names), in place of `delta.`<uri>``."""

import datetime
import json
import math
import shutil
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from sqlglot import exp

from devtools.prerequisites import JAVA_HINT, JAVA_MIN, java_problem, spark_skip_reason
from tests.sql.conftest import SAMPLES
from transforms import warehouse
from transforms.contracts.schemas import TABLES
from transforms.ingest import ingest
from transforms.lake import Lake, lines_path
from transforms.warehouse import dialects, scripts
from transforms.warehouse.staging import lines_view

# Slow: a local Spark session, a JVM (`make test-fast` leaves it out). Without Java the
# module is skipped, saying why (`make test` says so before it starts), unless
# RUNLAKE_REQUIRE_SPARK is set (.ci/run): then it fails.
_SKIP = spark_skip_reason()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(_SKIP is not None, reason=_SKIP or "")]

COMPARED = ("v_pass_rates", "v_token_usage", "v_runtime", "v_tool_frequency", "v_flag_summary",
            "v_regressions", "v_test_case_flips", "v_missing_test_cases", "v_truncations",
            "v_contract_violations", "v_runs", "v_crashed_runs", "v_case_history",
            "v_pass_at_k", "v_score_regressions", "v_what_changed", "runs", "flags",
            "tool_calls", "messages",
            "llm_calls", "spans")


@pytest.fixture(scope="module")
def home(samples_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The samples (a copy of the shared lake), and spans whose clock is off: named by a run's
    run_id a year after it, and sharing another run's trace 40 days before it
    (span_outside_run_window, whose detail Spark must spell as DuckDB does)."""
    own = tmp_path_factory.mktemp("spark-samples") / "home"
    shutil.copytree(samples_home, own)
    con = warehouse.connect(own)
    try:
        a_id, a_start = con.execute("SELECT run_id, started_at FROM runs WHERE started_at "
                                    "IS NOT NULL ORDER BY run_id LIMIT 1").fetchall()[0]
        b_trace, b_start = con.execute("SELECT trace_id, started_at FROM runs WHERE trace_id "
                                       "IS NOT NULL ORDER BY run_id DESC LIMIT 1").fetchall()[0]
    finally:
        con.close()

    def span(span_id: str, trace_id: str, start: datetime.datetime,
             attrs: dict[str, str]) -> dict[str, Any]:
        ns = int(start.timestamp()) * 10**9
        return {"name": "step", "context": {"trace_id": trace_id, "span_id": span_id,
                                            "trace_state": ""},
                "kind": "SpanKind.INTERNAL", "start_time": ns, "end_time": ns + 10**6,
                "status": {"status_code": "StatusCode.OK"}, "attributes": attrs,
                "resource": {"attributes": {"service.name": "clock-off"}, "schema_url": ""}}

    year, days_40 = datetime.timedelta(days=365), datetime.timedelta(days=40)
    spans = [span("far-1", "t-far", a_start + year, {"run_id": a_id}),
             span("far-2", "t-far", a_start + year, {"run_id": a_id}),
             span("far-3", b_trace, b_start - days_40, {})]
    landing = tmp_path_factory.mktemp("clock-off") / "clock-off.spans.jsonl"
    landing.write_text("".join(json.dumps(s) + "\n" for s in spans))
    ingest([landing], own, tools=SAMPLES / "tools.yaml")
    return own


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    problem = java_problem()
    if problem is not None:
        pytest.fail(f"the Spark tests need Java {JAVA_MIN} or newer ({problem}; {JAVA_HINT})")
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("runlake-tests")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.catalogImplementation", "in-memory")
               .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-wh")))
               .config("spark.sql.session.timeZone", "UTC")
               .getOrCreate())
    session.sparkContext.setLogLevel("OFF")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def built(home: Path, spark: Any) -> duckdb.DuckDBPyConnection:
    """The samples' warehouse in DuckDB, and the same statements run in Spark."""
    con = warehouse.connect(home)
    lake = Lake(home)
    versions = lake.tables_at()
    naming = scripts.Naming("spark", "runlake")
    relations = dialects.relations(con)
    spark.sql("CREATE SCHEMA IF NOT EXISTS runlake")
    sources = {}
    for t in TABLES:
        view = lines_view(t)
        files = lake.file_uris(lines_path(t), versions[lines_path(t)])
        assert files, f"the samples write the {t} table"
        spark.read.option("mergeSchema", "true").parquet(*files) \
            .write.mode("overwrite").saveAsTable(f"runlake.lake_{t}")
        cols = ", ".join(f"CAST({c} AS {exp.DataType.build(ty, dialect='duckdb').sql('spark')})"
                         f" AS {c}" for c, ty in relations["staging"][view].items())
        sources[view] = f"SELECT {cols} FROM runlake.lake_{t}"
    for statement in scripts.translate(con, naming, sources):
        spark.sql(statement)
    return con


def _value(v: Any) -> Any:
    if isinstance(v, Decimal):
        v = float(v)
    if isinstance(v, float):
        return None if math.isnan(v) else float(f"{v:.9g}")
    if isinstance(v, datetime.datetime):
        return v.astimezone(datetime.UTC).replace(tzinfo=None) if v.tzinfo else v
    if isinstance(v, list | tuple):
        return tuple(_value(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _value(x)) for k, x in v.items()))
    return v


def _rows(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted((tuple(_value(v) for v in r) for r in rows), key=repr)


@pytest.mark.parametrize("view", COMPARED)
def test_spark_gives_duckdbs_rows(built: duckdb.DuckDBPyConnection, spark: Any,
                                  view: str) -> None:
    columns = [r[0] for r in built.execute(f"DESCRIBE {view}").fetchall()]
    listing = ", ".join(columns)
    expected = _rows(built.execute(f"SELECT {listing} FROM {view}").fetchall())
    got = _rows([tuple(r) for r in spark.sql(f"SELECT {listing} FROM runlake.{view}")
                 .collect()])
    assert expected, f"{view} has rows on the samples"
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        assert a == b, f"{view}: Spark {a} != DuckDB {b}"


def test_spark_finds_spans_out_of_their_runs_reach(built: duckdb.DuckDBPyConnection,
                                                   spark: Any) -> None:
    """The spans planted with a wrong clock raise their findings in both engines, word for
    word (the rows of flags are compared above; here, that there are some)."""
    query = ("SELECT run_id, span_id, n_seen, detail FROM {}flags "
             "WHERE code = 'span_outside_run_window' ORDER BY span_id")
    expected = built.execute(query.format("")).fetchall()
    assert [(r[1], r[2]) for r in expected] == [("far-1", 2), ("far-3", 1)]
    assert "starts 365 days after its run" in expected[0][3]
    assert "starts 40 days before the day" in expected[1][3]
    assert [tuple(r) for r in spark.sql(query.format("runlake.")).collect()] == expected


COMPARE = ("WITH compare_sides AS (SELECT run_id, day < DATE '2026-11-20' AS is_baseline, "
           "day = DATE '2026-11-20' AS is_candidate FROM runs "
           "WHERE day BETWEEN DATE '2026-11-13' AND DATE '2026-11-20'), "
           "compared_runs AS (SELECT * FROM compare_selection('compare_sides', {a}, {m})) "
           "SELECT * FROM {macro}")


@pytest.mark.parametrize(("by_agent", "by_model", "macro"), [
    ("true", "true", "compare_runs('compare_sides', true, true)"),
    ("true", "false", "compare_runs('compare_sides', true, false)"),
    ("false", "true", "compare_pass_at_k('compared_runs')"),
    ("true", "false", "compare_one_sided('compared_runs')"),
    ("true", "true", "compare_cases('compared_runs')"),
])
def test_spark_compares_as_duckdb_does(built: duckdb.DuckDBPyConnection, spark: Any,
                                       by_agent: str, by_model: str, macro: str) -> None:
    """`runlake compare`'s table macros, translated like the views, give DuckDB's rows: the
    last night against the week before."""
    query = COMPARE.format(a=by_agent, m=by_model, macro=macro)
    expected = _rows(built.execute(query).fetchall())
    naming = scripts.Naming("spark", "runlake")
    tree = dialects.translate_query(query, dialects.macros("spark"),
                                    dialects.relations(built), "spark")
    got = _rows([tuple(r) for r in spark.sql(scripts.rename(tree, naming).sql("spark"))
                 .collect()])
    assert expected, f"{macro} has rows on the samples"
    assert got == expected


STATISTICS = ("select a, n0, b, n1, fisher_exact_greater(a, n0, b, n1) as p, "
              "log_choose(n0 + n1, n1) as lc, signed_rank_p(b, n1, 0) as w "
              "from (values (0, 840, 1, 120), (900, 1000, 0, 1000), (900, 1000, 1, 1000), "
              "(3, 50, 8, 20), (5, 30, 0, 10), (0, 35, 5, 5), (400, 1000, 300, 500), "
              "(1, 5, 0, 3)) as t(a, n0, b, n1) order by a, n0, b, n1")


def test_spark_computes_the_statistics_as_duckdb_does(built: duckdb.DuckDBPyConnection,
                                                      spark: Any) -> None:
    """The macros Spark has its own bodies of (no lgamma there): Fisher's exact test, the log
    of a binomial coefficient, the signed-rank p, on DuckDB's figures, also where the first
    term of Fisher's sum is far below the mode (900 of 1000 then 1 of 1000: p near 1)."""
    expected = built.execute(STATISTICS).fetchall()
    tree = dialects.translate_query(STATISTICS, dialects.macros("spark"),
                                    dialects.relations(built), "spark")
    got = [tuple(r) for r in spark.sql(tree.sql("spark")).collect()]
    assert len(got) == len(expected) == 8
    for mine, theirs in zip(got, expected, strict=True):
        assert mine[:4] == theirs[:4]
        assert mine[4:] == pytest.approx(theirs[4:], rel=1e-9, abs=1e-12), (mine, theirs)
    assert expected[-1][4] == pytest.approx(1.0)  # 900 of 1000 errors, then 1 of 1000
