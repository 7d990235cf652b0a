"""The warehouse on Spark: `runlake views --dialect spark` run in a local pyspark session over
the samples' lake gives the same rows as DuckDB.

The Delta jars cannot be fetched here, so each lake table is registered in Spark from its
current Delta file list (the files delta-rs names), in place of `delta.`<uri>``."""

import datetime
import math
import shutil
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from sqlglot import exp

from transforms import warehouse
from transforms.contracts.schemas import RUN_TABLES, TABLES
from transforms.lake import Lake
from transforms.warehouse import dialects, scripts

COMPARED = ("v_pass_rates", "v_token_usage", "v_runtime", "v_tool_frequency", "v_flag_summary",
            "v_regressions", "v_test_case_flips", "v_missing_test_cases", "v_truncations",
            "v_contract_violations", "v_runs", "v_crashed_runs", "v_case_history",
            "v_pass_at_k", "runs", "flags", "tool_calls", "messages",
            "llm_calls", "spans")


@pytest.fixture(scope="module")
def home(samples_home: Path) -> Path:
    return samples_home


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if shutil.which("java") is None:
        pytest.fail("the Spark tests need Java 17 or newer on PATH "
                    "(Debian: apt-get install openjdk-17-jre-headless)")
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
    versions = lake.snapshot()
    naming = scripts.Naming("spark", "runlake")
    relations = dialects.relations(con)
    spark.sql("CREATE SCHEMA IF NOT EXISTS runlake")
    sources = {}
    for t in TABLES:
        view = f"stg_{t}_lines" if t in RUN_TABLES else f"stg_{t}"
        files = lake.file_uris(t, versions[t])
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
