"""`runlake views --dialect spark|trino`: the script parses in the engine's SQL, calls no
DuckDB macro and no DuckDB-only form, reads every lake table at the warehouse's version, and
creates every view of the warehouse. (tests/sql/test_spark.py runs the Spark script.)"""

import re
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp
from typer.testing import CliRunner

from transforms import warehouse
from transforms.cli import app
from transforms.contracts.schemas import TABLES
from transforms.lake import Lake, lines_path
from transforms.warehouse import dialects

DUCKDB_ONLY = ("BY NAME", "EXCLUDE (", "REPLACE (", "LIST_", "LGAMMA", "QUANTILE_CONT",
               "REGEXP_FULL_MATCH", "QUERY_TABLE")


@pytest.fixture(scope="module")
def home(samples_home: Path) -> Path:
    return samples_home


def _script(home: Path, *args: str) -> str:
    result = CliRunner().invoke(app, ["views", "--home", str(home), *args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("dialect", dialects.DIALECTS)
def test_script_is_the_engines_sql(home: Path, dialect: str) -> None:
    text = _script(home, "--dialect", dialect)
    statements = [s for s in sqlglot.parse(text, read=dialect) if s is not None]
    macros = set(dialects.macros("duckdb"))
    created = set()
    for s in statements:
        called = {f.name.lower() for f in s.find_all(exp.Anonymous)}
        assert not called & macros, f"{dialect}: macros left in {s.sql(dialect)[:120]}"
        if isinstance(s, exp.Create):
            created.add(s.this.name if isinstance(s.this, exp.Table) else s.this.this.name)
    for form in DUCKDB_ONLY:
        assert form not in text.upper(), f"{dialect}: {form} left in the script"
    if dialect == "trino":
        for form in ("PRINTF", "IGNORE NULLS", "MODE("):
            assert form not in text.upper(), f"trino: {form} left in the script"
    # Every public view and lake table of the warehouse, the derived layer as tables.
    con = warehouse.connect(home)
    try:
        public = {r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        ).fetchall()}
    finally:
        con.close()
    assert "v_regressions" in public
    assert public <= created
    assert {f"int_{n}" for n in ("runs", "flags", "run_resolved", "span_runs")} <= created
    versions = Lake(home).tables_at()
    for t in TABLES:
        uri = re.escape(Lake(home).uri(lines_path(t)))
        if dialect == "spark":
            assert re.search(rf"delta\.`{uri}` VERSION AS OF {versions[t]}\b", text), t
        else:
            assert re.search(rf"table_location => '{uri}'", text), t
            assert re.search(rf"lake_{t} FOR VERSION AS OF {versions[t]}\b", text), t


def test_schema_names_where_the_objects_go(home: Path) -> None:
    text = _script(home, "--dialect", "trino", "--schema", "lakehouse.agents")
    assert "CREATE SCHEMA IF NOT EXISTS lakehouse.agents;" in text
    assert "CREATE OR REPLACE VIEW lakehouse.agents.v_regressions AS" in text
    assert "CALL lakehouse.system.register_table(schema_name => 'agents'" in text


@pytest.mark.parametrize("args", [["--dialect", "postgres"],
                                  ["--dialect", "spark", "--schema", "x; DROP TABLE runs"]])
def test_bad_options_are_one_line(home: Path, args: list[str]) -> None:
    result = CliRunner().invoke(app, ["views", "--home", str(home), *args])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
